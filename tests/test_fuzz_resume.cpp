// Laws of `fuzz run --resume`, on whole campaigns over four gemm_simt candidates. No GPU: the worker is
// tests/fixtures/fake_gpu_worker.sh, which fails every fuzz job whose seed is a multiple of
// FAKE_FAIL_SEED_MOD (so candidates fail in some rounds and not others) and logs every job it runs.
//  - killed at any moment and resumed, a campaign writes the report of one never interrupted (same rounds,
//    seeds, cases, coverage and failures), redoes no finished verdict, and loses at most the candidates it
//    was fuzzing when killed;
//  - the budget counts the fuzzing of every call: resumed with a budget already spent, a campaign starts no
//    job and reports what it did; given more, it fuzzes until the total reaches it;
//  - a journal of another campaign (another seed) is refused, naming the journal, line and field.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fake_gpu.hpp"
#include "tests/support/spawn.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kFuzz = TUNEFUZZ_BINARY_DIR "/bin/fuzz";
constexpr int kWorkers = 2;

// Four fp32 candidates (BM x VEC), 9 cases each per round, two fuzz workers. 64-column tiles: 128 x 128 at
// MIN_BLOCKS=2 sits at its cap of 128 registers, where whether ptxas spills (and the compile stage prunes)
// turns on small changes to the kernel, and this campaign needs all four.
const std::string kConfig = std::string(tunefuzz::test::kFakeGpuSection) + R"(problems:
  - {name: even, m: 256, n: 256, k: 256, precision: fp32, output: fp32}
templates:
  - name: gemm_simt
    space:
      BM: [64, 128]
      BN: [64]
      VEC: [1, 4]
budgets:
  fuzz_cases: 9
  fuzz_workers: 2
seed: 1
output: table.yaml
)";

