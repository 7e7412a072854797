// Laws of kill-and-resume, on whole `tune run` campaigns of configs/smoke.yaml. No GPU: the worker is
// tests/fixtures/fake_gpu_worker.sh, which answers probe, fuzz and time jobs deterministically (every
// candidate passes; timings are a function of the candidate id), so two campaigns give equal tables.
//  - killed with SIGKILL at any moment and resumed (retrying what it died on), a campaign ends with the same
//    table as one never interrupted, and no finished step is done twice;
//  - a kill from outside proves nothing against the candidates that were running: resumed (without
//    --retry-quarantined), they run again and the table is the uninterrupted one; only candidates running
//    when the campaign died twice in a row are quarantined: reported, not fuzzed, not timed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backend/elf_image.hpp"
#include "runtime/templates/gemm_wgmma.hpp"
#include "tests/support/fake_gpu.hpp"
#include "tests/support/spawn.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kTune = TUNEFUZZ_BINARY_DIR "/bin/tune";
const std::string kFuzz = TUNEFUZZ_BINARY_DIR "/bin/fuzz";
const std::string kConfig = TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml";

class Resume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tunefuzz::test::install_fake_gpu("resume", "0.3");
    // Warm the kernel cache once, so every campaign below spends its time in the (fake) GPU stages.
    ASSERT_EQ(wait_for(start({"compile", kConfig})), 0);
    ASSERT_EQ(wait_for(start({"run", kConfig, "-o", (root_ / "reference" / "smoke.yaml").string()})), 0);
    reference_ = problems(root_ / "reference" / "smoke.yaml");
  }
  static void TearDownTestSuite() { tunefuzz::test::remove_fake_gpu(root_); }

  // A campaign here is about its journal: the verdict store, which would answer for steps an earlier
  // campaign finished, is left out (tests/test_verdicts.cpp tests it).
  static pid_t start(std::vector<std::string> args, const std::string& binary = kTune) {
    if (binary == kTune && args.front() == "run") args.push_back("--no-store");
    args.insert(args.begin(), binary);
    return tunefuzz::test::spawn_logged(args, root_ / "tune.log");
  }

  static int wait_for(pid_t pid) { return tunefuzz::test::wait_for(pid); }

  static void kill_after(pid_t pid, double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    kill(pid, SIGKILL);
    wait_for(pid);
  }

  /// The rows of a table (everything but the provenance, which names the date and the command).
  static std::string problems(const fs::path& table) {
    return YAML::Dump(YAML::LoadFile(table.string())["problems"]);
  }

  /// How many times each (event, key) pair occurs in a journal.
  static std::map<std::string, int> events(const fs::path& journal) {
    std::map<std::string, int> count;
    std::ifstream in(journal);
    std::string line;
    while (std::getline(in, line)) {
      try {
        const YAML::Node e = YAML::Load(line);
        const std::string key = e["id"]        ? e["id"].as<std::string>()
                                : e["problem"] ? e["problem"].as<std::string>()
                                               : "";
        ++count[e["event"].as<std::string>() + " " + key];
      } catch (const YAML::Exception&) {
        ++count["unreadable line"];
      }
    }
    return count;
  }

  static inline fs::path root_;
  static inline std::string reference_;
};

TEST_F(Resume, KilledAtAnyMomentAndResumedEndsWithTheUninterruptedTable) {
  ASSERT_FALSE(reference_.empty());
  for (const double delay : {0.2, 0.6, 1.0, 1.5, 2.0, 2.6}) {
    SCOPED_TRACE("killed after " + std::to_string(delay) + " s");
    const fs::path table = root_ / ("killed-" + std::to_string(delay)) / "smoke.yaml";
    kill_after(start({"run", kConfig, "-o", table.string()}), delay);
    // The kill may land before the journal exists (compile, probe): then there is nothing to resume.
    const fs::path journal = fs::path(table).replace_extension(".journal");
    const std::vector<std::string> resume =
        fs::exists(journal) ? std::vector<std::string>{"run",          kConfig,    "-o",
                                                       table.string(), "--resume", "--retry-quarantined"}
                            : std::vector<std::string>{"run", kConfig, "-o", table.string()};
    ASSERT_EQ(wait_for(start(resume)), 0);
    EXPECT_EQ(problems(table), reference_);
    // No finished step was done twice: one verdict per candidate, one timing per problem.
    for (const auto& [event, count] : events(journal)) {
      if (event.starts_with("fuzzed ") || event.starts_with("timed ")) {
        EXPECT_EQ(count, 1) << event;
      }
    }
  }
}

