// Laws of the verdict store (tuner/store/verdict_store.hpp) and of campaigns that consult it:
//  - a key changes with every field that decides a verdict and with nothing else;
//  - a damaged entry (a byte changed, cut short, another key's, a directory in its place) is reported and
//    treated as absent, and storing the verdict again repairs it;
//  - whole `tune run` campaigns on the fake GPU worker (tests/fixtures/fake_gpu_worker.sh, which logs every
//    job): an identical re-run does no fuzz or time job, a problem added costs only its timing, a new driver
//    redoes everything, --no-store bypasses the store, two campaigns at once on one store do each job once;
//  - a journal resumes after a problem was added to its config, timing only that problem;
//  - one candidate's screen on a problem is kept on its own, so a changed candidate set screens only the new
//    images, and the finalists are still timed in full, side by side; cuBLAS's check on a problem's inputs is
//    kept too, so it is timed again but not checked again.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz/generators.hpp"
#include "fuzz/matrix.hpp"
#include "tests/support/fake_gpu.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/worker/protocol.hpp"

namespace {

using namespace tunefuzz;
namespace fs = std::filesystem;

const std::string kTune = TUNEFUZZ_BINARY_DIR "/bin/tune";
const std::string kConfig = TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml";

class VerdictKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tunefuzz-keys-" + std::to_string(getpid()));
    fs::create_directories(root_);
    compiled_.candidate = parse_candidate_id("gemm_mma/bf16-bf16/BM=128,BN=128,BK=32");
    compiled_.image = image("image-a", "cubin A");
    compiled_.perturbed_image = image("twin-a", "cubin A perturbed");
    fuzz_ = FuzzOptions{root_ / "work", 100, 7, 4, 120};
    fuzz_.store = {nullptr, "NVIDIA H200", "580.1"};
    time_ = TimeOptions{root_ / "work"};
    time_.store = fuzz_.store;
    problem_.name = "square";
    problem_.m = problem_.n = problem_.k = 1024;
    fuzzed_.candidate = compiled_.candidate;
    fuzzed_.image = compiled_.image;
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path image(const std::string& name, const std::string& bytes) {
    std::ofstream(root_ / name) << bytes;
    return root_ / name;
  }
  std::string fuzz_digest() const { return verdict_digest(VerdictKind::fuzz, fuzz_verdict_key(compiled_, fuzz_)); }
  std::string time_digest() const {
    return verdict_digest(VerdictKind::timing, timing_key(problem_, {&fuzzed_}, time_));
  }

  fs::path root_;
  CompiledCandidate compiled_;
  FuzzedCandidate fuzzed_;
  FuzzOptions fuzz_;
  TimeOptions time_;
  Problem problem_;
};