class FuzzResume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tunefuzz::test::install_fake_gpu("fuzz-resume", "0.3");
    std::ofstream(root_ / "simt.yaml") << kConfig;
    // The campaign every other is compared with (it also warms the kernel cache).
    ::setenv("FAKE_FAIL_SEED_MOD", "7", 1);
    ASSERT_EQ(run_to_end("reference", {"--rounds", "4", "--budget", "1h"}), 1) << "some rounds fail";
    ::unsetenv("FAKE_FAIL_SEED_MOD");
    reference_ = YAML::LoadFile(report("reference").string());
    reference_jobs_ = jobs("reference");
  }
  static void TearDownTestSuite() {
    ::unsetenv("FAKE_FAIL_SEED_MOD");
    ::unsetenv("FAKE_JOB_LOG");
    tunefuzz::test::remove_fake_gpu(root_);
  }

  static fs::path report(const std::string& name) { return root_ / name / "report.yaml"; }
  static fs::path journal(const std::string& name) { return root_ / name / "report.journal"; }

  /// Starts `fuzz run` of the config into folder `name`, with `extra` flags; every job it runs is logged to
  /// name/jobs.log.
  static pid_t start(const std::string& name, std::vector<std::string> extra) {
    fs::create_directories(root_ / name);
    ::setenv("FAKE_JOB_LOG", (root_ / name / "jobs.log").c_str(), 1);
    std::vector<std::string> args = {kFuzz, "run", (root_ / "simt.yaml").string(), "--work-dir",
                                     (root_ / name).string(), "-o", report(name).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return tunefuzz::test::spawn_logged(args, root_ / name / "fuzz.log");
  }

  static int wait_for(pid_t pid) { return tunefuzz::test::wait_for(pid); }

  static int run_to_end(const std::string& name, const std::vector<std::string>& extra) {
    return wait_for(start(name, extra));
  }

  static std::vector<std::string> lines(const fs::path& file) {
    std::vector<std::string> out;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  static int64_t jobs(const std::string& name) {
    return static_cast<int64_t>(lines(root_ / name / "jobs.log").size());
  }

  /// How many `fuzzed` verdicts the journal holds for each (candidate, key).
  static std::map<std::string, int> verdicts(const std::string& name) {
    std::map<std::string, int> count;
    for (const std::string& line : lines(journal(name))) {
      try {
        const YAML::Node e = YAML::Load(line);
        if (e["event"].as<std::string>() == "fuzzed")
          ++count[e["id"].as<std::string>() + " " + e["key"].as<std::string>()];
      } catch (const YAML::Exception&) {
        ++count["unreadable line"];
      }
    }
    return count;
  }

  /// Kills the campaign once its journal holds `verdicts` verdicts (a moment defined by its work, not by
  /// the clock).
  static void kill_after_verdicts(pid_t pid, int count) {
    const fs::path file = journal("killed-" + std::to_string(count));
    const auto seen = [&] {
      int n = 0;
      for (const std::string& line : lines(file)) n += line.find("\"event\": \"fuzzed\"") != std::string::npos;
      return n;
    };
    for (int polls = 0; polls < 30000 && seen() < count; ++polls)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill(pid, SIGKILL);
    wait_for(pid);
  }

  /// The report without what differs between calls of one campaign: the date, the command, the times and
  /// calls, and the folder reproducers were written to.
  static std::string comparable(const YAML::Node& original) {
    YAML::Node report = YAML::Clone(original);
    for (const char* volatile_field :
         {"date", "command", "seconds", "compile_seconds", "calls", "call_seconds", "throughput"})
      report.remove(volatile_field);
    for (YAML::Node failure : report["failures"])
      failure["reproducer"] = fs::path(failure["reproducer"].as<std::string>()).filename().string();
    return YAML::Dump(report);
  }

  static inline fs::path root_;
  static inline YAML::Node reference_;
  static inline int64_t reference_jobs_ = 0;
};

TEST_F(FuzzResume, TheReferenceFailsSomeCandidatesInLaterRoundsAndKeepsOthers) {
  // Otherwise the laws below would not be tested across rounds: failures leave later rounds, and at least
  // one candidate goes through all four.
  EXPECT_EQ(reference_["rounds"].as<int>(), 4);
  ASSERT_GE(reference_["failures"].size(), 1u);
  EXPECT_LT(reference_["failures"].size(), 4u);
  EXPECT_EQ(reference_["calls"].as<int>(), 1);
  int64_t rounds_fuzzed = 0;  // verdicts in the journal: one per candidate and round it was in
  for (const auto& [key, n] : verdicts("reference")) rounds_fuzzed += n;
  EXPECT_GT(rounds_fuzzed, 4) << "candidates went on to later rounds";
  EXPECT_LT(rounds_fuzzed, 16) << "failed candidates left the later rounds";
}

TEST_F(FuzzResume, KilledAtAnyMomentAndResumedWritesTheUninterruptedReport) {
  ::setenv("FAKE_FAIL_SEED_MOD", "7", 1);
  // The last kill one verdict before the end: how many there are turns on the candidates' ids (the fake
  // worker fails jobs by seed).
  int64_t total = 0;
  for (const auto& [key, n] : verdicts("reference")) total += n;
  ASSERT_GT(total, 4);
  for (const int after : {1, 3, 6, static_cast<int>(total) - 1}) {
    SCOPED_TRACE("killed after " + std::to_string(after) + " verdicts");
    const std::string name = "killed-" + std::to_string(after);
    kill_after_verdicts(start(name, {"--rounds", "4", "--budget", "1h"}), after);
    ASSERT_TRUE(fs::exists(journal(name)));
    ASSERT_FALSE(fs::exists(report(name))) << "the kill came after the campaign had ended";
    const int64_t before = jobs(name);
    ASSERT_EQ(run_to_end(name, {"--rounds", "4", "--budget", "1h", "--resume"}), 1);
    const YAML::Node resumed = YAML::LoadFile(report(name).string());
    EXPECT_EQ(comparable(resumed), comparable(reference_));
    // Two calls: the killed one counted until its last verdict, then the one that ended by itself.
    ASSERT_EQ(resumed["calls"].as<int>(), 2);
    EXPECT_EQ(resumed["call_seconds"][0]["ended"].as<std::string>(), "killed");
    EXPECT_GT(resumed["call_seconds"][0]["seconds"].as<double>(), 0.0);
    EXPECT_EQ(resumed["call_seconds"][1]["ended"].as<std::string>(), "by itself");
    // No verdict was reached twice; the work lost is at most the candidates being fuzzed at the kill (each a
    // job on its image and one on its perturbed twin).
    for (const auto& [key, n] : verdicts(name)) EXPECT_EQ(n, 1) << key;
    EXPECT_GT(before, 0);
    EXPECT_LE(jobs(name), reference_jobs_ + 2 * kWorkers);
    EXPECT_GE(jobs(name), reference_jobs_);
  }
  ::unsetenv("FAKE_FAIL_SEED_MOD");
}

TEST_F(FuzzResume, TheBudgetCountsTheFuzzingOfEveryCall) {
  ASSERT_EQ(run_to_end("budget", {"--budget", "2s"}), 0);
  const YAML::Node first = YAML::LoadFile(report("budget").string());
  ASSERT_GE(first["rounds"].as<int>(), 1);
  ASSERT_GE(first["seconds"].as<int>(), 2) << "with candidates left and no round limit, only the budget ends it";
  const int64_t jobs_first = jobs("budget");

  // The same budget again: spent already, so no job starts, and the report is the first call's.
  ASSERT_EQ(run_to_end("budget", {"--budget", "2s", "--resume"}), 0);
  const YAML::Node second = YAML::LoadFile(report("budget").string());
  EXPECT_EQ(jobs("budget"), jobs_first);
  EXPECT_EQ(second["calls"].as<int>(), 2);
  EXPECT_EQ(comparable(second), comparable(first));

  // Twice the budget: the campaign goes on until the total reaches it.
  ASSERT_EQ(run_to_end("budget", {"--budget", "4s", "--resume"}), 0);
  const YAML::Node third = YAML::LoadFile(report("budget").string());
  EXPECT_GT(jobs("budget"), jobs_first);
  EXPECT_EQ(third["calls"].as<int>(), 3);
  EXPECT_GE(third["seconds"].as<int>(), 4);
  EXPECT_GT(third["cases"].as<int64_t>(), first["cases"].as<int64_t>());
  EXPECT_GE(third["rounds"].as<int>(), first["rounds"].as<int>());
}

// Law: the report says how fast one worker fuzzes plain images and perturbed twins, each from its own jobs'
// wall time: the fake worker sleeps FAKE_STEP_S (0.3 s) per plain job and 2 s per twin's, so each kind's
// worker seconds are at least its jobs' sleep (a bound a loaded machine cannot break), and the twins' cannot
// hold the plain jobs' time. Each kind's cases are the round's: 4 candidates x (9 - 3) plain, x 3 perturbed.
TEST_F(FuzzResume, TheReportTimesPlainAndPerturbedCasesApart) {
  ::setenv("FAKE_PERTURBED_STEP_S", "2", 1);
  const int code = run_to_end("throughput", {"--rounds", "1", "--budget", "1h"});
  ::unsetenv("FAKE_PERTURBED_STEP_S");
  ASSERT_EQ(code, 0);
  const YAML::Node t = YAML::LoadFile(report("throughput").string())["throughput"];
  ASSERT_TRUE(t) << "the report has no throughput";
  EXPECT_EQ(t["plain"]["cases"].as<int64_t>(), 4 * 6);
  EXPECT_EQ(t["perturbed"]["cases"].as<int64_t>(), 4 * 3);
  EXPECT_GE(t["plain"]["worker_seconds"].as<double>(), 4 * 0.3);
  EXPECT_GE(t["perturbed"]["worker_seconds"].as<double>(), 4 * 2.0);
  // The rate is the cases over the unrounded seconds, rounded to 0.01; the report rounds the seconds to 0.1.
  const double seconds = t["perturbed"]["worker_seconds"].as<double>();
  const double rate = t["perturbed"]["cases_per_worker_second"].as<double>();
  EXPECT_GE(rate, 12 / (seconds + 0.05) - 0.005) << seconds;
  EXPECT_LE(rate, 12 / (seconds - 0.05) + 0.005) << seconds;
  const std::string printed = [] {
    std::ifstream in(root_ / "throughput" / "fuzz.log");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  EXPECT_NE(printed.find("cases per second of one worker:"), std::string::npos) << printed;
  // Where the worker seconds went: the phases each job reported (the fake says 0.125 s making cases and
  // 0.0625 s in kernels), summed over the 8 jobs, and the rest of the jobs' time as `other`.
  const YAML::Node phases = t["phase_seconds"];
  ASSERT_TRUE(phases) << "the report does not say where the worker seconds went";
  EXPECT_DOUBLE_EQ(phases["make"].as<double>(), 1.0);
  EXPECT_DOUBLE_EQ(phases["kernel"].as<double>(), 0.5);
  EXPECT_NEAR(phases["other"].as<double>(),
              t["plain"]["worker_seconds"].as<double>() + seconds - 1.5, 0.15);
}

TEST_F(FuzzResume, AJournalOfAnotherCampaignIsRefused) {
  ASSERT_EQ(run_to_end("other-seed", {"--rounds", "1"}), 0);
  const std::string journal_text = [&] {
    std::ifstream in(journal("other-seed"));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  EXPECT_EQ(run_to_end("other-seed", {"--rounds", "2", "--seed", "5", "--resume"}), 2);
  std::ifstream log(root_ / "other-seed" / "fuzz.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(journal("other-seed").string() + ":2: seed: --resume"), std::string::npos) << text;
  std::ifstream after(journal("other-seed"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(after), std::istreambuf_iterator<char>()), journal_text)
      << "a refused resume leaves the journal as it was";
}

}  // namespace