// Each winner of a campaign's table records the code digest of the image it was fuzzed and timed as: the
// digest of one of the kernel cache's images (tune check compares it with the tree's when a template's
// source changes later).
TEST_F(Resume, TheTableRecordsEachWinnersCodeDigest) {
  std::set<std::string> cached;
  for (const auto& entry : fs::directory_iterator(root_ / "cache"))
    if (entry.path().extension() == ".cubin") {
      std::ifstream in(entry.path(), std::ios::binary);
      cached.insert(tunefuzz::code_sha256(std::string(std::istreambuf_iterator<char>(in), {})));
    }
  int winners = 0;
  for (const auto& row : YAML::LoadFile((root_ / "reference" / "smoke.yaml").string())["problems"]) {
    if (!row["winner"].IsMap()) continue;
    ++winners;
    ASSERT_TRUE(row["winner"]["code_sha256"]) << row["name"].as<std::string>();
    EXPECT_TRUE(cached.count(row["winner"]["code_sha256"].as<std::string>()))
        << row["name"].as<std::string>();
  }
  EXPECT_GT(winners, 0);
}

// fuzz run's budget bounds a round as well: once it is spent no candidate's job starts, so a round of slow
// jobs ends with the jobs that were running instead of running to its end. Less than one round is empty
// work: the run fails (exit 1) and its report says so.
TEST_F(Resume, FuzzRunStartsNoJobOnceItsBudgetIsSpent) {
  std::ifstream in(kConfig);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("fuzz_workers: 4");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 15, "fuzz_workers: 1");  // one job at a time: five 6 s jobs would take 30 s
  const fs::path config = root_ / "one_worker.yaml";
  std::ofstream(config) << text;
  ::setenv("FAKE_STEP_S", "6", 1);
  const int code = wait_for(start({"run", config.string(), "--budget", "5s", "--work-dir",
                                   (root_ / "fuzz-run").string(), "-o", (root_ / "fuzz-run.yaml").string()},
                                  kFuzz));
  ::setenv("FAKE_STEP_S", "0.3", 1);
  ASSERT_EQ(code, 1);
  const YAML::Node report = YAML::LoadFile((root_ / "fuzz-run.yaml").string());
  EXPECT_EQ(report["rounds"].as<int>(), 1);
  EXPECT_EQ(report["last_round_not_started"].as<int>(), 4) << "one job started within the budget";
  EXPECT_NE(report["empty_work"].as<std::string>("").find("fewer than one round"), std::string::npos);
}

// Killed once 0.5 s into fuzzing, a campaign once quarantined every candidate that was running and every row
// of its table ended "(none)". A kill of the campaign says nothing about them: they run again.
TEST_F(Resume, TheCandidatesRunningWhenItWasKilledRunAgain) {
  const fs::path table = root_ / "killed-once" / "smoke.yaml";
  ::setenv("FAKE_STEP_S", "3", 1);  // every fuzz job is still running when the kill comes
  kill_after(start({"run", kConfig, "-o", table.string()}), 1.5);
  ::setenv("FAKE_STEP_S", "0.3", 1);
  const fs::path journal = fs::path(table).replace_extension(".journal");
  ASSERT_TRUE(fs::exists(journal));
  ASSERT_EQ(wait_for(start({"run", kConfig, "-o", table.string(), "--resume"})), 0);
  const YAML::Node summary = YAML::LoadFile(fs::path(table).replace_extension(".stages.yaml").string());
  EXPECT_EQ(summary["fuzz"]["quarantined"].as<int64_t>(0), 0) << YAML::Dump(summary["fuzz"]);
  EXPECT_EQ(problems(table), reference_);
  for (const auto& [event, count] : events(journal)) EXPECT_FALSE(event.starts_with("quarantined")) << event;
}

// A candidate the campaign died on twice in a row may be what takes it down: it is quarantined, and runs
// again only when asked.
TEST_F(Resume, TheCandidatesRunningWhenItDiedTwiceAreQuarantinedUnlessRetried) {
  // As many fuzz workers as the smoke config compiles candidates, so that all of them are running when
  // each kill comes.
  std::ifstream in(kConfig);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("fuzz_workers: 4");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 15, "fuzz_workers: 8");
  fs::create_directories(root_ / "quarantine");
  const std::string config = (root_ / "quarantine" / "every_worker.yaml").string();
  std::ofstream(config) << text;
  const fs::path table = root_ / "quarantine" / "smoke.yaml";
  ::setenv("FAKE_STEP_S", "3", 1);  // every fuzz job is still running when each kill comes
  kill_after(start({"run", config, "-o", table.string()}), 1.5);
  kill_after(start({"run", config, "-o", table.string(), "--resume"}), 1.5);
  ::setenv("FAKE_STEP_S", "0.3", 1);
  // With its candidates quarantined a problem has no winner: no row, and the campaign fails.
  ASSERT_EQ(wait_for(start({"run", config, "-o", table.string(), "--resume"})), 1);
  const YAML::Node summary = YAML::LoadFile(fs::path(table).replace_extension(".stages.yaml").string());
  EXPECT_GT(summary["fuzz"]["quarantined"].as<int64_t>(), 0) << YAML::Dump(summary["fuzz"]);
  EXPECT_EQ(summary["fuzz"]["quarantined"].as<int64_t>(),
            static_cast<int64_t>(summary["fuzz"]["quarantined_candidates"].size()));
  for (const auto& id : summary["fuzz"]["quarantined_candidates"])
    EXPECT_EQ(events(fs::path(table).replace_extension(".journal"))["fuzzed " + id.as<std::string>()], 0)
        << id.as<std::string>() << " was fuzzed although quarantined";
  // Quarantined candidates do not win anything.
  for (const auto& row : YAML::LoadFile(table.string())["problems"]) {
    if (!row["winner"].IsMap()) continue;
    for (const auto& id : summary["fuzz"]["quarantined_candidates"]) {
      EXPECT_NE(row["winner"]["id"].as<std::string>(), id.as<std::string>());
    }
  }
  // Asked to, a later resume runs them and the table is the uninterrupted one.
  ASSERT_EQ(wait_for(start({"run", config, "-o", table.string(), "--resume", "--retry-quarantined"})), 0);
  EXPECT_EQ(problems(table), reference_);
}