TEST_F(VerdictKeys, EveryFieldThatDecidesAFuzzVerdictChangesItsKeyAndNothingElseDoes) {
  const std::string base = fuzz_digest();
  const auto changes = [&](const auto& change) {
    const CompiledCandidate compiled = compiled_;
    const FuzzOptions options = fuzz_;
    change();
    const std::string changed = fuzz_digest();
    compiled_ = compiled;
    fuzz_ = options;
    return changed != base;
  };
  EXPECT_TRUE(changes([&] { compiled_.candidate.point = parse_candidate_id("gemm_mma/bf16-bf16/BM=64").point; }));
  EXPECT_TRUE(changes([&] { compiled_.image = image("image-b", "cubin B"); }));
  EXPECT_TRUE(changes([&] { compiled_.perturbed_image = image("twin-b", "cubin B perturbed"); }));
  EXPECT_TRUE(changes([&] { compiled_.perturbed_image.clear(); }));
  EXPECT_TRUE(changes([&] { fuzz_.cases = 200; }));
  EXPECT_TRUE(changes([&] { fuzz_.seed = 8; }));
  EXPECT_TRUE(changes([&] { fuzz_.huge_weight = 1; }));
  EXPECT_TRUE(changes([&] { fuzz_.kernel_deadline_s = 60; }));
  EXPECT_TRUE(changes([&] { fuzz_.sanitizer = {"compute-sanitizer", "--tool", "racecheck"}; }));
  EXPECT_TRUE(changes([&] { fuzz_.store.card = "NVIDIA H100 80GB HBM3"; }));
  EXPECT_TRUE(changes([&] { fuzz_.store.driver = "580.2"; }));
  // What does not decide the verdict: where the work goes, how many run at once, the watchdog, the journal,
  // the image's path (the same bytes elsewhere), the compile time and the cache key.
  EXPECT_FALSE(changes([&] { fuzz_.work_directory = root_ / "elsewhere"; }));
  EXPECT_FALSE(changes([&] { fuzz_.workers = 16; }));
  EXPECT_FALSE(changes([&] { fuzz_.timeout_s = 600; }));
  EXPECT_FALSE(changes([&] { fuzz_.retry_quarantined = true; }));
  EXPECT_FALSE(changes([&] { compiled_.image = image("copy-of-a", "cubin A"); }));
  EXPECT_FALSE(changes([&] { compiled_.seconds = 3; }));
  EXPECT_FALSE(changes([&] { compiled_.key = "another cache key"; }));
}

TEST_F(VerdictKeys, EveryFieldThatDecidesATimingChangesItsKeyAndNothingElseDoes) {
  const std::string base = time_digest();
  const auto changes = [&](const auto& change) {
    const Problem problem = problem_;
    const TimeOptions options = time_;
    const FuzzedCandidate fuzzed = fuzzed_;
    change();
    const std::string changed = time_digest();
    problem_ = problem;
    time_ = options;
    fuzzed_ = fuzzed;
    return changed != base;
  };
  EXPECT_TRUE(changes([&] { problem_.m = 1025; }));
  EXPECT_TRUE(changes([&] { problem_.layout.a = Order::col; }));
  EXPECT_TRUE(changes([&] { problem_.output = Precision::fp32; }));
  EXPECT_TRUE(changes([&] { problem_.beta = 1; }));
  EXPECT_TRUE(changes([&] { fuzzed_.image = image("image-b", "cubin B"); }));
  EXPECT_TRUE(changes([&] { fuzzed_.candidate = parse_candidate_id("gemm_mma/bf16-bf16/BM=64"); }));
  EXPECT_TRUE(changes([&] { time_.warmup = 6; }));
  EXPECT_TRUE(changes([&] { time_.repeats = 31; }));
  EXPECT_TRUE(changes([&] { time_.screen_repeats = 4; }));
  EXPECT_TRUE(changes([&] { time_.finalists = 9; }));
  EXPECT_TRUE(changes([&] { time_.strategy = StrategyKind::halving; }));
  EXPECT_TRUE(changes([&] { time_.seed = 1; }));
  EXPECT_TRUE(changes([&] { time_.store.card = "NVIDIA H100 80GB HBM3"; }));
  EXPECT_TRUE(changes([&] { time_.store.driver = "580.2"; }));
  EXPECT_FALSE(changes([&] { problem_.name = "renamed"; }));
  EXPECT_FALSE(changes([&] { problem_.where = {"other.yaml", 3, 4, "problems"}; }));
  EXPECT_FALSE(changes([&] { time_.work_directory = root_ / "elsewhere"; }));
  EXPECT_FALSE(changes([&] { time_.timeout_s = 60; }));
  EXPECT_FALSE(changes([&] { fuzzed_.cases_run = 5; }));
}