// A config of gemm_wgmma at one 128x128 point without clusters, for `fuzz mutants` (the smoke config's own
// first template has other bugs).
fs::path no_cluster_config(const fs::path& root) {
  std::string text;
  {
    std::ifstream in(kConfig);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t from = text.find("templates:"), to = text.find("budgets:");
  text.replace(
      from, to - from,
      "templates:\n  - name: gemm_wgmma\n    space: {BM: [128], BN: [128], STAGES: [4], CLUSTER_M: [1], "
      "CLUSTER_N: [1]}\n\n");
  const fs::path config = root / "no-cluster.yaml";
  std::ofstream(config) << text;
  return config;
}

// A mutants report's rows without the reproducers' paths (which name the run's work folder).
std::string mutant_rows(const fs::path& report) {
  YAML::Node rows = YAML::LoadFile(report.string())["mutants"];
  for (auto row : rows) row.remove("reproducer");
  return YAML::Dump(rows);
}

// `fuzz mutants` journals each mutant's verdict as it comes (REPORT.journal). Killed at any moment and
// resumed with --resume, a run reports what one never interrupted reports, and fuzzes again only the mutants
// it had no verdict for; resumed once more after it finished, it fuzzes nothing. A journal of another run
// (other cases) is refused, naming the journal, its line and the field.
TEST_F(Resume, AKilledMutantsRunResumesFromItsJournal) {
  const fs::path config = no_cluster_config(root_);
  const auto mutants = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"mutants",    config.string(),
                                     "--template", "gemm_wgmma",
                                     "--cases",    "2",
                                     "--sanitize", "none",
                                     "--work-dir", (root_ / ("work-" + name)).string(),
                                     "-o",         (root_ / name / "mutants.yaml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return start(args, kFuzz);
  };
  const auto jobs = [&](const fs::path& log) {
    std::ifstream in(log);
    int count = 0;
    std::string line;
    while (std::getline(in, line)) count += line.starts_with("fuzz ");
    return count;
  };
  ::setenv("FAKE_FAIL_ABOVE", "mutant=7:0", 1);  // one mutant killed, the others surviving the fake cases
  ::setenv("FAKE_JOB_LOG", (root_ / "mutant-jobs-reference.log").c_str(), 1);
  ASSERT_EQ(wait_for(mutants("reference", {})), 1);
  const std::string reference = mutant_rows(root_ / "reference" / "mutants.yaml");
  const int all_jobs = jobs(root_ / "mutant-jobs-reference.log");
  ASSERT_GT(all_jobs, 4);

  // Killed once a few verdicts are in the journal, then resumed.
  const fs::path report = root_ / "killed" / "mutants.yaml";
  const fs::path journal = fs::path(report).replace_extension(".journal");
  ::setenv("FAKE_STEP_S", "0.5", 1);
  const pid_t run = mutants("killed", {});
  int before = 0;
  for (int wait = 0; wait < 600 && before < 2; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto seen = events(journal);
    before = 0;
    for (const auto& [event, count] : seen) before += event.starts_with("fuzzed ") ? count : 0;
  }
  kill(run, SIGKILL);
  wait_for(run);
  ::unsetenv("FAKE_STEP_S");
  ASSERT_GE(before, 2) << "the run journals its verdicts as they come";
  ::setenv("FAKE_JOB_LOG", (root_ / "mutant-jobs-resumed.log").c_str(), 1);
  ASSERT_EQ(wait_for(mutants("killed", {"--resume"})), 1);
  EXPECT_EQ(mutant_rows(report), reference);
  EXPECT_LT(jobs(root_ / "mutant-jobs-resumed.log"), all_jobs) << "the verdicts before the kill are kept";
  for (const auto& [event, count] : events(journal)) {
    if (event.starts_with("fuzzed ")) {
      EXPECT_EQ(count, 1) << event << " fuzzed twice";
    }
  }

  // Finished: resumed again, nothing is fuzzed and the report is the same.
  ::setenv("FAKE_JOB_LOG", (root_ / "mutant-jobs-again.log").c_str(), 1);
  ASSERT_EQ(wait_for(mutants("killed", {"--resume"})), 1);
  EXPECT_EQ(jobs(root_ / "mutant-jobs-again.log"), 0);
  EXPECT_EQ(mutant_rows(report), reference);
  ::unsetenv("FAKE_JOB_LOG");
  ::unsetenv("FAKE_FAIL_ABOVE");

  // Another budget is another run: refused, naming the journal's field.
  const fs::path log = root_ / "mutants-refused.log";
  const pid_t refused = tunefuzz::test::spawn_logged(
      {kFuzz, "mutants", config.string(), "--template", "gemm_wgmma", "--cases", "3", "--sanitize", "none",
       "--work-dir", (root_ / "work-killed").string(), "-o", report.string(), "--resume"},
      log);
  EXPECT_EQ(wait_for(refused), 2);
  std::ifstream in(log);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find(journal.filename().string()), std::string::npos) << said;
  EXPECT_NE(said.find("cases"), std::string::npos) << said;
}