TEST_F(VerdictKeys, EveryFieldThatDecidesCublassCheckChangesItsKeyAndNothingElseDoes) {
  const auto digest = [&] { return verdict_digest(VerdictKind::baseline, baseline_key(problem_, time_)); };
  const std::string base = digest();
  const auto changes = [&](const auto& change) {
    const Problem problem = problem_;
    const TimeOptions options = time_;
    change();
    const std::string changed = digest();
    problem_ = problem;
    time_ = options;
    return changed != base;
  };
  EXPECT_TRUE(changes([&] { problem_.k = 1025; }));
  EXPECT_TRUE(changes([&] { problem_.layout.b = Order::col; }));
  EXPECT_TRUE(changes([&] { problem_.input = Precision::fp16; }));
  EXPECT_TRUE(changes([&] { problem_.alpha = 2; }));
  EXPECT_TRUE(changes([&] { time_.seed = 1; }));
  EXPECT_TRUE(changes([&] { time_.store.card = "NVIDIA H100 80GB HBM3"; }));
  EXPECT_TRUE(changes([&] { time_.store.driver = "580.2"; }));
  // Our candidates and how they are timed do not decide it (the cuBLAS version is in the verdict itself).
  EXPECT_FALSE(changes([&] { problem_.name = "renamed"; }));
  EXPECT_FALSE(changes([&] { time_.warmup = 6; }));
  EXPECT_FALSE(changes([&] { time_.repeats = 31; }));
  EXPECT_FALSE(changes([&] { time_.finalists = 9; }));
  EXPECT_FALSE(changes([&] { time_.strategy = StrategyKind::halving; }));
  EXPECT_FALSE(changes([&] { time_.work_directory = root_ / "elsewhere"; }));
  // The same problem's timing and cuBLAS's check are different entries.
  EXPECT_NE(base, time_digest());
}

TEST_F(VerdictKeys, ScreensAndTimingsAreKeyedByTheOperandValuesAndTheWayLaunchesAreTimed) {
  // Compile-time constants, so no change above can move them: the keys must carry them, so that raising one
  // (other values for the same seed and other power drawn; another L2 flush before each timed launch) leaves
  // every stored screen and timing behind.
  const auto field = [](const VerdictKey& key, const std::string& wanted) {
    for (const auto& [name, value] : key)
      if (name == wanted) return value;
    return std::string("absent");
  };
  const std::vector<std::pair<std::string, int>> versions = {
      {"inputs_version", tunefuzz::fuzz::kUniformFillVersion}, {"timer_version", tunefuzz::kTimerVersion}};
  for (const auto& [name, version] : versions) {
    EXPECT_EQ(field(timing_key(problem_, {&fuzzed_}, time_), name), std::to_string(version)) << name;
    EXPECT_EQ(field(screen_key(problem_, fuzzed_, 3, time_), name), std::to_string(version)) << name;
  }
  // Screens taken in turns read otherwise than screens one after another under the card's power cap.
  EXPECT_EQ(field(screen_key(problem_, fuzzed_, 3, time_), "screen_version"), std::to_string(kScreenVersion));
  EXPECT_EQ(field(timing_key(problem_, {&fuzzed_}, time_), "screen_version"), "absent");
  EXPECT_EQ(field(baseline_key(problem_, time_), "inputs_version"),
            std::to_string(fuzz::kUniformFillVersion));
  EXPECT_EQ(field(baseline_key(problem_, time_), "case_generator_version"),
            std::to_string(fuzz::kCaseGeneratorVersion));
}