// fuzz mutants injects each bug into one base point. A bug in code the base point does not compile (the
// cluster bugs of gemm_wgmma at a point without clusters, its tf32 bugs at a bf16 point) leaves the image as
// it was: no case could kill it, so it is reported as not fuzzed, saying why, instead of as a survivor of the
// cases. (The fake worker passes every case, so the mutants that do change the code survive here.)
TEST_F(Resume, AMutantThatLeavesTheCodeAsItWasIsNotFuzzed) {
  const fs::path config = no_cluster_config(root_);
  const fs::path report_path = root_ / "mutants.yaml";
  // The fake worker passes every case but those of mutant 7 (no_acc_init), which it fails after two.
  const std::string killed = "no_acc_init";
  ::setenv("FAKE_FAIL_ABOVE", "mutant=7:0", 1);
  const int code =
      wait_for(start({"mutants", config.string(), "--template", "gemm_wgmma", "--cases", "2", "--sanitize",
                      "none", "--work-dir", (root_ / "mutants").string(), "-o", report_path.string()},
                     kFuzz));
  ::unsetenv("FAKE_FAIL_ABOVE");
  EXPECT_EQ(code, 1) << "the fake worker passes the other mutants' cases: they survive";
  const YAML::Node report = YAML::LoadFile(report_path.string());
  EXPECT_NE(report["base_candidate"].as<std::string>().find("CLUSTER_M=1,CLUSTER_N=1"), std::string::npos);
  // Bugs in code this bf16 point without clusters does not compile: the clusters' hand-offs, tf32's rewrite
  // of M/N-major tiles, and the transposed store of a point that swaps its operands.
  const std::vector<std::string> not_compiled = {
      "multicast_self",     "release_local",      "no_exit_sync",    "transpose_early_write",
      "transpose_unsynced", "swap_steps_by_rows", "swap_last_column"};
  ASSERT_EQ(report["mutants"].size(), tunefuzz::gemm_wgmma_mutant_names().size() - 1);
  int row_index = 0;
  for (const auto& row : report["mutants"]) {
    const std::string name = row["mutant"].as<std::string>();
    EXPECT_EQ(name, tunefuzz::gemm_wgmma_mutant_names()[static_cast<size_t>(++row_index)]) << "in code order";
    const bool untouched = std::find(not_compiled.begin(), not_compiled.end(), name) != not_compiled.end();
    const std::string note = row["note"] ? row["note"].as<std::string>() : "";
    EXPECT_EQ(note.find("compiles to the unmutated candidate's code") != std::string::npos, untouched)
        << name << ": " << note;
    EXPECT_EQ(row["killed"].as<bool>(), name == killed) << name;
    if (name != killed) continue;
    // The kill as the fake worker reported it: the class, the case (shrunk: one 1x8x8 case, within two
    // tiles), and how many cases it took.
    EXPECT_EQ(row["caught_by"].as<std::string>(), "fuzz cases");
    EXPECT_EQ(row["class"].as<std::string>(), "incorrect/scattered");
    EXPECT_EQ(row["cases_until_detection"].as<int>(), 2);
    EXPECT_EQ(row["shrunk_case"]["m"].as<int>(), 1);
    EXPECT_TRUE(row["shrunk_within_two_tiles"].as<bool>());
    EXPECT_TRUE(row["reproducer"]) << "a kill leaves a reproducer";
  }
}

}  // namespace