TEST_F(VerdictKeys, EveryFieldThatDecidesASanitizerVerdictChangesItsKeyAndNothingElseDoes) {
  std::vector<std::string> wrapper = {"compute-sanitizer", "--tool", "racecheck"};
  std::vector<fuzz::CaseRecord> cases(2);
  cases[0].m = cases[0].n = cases[0].k = 256;
  cases[1].m = 300;
  const auto digest = [&] {
    return verdict_digest(VerdictKind::sanitizer,
                          sanitizer_key(fuzzed_.candidate, fuzzed_.image, wrapper, cases, fuzz_.store));
  };
  const std::string base = digest();
  const auto changes = [&](const auto& change) {
    const auto w = wrapper;
    const auto c = cases;
    const FuzzedCandidate fuzzed = fuzzed_;
    const StoreUse store = fuzz_.store;
    change();
    const std::string changed = digest();
    wrapper = w;
    cases = c;
    fuzzed_ = fuzzed;
    fuzz_.store = store;
    return changed != base;
  };
  EXPECT_TRUE(changes([&] { fuzzed_.candidate = parse_candidate_id("gemm_mma/bf16-bf16/BM=64"); }));
  EXPECT_TRUE(changes([&] { fuzzed_.image = image("image-b", "cubin B"); }));
  EXPECT_TRUE(changes([&] { wrapper[2] = "synccheck"; }));
  EXPECT_TRUE(changes([&] { wrapper[0] = "/opt/other/compute-sanitizer"; }));
  EXPECT_TRUE(changes([&] { cases[1].k = 17; }));
  EXPECT_TRUE(changes([&] { cases.pop_back(); }));
  EXPECT_TRUE(changes([&] { fuzz_.store.card = "NVIDIA H100 80GB HBM3"; }));
  EXPECT_TRUE(changes([&] { fuzz_.store.driver = "580.2"; }));
  EXPECT_FALSE(changes([&] { fuzzed_.image = image("copy-of-a", "cubin A"); }));
  EXPECT_FALSE(changes([&] { fuzzed_.cases_run = 5; }));
}

TEST_F(VerdictKeys, ADamagedEntryIsReportedTreatedAsAbsentAndRepairedByStoringAgain) {
  const VerdictStore store(root_ / "store");
  const VerdictKey key = fuzz_verdict_key(compiled_, fuzz_);
  YAML::Node verdict;
  verdict["seed"] = 7;
  verdict["result"]["passed"] = true;
  store.store(VerdictKind::fuzz, key, verdict);
  const fs::path entry = store.entry_path(VerdictKind::fuzz, key);
  ASSERT_TRUE(store.load(VerdictKind::fuzz, key).has_value());
  std::ifstream in(entry);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto damage_of = [&](const std::string& text) {
    std::ofstream(entry, std::ios::trunc) << text;
    std::string heard;
    const auto loaded = store.load(VerdictKind::fuzz, key, [&](const std::string& why) { heard = why; });
    EXPECT_FALSE(loaded.has_value()) << text;
    return heard;
  };
  std::string flipped = good;
  flipped[flipped.find("true")] = 'T';
  EXPECT_NE(damage_of(flipped).find("checksum"), std::string::npos);
  EXPECT_NE(damage_of(good.substr(0, good.size() - 3)).find("no end line"), std::string::npos);
  EXPECT_NE(damage_of("").find("no end line"), std::string::npos);
  // Another key's entry filed under this one's name.
  const VerdictKey other = {{"candidate", "someone else"}};
  store.store(VerdictKind::fuzz, other, verdict);
  std::ifstream other_in(store.entry_path(VerdictKind::fuzz, other));
  EXPECT_NE(damage_of(std::string(std::istreambuf_iterator<char>(other_in), std::istreambuf_iterator<char>()))
                .find("another key"),
            std::string::npos);
  // A directory where the entry belongs.
  fs::remove(entry);
  fs::create_directories(entry);
  std::string heard;
  EXPECT_FALSE(store.load(VerdictKind::fuzz, key, [&](const std::string& why) { heard = why; }).has_value());
  EXPECT_NE(heard.find("damaged"), std::string::npos);
  store.store(VerdictKind::fuzz, key, verdict);
  const auto repaired = store.load(VerdictKind::fuzz, key);
  ASSERT_TRUE(repaired.has_value());
  EXPECT_TRUE((*repaired)["result"]["passed"].as<bool>());
}

// ---- whole campaigns ----

class StoreCampaigns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tunefuzz::test::install_fake_gpu("verdicts", "0.05");
    ::setenv("TUNEFUZZ_VERDICT_DIR", (root_ / "store").c_str(), 1);
    ASSERT_EQ(run({"compile", kConfig}), 0);  // a warm kernel cache: campaigns spend no time compiling
  }
  static void TearDownTestSuite() {
    ::unsetenv("TUNEFUZZ_VERDICT_DIR");
    ::unsetenv("FAKE_JOB_LOG");
    tunefuzz::test::remove_fake_gpu(root_);
  }

  static pid_t start(std::vector<std::string> args) {
    args.insert(args.begin(), kTune);
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string log = (root_ / "tune.log").string();
      if (!std::freopen(log.c_str(), "a", stdout) || !std::freopen(log.c_str(), "a", stderr)) _exit(127);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(kTune.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }
  static int wait_for(pid_t pid) {
    int status = 0;
    if (pid <= 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  static int run(const std::vector<std::string>& args) { return wait_for(start(args)); }

  /// Runs a campaign of `config` into `name`/smoke.yaml and returns the jobs it asked the worker for.
  static std::map<std::string, int> campaign(const std::string& name, const std::string& config = kConfig,
                                             std::vector<std::string> extra = {}) {
    const fs::path log = root_ / (name + ".jobs");
    ::setenv("FAKE_JOB_LOG", log.c_str(), 1);
    std::vector<std::string> args = {"run", config, "-o", table(name).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(run(args), 0) << name;
    return jobs(log);
  }
  static fs::path table(const std::string& name) { return root_ / name / "smoke.yaml"; }
  static std::map<std::string, int> jobs(const fs::path& log) {
    std::map<std::string, int> count;
    std::ifstream in(log);
    std::string kind, rest;
    while (in >> kind && std::getline(in, rest)) ++count[kind];
    return count;
  }
  /// The problems a campaign's log shows timed (a problem's timing is a time job per round of its search).
  static std::set<std::string> timed(const fs::path& log) {
    std::set<std::string> problems;
    std::ifstream in(log);
    std::string kind, problem;
    while (in >> kind && std::getline(in >> std::ws, problem))
      if (kind == "time") problems.insert(problem);
    return problems;
  }
  static fs::path log_of(const std::string& name) { return root_ / (name + ".jobs"); }
  static std::string rows(const std::string& name) {
    return YAML::Dump(YAML::LoadFile(table(name).string())["problems"]);
  }
  /// smoke.yaml with one more problem.
  static std::string config_with_one_more_problem() {
    std::ifstream in(kConfig);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string anchor = "problems:\n";
    text.insert(text.find(anchor) + anchor.size(),
                "  - {name: square_768, m: 768, n: 768, k: 768, precision: bf16}\n");
    const fs::path config = root_ / "plus_one.yaml";
    std::ofstream(config) << text;
    return config.string();
  }

  static inline fs::path root_;
};

TEST_F(StoreCampaigns, ARerunCostsOnlyWhatChanged) {
  const auto cold = campaign("cold");
  ASSERT_GT(cold.count("fuzz") ? cold.at("fuzz") : 0, 0);
  ASSERT_EQ(timed(log_of("cold")).size(), 3u);  // the three problems
  // The same campaign again: nothing to fuzz, nothing to time, the same table.
  EXPECT_TRUE(campaign("again").empty());
  EXPECT_EQ(rows("again"), rows("cold"));
  // One more problem: its timing alone.
  EXPECT_EQ(campaign("plus-one", config_with_one_more_problem()).count("fuzz"), 0u);
  EXPECT_EQ(timed(log_of("plus-one")), std::set<std::string>{"square_768"});
  // A new driver: every verdict was measured on the old one.
  ::setenv("FAKE_DRIVER", "fake-2", 1);
  EXPECT_EQ(campaign("new-driver"), cold);
  ::unsetenv("FAKE_DRIVER");
  // Bypassed: everything runs, as with an empty store.
  EXPECT_EQ(campaign("bypassed", kConfig, {"--no-store"}), cold);
}

TEST_F(StoreCampaigns, TwoCampaignsAtOnceOnOneStoreDoEachJobOnce) {
  ::setenv("TUNEFUZZ_VERDICT_DIR", (root_ / "shared-store").c_str(), 1);
  const fs::path log = root_ / "together.jobs";
  ::setenv("FAKE_JOB_LOG", log.c_str(), 1);
  ::setenv("FAKE_STEP_S", "0.3", 1);  // long enough jobs that the two campaigns overlap
  const pid_t first = start({"run", kConfig, "-o", table("first").string()});
  const pid_t second = start({"run", kConfig, "-o", table("second").string()});
  EXPECT_EQ(wait_for(first), 0);
  EXPECT_EQ(wait_for(second), 0);
  ::setenv("FAKE_STEP_S", "0.05", 1);
  ::setenv("TUNEFUZZ_VERDICT_DIR", (root_ / "store").c_str(), 1);
  EXPECT_EQ(rows("first"), rows("second"));
  const auto alone = campaign("alone", kConfig, {"--no-store"});
  EXPECT_EQ(jobs(log), alone) << "the two campaigns together did each job once";
}

// A journal resumes after a problem was added to its config (it once refused: "written for a different
// config"): only the new problem is timed, nothing is fuzzed again.
TEST_F(StoreCampaigns, AJournalResumesAfterAProblemWasAdded) {
  const std::string plus_one = config_with_one_more_problem();
  ASSERT_FALSE(campaign("resumed", kConfig, {"--no-store"}).empty());
  const fs::path smoke_table = table("resumed");
  ::setenv("FAKE_JOB_LOG", (root_ / "resumed-again.jobs").c_str(), 1);
  ASSERT_EQ(run({"run", plus_one, "-o", smoke_table.string(), "--resume", "--no-store"}), 0);
  EXPECT_EQ(jobs(root_ / "resumed-again.jobs").count("fuzz"), 0u);
  EXPECT_EQ(timed(root_ / "resumed-again.jobs"), std::set<std::string>{"square_768"});
  EXPECT_EQ(YAML::LoadFile(smoke_table.string())["problems"].size(), 4u);
}

TEST(ScreenStore, AChangedCandidateSetScreensOnlyTheNewImagesAndTimesTheFinalistsAgain) {
  const fs::path root = tunefuzz::test::install_fake_gpu("screens", "0");
  const fs::path measures = root / "measures.log";
  ::setenv("FAKE_MEASURE_LOG", measures.c_str(), 1);
  std::vector<FuzzedCandidate> fuzzed;
  for (const int bm : {64, 128, 256}) {
    FuzzedCandidate f;
    f.candidate = parse_candidate_id("gemm_mma/bf16-bf16/BM=" + std::to_string(bm) + ",BN=128,BK=32");
    f.image = root / ("image-" + std::to_string(bm));
    std::ofstream(f.image) << "cubin " << bm;
    f.passed = true;
    fuzzed.push_back(f);
  }
  Problem problem;
  problem.name = "square";
  problem.m = problem.n = problem.k = 1024;
  const VerdictStore store(root / "verdicts");
  TimeOptions options{root / "work"};
  options.store = {&store, "NVIDIA H100 80GB HBM3", "fake"};
  options.finalists = 2;
  fs::create_directories(options.work_directory);
  // What the worker measured since the last call, as "screen" / "time" lines per candidate's BM.
  const auto measured = [&] {
    std::multiset<std::string> out;
    std::ifstream in(measures);
    for (std::string kind, id; in >> kind >> id;)
      out.insert(kind == "check"
                     ? kind + " " + id
                     : kind + " " +
                           id.substr(id.find("BM=") + 3, id.find(',', id.find("BM=")) - id.find("BM=") - 3));
    fs::remove(measures);
    return out;
  };
  auto timings = time_stage({problem}, {fuzzed[0], fuzzed[1]}, options);
  ASSERT_NE(timings[0].winner(), nullptr);
  EXPECT_GT(timings[0].phase_seconds.count("dispatch"), 0u)
      << "the coordinator's round trips are accounted for";
  const std::multiset<std::string> first = measured();
  EXPECT_EQ(first.count("screen 64"), 1u);
  EXPECT_EQ(first.count("screen 128"), 1u);
  EXPECT_EQ(first.count("check cublas"), 1u) << "cuBLAS checked on the inputs once";
  timings = time_stage({problem}, {fuzzed[0], fuzzed[1]}, options);  // the same set: the whole timing is stored
  EXPECT_TRUE(measured().empty());
  // BM=128's image changes (its template was edited) and BM=256 joins: only those two are screened again.
  fuzzed[1].image = root / "image-128-rebuilt";
  std::ofstream(fuzzed[1].image) << "cubin 128 rebuilt";
  timings = time_stage({problem}, fuzzed, options);
  ASSERT_NE(timings[0].winner(), nullptr);
  const std::multiset<std::string> third = measured();
  EXPECT_EQ(third.count("screen 64"), 0u);
  EXPECT_EQ(third.count("screen 128"), 1u);
  EXPECT_EQ(third.count("screen 256"), 1u);
  EXPECT_EQ(third.count("time 64") + third.count("time 128") + third.count("time 256"), 2u)
      << "the two finalists, timed in full in this campaign";
  EXPECT_EQ(third.count("check cublas"), 0u) << "cuBLAS's check on these inputs came from the store";
  // On another card cuBLAS is checked again.
  options.store.card = "NVIDIA H200";
  timings = time_stage({problem}, fuzzed, options);
  EXPECT_EQ(measured().count("check cublas"), 1u);
  // Every candidate has its screen in the result, stored or measured.
  for (const TimedEntry& e : timings[0].entries) EXPECT_GT(e.median_ms, 0) << e.id;
  EXPECT_EQ(timings[0].entries.size(), 3u);
  ::unsetenv("FAKE_MEASURE_LOG");
  tunefuzz::test::remove_fake_gpu(root);
}

// With several time workers each problem is timed on a thread of a pool. An error there (here the journal,
// whose file became a folder, cannot be written) used to end the process through std::terminate; it is
// thrown to the caller, as on one worker, for the campaign to report.
TEST(TimeStagePool, AnErrorOnAPoolThreadIsThrownToTheCaller) {
  const fs::path root = tunefuzz::test::install_fake_gpu("time-pool", "0");
  std::vector<FuzzedCandidate> fuzzed(1);
  fuzzed[0].candidate = parse_candidate_id("gemm_mma/bf16-bf16/BM=128,BN=128,BK=32");
  fuzzed[0].image = root / "image";
  std::ofstream(fuzzed[0].image) << "cubin";
  fuzzed[0].passed = true;
  std::vector<Problem> problems(3);
  for (size_t i = 0; i < problems.size(); ++i) {
    problems[i].name = "square_" + std::to_string(i);
    problems[i].m = problems[i].n = problems[i].k = 256;
  }
  TimeOptions options{root / "work"};
  fs::create_directories(options.work_directory);
  Journal journal = Journal::create(root / "journal", "config");
  fs::remove(root / "journal");
  fs::create_directory(root / "journal");
  options.journal = &journal;
  options.workers_per_gpu = 2;
  EXPECT_THROW(time_stage(problems, fuzzed, options), Error);
  tunefuzz::test::remove_fake_gpu(root);
}

TEST(TimeOrder, OneGpuKeepsTheConfigsOrderSeveralTakeTheLongestSearchesFirst) {
  const auto problem = [](const char* name, int64_t m, int64_t n, int64_t k) {
    Problem p;
    p.name = name;
    p.m = m;
    p.n = n;
    p.k = k;
    return p;
  };
  const std::vector<Problem> problems = {
      problem("small", 256, 256, 256), problem("large", 8192, 8192, 8192), problem("decode", 1, 8192, 8192),
      problem("medium", 4096, 4096, 4096), problem("small_too", 256, 256, 256)};
  const std::vector<size_t> candidates = {100, 100, 100, 100, 100};
  EXPECT_EQ(time_order(problems, candidates, 1), (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(time_order(problems, candidates, 0), (std::vector<size_t>{0, 1, 2, 3, 4}));
  const std::vector<size_t> four = time_order(problems, candidates, 4);
  ASSERT_EQ(four.size(), 5u);
  EXPECT_EQ(four.front(), 1u) << "the largest problem first";
  EXPECT_EQ(std::vector<size_t>(four.end() - 2, four.end()), (std::vector<size_t>{0, 4}))
      << "the two small ones last, in the config's order (their estimates are equal)";
  // Fewer candidates make a search shorter: a large problem with 3 of them goes after a medium one with 100.
  const std::vector<size_t> few = time_order(problems, {100, 3, 100, 100, 100}, 2);
  EXPECT_GT(std::find(few.begin(), few.end(), 1u) - few.begin(),
            std::find(few.begin(), few.end(), 3u) - few.begin());
}

TEST(TimeResultYaml, PhaseSecondsSurviveTheRoundTrip) {
  TimeResult result;
  result.baseline.id = "cublas";
  result.phase_seconds = {{"inputs", 1.25}, {"screen", 0.5}};
  const TimeResult back = time_result_from_yaml(to_yaml(result));
  ASSERT_EQ(back.phase_seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(back.phase_seconds.at("inputs"), 1.25);
  EXPECT_DOUBLE_EQ(back.phase_seconds.at("screen"), 0.5);
  EXPECT_TRUE(time_result_from_yaml(to_yaml(TimeResult{})).phase_seconds.empty());
}

}  // namespace

TEST(TimeJobYaml, CublassStoredCheckAndWhetherTheWorkerCheckedSurviveTheRoundTrip) {
  TimeJob job;
  job.problem.name = "square";
  job.problem.m = job.problem.n = job.problem.k = 64;
  job.progress = "p";
  EXPECT_FALSE(time_job_from_yaml(to_yaml(job)).baseline_check) << "none unless the store had one";
  job.baseline_check = BaselineCheck{"cuBLAS 13.1.0", "outside the bound, timed anyway: x", 1.5, true};
  const std::optional<BaselineCheck> back = time_job_from_yaml(to_yaml(job)).baseline_check;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cublas_version, "cuBLAS 13.1.0");
  EXPECT_EQ(back->message, "outside the bound, timed anyway: x");
  EXPECT_DOUBLE_EQ(back->worst_error_ratio, 1.5);
  EXPECT_TRUE(back->exact_verified);
  TimeResult result;
  result.baseline.id = "cublas";
  EXPECT_FALSE(time_result_from_yaml(to_yaml(result)).baseline_checked);
  result.baseline_checked = true;
  EXPECT_TRUE(time_result_from_yaml(to_yaml(result)).baseline_checked);
}

TEST(TimeJobYaml, TheGpusTurnFileSurvivesTheRoundTripAndIsAbsentForAWorkerAlone) {
  TimeJob job;
  job.problem.name = "square";
  job.problem.m = job.problem.n = job.problem.k = 64;
  job.progress = "p";
  EXPECT_FALSE(to_yaml(job)["gpu_turns"]);
  EXPECT_TRUE(time_job_from_yaml(to_yaml(job)).gpu_turns.empty());
  job.gpu_turns = "/work/gpu-turns-0-1";
  EXPECT_EQ(time_job_from_yaml(to_yaml(job)).gpu_turns, "/work/gpu-turns-0-1");
}

TEST(TimeJobYaml, HowTheScreensAreTakenSurvivesTheRoundTrip) {
  TimeJob job;
  job.problem.name = "square";
  job.problem.m = job.problem.n = job.problem.k = 64;
  job.progress = "p";
  EXPECT_TRUE(time_job_from_yaml(to_yaml(job)).screen_in_turns);  // in turns unless a round is redone
  job.screen_in_turns = false;
  EXPECT_FALSE(time_job_from_yaml(to_yaml(job)).screen_in_turns);
}
