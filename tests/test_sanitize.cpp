// Sanitizers on what ships (tuner/campaign/sanitize_stage.hpp), without a GPU: the fake GPU worker answers
// the replays and tests/fixtures/fake_sanitizer.sh stands in for compute-sanitizer, reporting a hazard for
// the candidates FAKE_SANITIZER_FINDS names. A winner with a finding is demoted and the next timed candidate
// must pass every tool before it wins; a problem whose candidates all have findings has no winner.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fstream>

#include "runtime/templates/gemm_mma.hpp"
#include "tuner/campaign/sanitize_stage.hpp"
#include "tuner/store/verdict_store.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

Candidate with_bm(int64_t bm) {
  Candidate c;
  c.kernel_template = &gemm_mma_template();
  std::vector<std::pair<std::string, int64_t>> values = c.kernel_template->default_point().values();
  for (auto& [name, value] : values)
    if (name == "BM") value = bm;
  c.point = Point(values);
  return c;
}

TimedEntry timed(const Candidate& c, double ms) {
  TimedEntry e;
  e.id = c.id();
  e.status = "timed";
  e.median_ms = e.min_ms = e.max_ms = ms;
  return e;
}

class SanitizeWinners : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tunefuzz-sanitize-XXXXXX";
    root_ = ::mkdtemp(pattern);
    for (const char* script : {"fake_gpu_worker.sh", "fake_sanitizer.sh", "serve_jobs.sh"}) {
      fs::copy_file(fs::path(TUNEFUZZ_SOURCE_DIR) / "tests" / "fixtures" / script, root_ / script);
      fs::permissions(root_ / script, fs::perms::owner_all);
    }
    ::setenv("TUNEFUZZ_WORKER", (root_ / "fake_gpu_worker.sh").c_str(), 1);
    ::setenv("TUNEFUZZ_COMPUTE_SANITIZER", (root_ / "fake_sanitizer.sh").c_str(), 1);
    for (const Candidate& c : {fast_, slow_}) {
      FuzzedCandidate f;
      f.candidate = c;
      f.image = root_ / (std::to_string(c.point["BM"]) + ".cubin");
      f.passed = true;
      fuzzed_.push_back(f);
    }
    ProblemTiming t;
    t.problem.name = "p";
    t.entries = {timed(slow_, 2.0), timed(fast_, 1.0)};
    timings_ = {t, t};  // one winner shared by two problems is checked once
    options_.work_directory = root_ / "work";
    options_.workers = 2;
    options_.cases_for = [](const Candidate&) { return std::vector<fuzz::CaseRecord>(2); };
  }
  void TearDown() override {
    ::unsetenv("TUNEFUZZ_WORKER");
    ::unsetenv("TUNEFUZZ_COMPUTE_SANITIZER");
    ::unsetenv("FAKE_SANITIZER_FINDS");
    fs::remove_all(root_);
  }
  // Replays the worker ran, counted from the progress files it wrote.
  int replays() const { return count_ending(".progress"); }
  // Processes the stage started (the stand-in sanitizer, then the worker unless it reports first): one job
  // file each.
  int processes() const { return count_ending(".job.yaml"); }
  int count_ending(const std::string& suffix) const {
    int n = 0;
    for (const auto& entry : fs::directory_iterator(options_.work_directory)) {
      const std::string name = entry.path().filename().string();
      n += name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }
    return n;
  }
  fs::path root_;
  Candidate fast_ = with_bm(64), slow_ = with_bm(128);
  std::vector<FuzzedCandidate> fuzzed_;
  std::vector<ProblemTiming> timings_;
  SanitizeOptions options_;
};

TEST_F(SanitizeWinners, ACleanWinnerKeepsItsPlaceAndRecordsTheTools) {
  sanitize_winners(timings_, fuzzed_, options_);
  for (const ProblemTiming& t : timings_) {
    ASSERT_NE(t.winner(), nullptr);
    EXPECT_EQ(t.winner()->id, fast_.id());
    EXPECT_EQ(t.sanitizers, shipping_sanitizers());
  }
  // Four tools, one distinct winner: one process per tool replays both cases.
  EXPECT_EQ(processes(), 4);
  EXPECT_EQ(replays(), 4);
}

TEST_F(SanitizeWinners, AWinnerWithAFindingIsDemotedAndTheNextMustPass) {
  ::setenv("FAKE_SANITIZER_FINDS", "BM=64,", 1);
  sanitize_winners(timings_, fuzzed_, options_);
  for (const ProblemTiming& t : timings_) {
    ASSERT_NE(t.winner(), nullptr);
    EXPECT_EQ(t.winner()->id, slow_.id());
    EXPECT_EQ(t.sanitizers, shipping_sanitizers());
    const TimedEntry& demoted = t.entries[1];
    EXPECT_EQ(demoted.status, "sanitizer");
    EXPECT_NE(demoted.message.find("compute-sanitizer --tool memcheck"), std::string::npos)
        << demoted.message;
    EXPECT_NE(demoted.message.find("Race reported"), std::string::npos) << demoted.message;
  }
  // Under each tool the winner's process with both cases reports, then its first case alone names the case
  // (the stand-in reports before any worker starts); then the runner-up's four processes run, clean.
  EXPECT_EQ(processes(), 4 * 2 + 4);
  EXPECT_EQ(replays(), 4);
  EXPECT_NE(timings_[0].entries[1].message.find(fuzz::to_string(fuzz::CaseRecord{})), std::string::npos)
      << timings_[0].entries[1].message;
}

// Four problems, each with a winner of its own and the same runner-up: under each tool the four winners go
// in ⌈√4⌉ = 2 processes of two, not four; a process that is not clean is replayed winner by winner, which
// names the winner with the finding.
TEST_F(SanitizeWinners, WinnersShareProcessesAndAFindingIsStillPinnedOnItsWinner) {
  const Candidate runner_up = with_bm(256);
  const std::vector<Candidate> winners = {with_bm(16), with_bm(32), fast_, slow_};
  fuzzed_.clear();
  timings_.clear();
  for (const Candidate& c : {winners[0], winners[1], winners[2], winners[3], runner_up}) {
    FuzzedCandidate f;
    f.candidate = c;
    f.image = root_ / (std::to_string(c.point["BM"]) + ".cubin");
    f.passed = true;
    fuzzed_.push_back(f);
  }
  for (const Candidate& w : winners) {
    ProblemTiming t;
    t.problem.name = "p" + std::to_string(w.point["BM"]);
    t.entries = {timed(runner_up, 2.0), timed(w, 1.0)};
    timings_.push_back(t);
  }
  const std::vector<ProblemTiming> fresh = timings_;
  sanitize_winners(timings_, fuzzed_, options_);
  for (size_t p = 0; p < timings_.size(); ++p) {
    ASSERT_NE(timings_[p].winner(), nullptr);
    EXPECT_EQ(timings_[p].winner()->id, winners[p].id());
  }
  EXPECT_EQ(processes(), 4 * 2);
  EXPECT_EQ(replays(), 4 * 2);

  ::setenv("FAKE_SANITIZER_FINDS", "BM=64,", 1);  // fast_, in the second batch of each tool
  fs::remove_all(options_.work_directory);
  timings_ = fresh;
  sanitize_winners(timings_, fuzzed_, options_);
  for (size_t p = 0; p < timings_.size(); ++p) {
    ASSERT_NE(timings_[p].winner(), nullptr);
    EXPECT_EQ(timings_[p].winner()->id, winners[p].id() == fast_.id() ? runner_up.id() : winners[p].id());
    EXPECT_EQ(timings_[p].entries[1].status, winners[p].id() == fast_.id() ? "sanitizer" : "timed");
  }
  // Per tool: the two batches; the reporting one's winners alone (slow_ clean in one process, fast_ reporting
  // with both cases, then with its first); then the runner-up, now a winner, in one process per tool.
  EXPECT_EQ(processes(), 4 * (2 + 1 + 2) + 4);
  EXPECT_EQ(replays(), 4 * 2 + 4);
}

TEST_F(SanitizeWinners, NoWinnerWhenEveryCandidateHasAFinding) {
  ::setenv("FAKE_SANITIZER_FINDS", "gemm_mma", 1);
  sanitize_winners(timings_, fuzzed_, options_);
  for (const ProblemTiming& t : timings_) {
    EXPECT_EQ(t.winner(), nullptr);
    EXPECT_TRUE(t.sanitizers.empty());
  }
}

// With a verdict store, a rerun replays nothing it has a verdict for, a finding included; a winner whose
// image changed, or another driver, is replayed again.
TEST_F(SanitizeWinners, ARerunTakesEveryVerdictFromTheStoreAndReplaysOnlyWhatChanged) {
  for (const FuzzedCandidate& f : fuzzed_) std::ofstream(f.image) << "image of " << f.candidate.id();
  const VerdictStore store(root_ / "verdicts");
  options_.store = {&store, "card", "driver 1"};
  ::setenv("FAKE_SANITIZER_FINDS", "BM=64,", 1);
  const std::vector<ProblemTiming> fresh = timings_;
  const auto run = [&] {
    fs::remove_all(options_.work_directory);
    timings_ = fresh;
    sanitize_winners(timings_, fuzzed_, options_);
    for (const ProblemTiming& t : timings_) {
      ASSERT_NE(t.winner(), nullptr);
      EXPECT_EQ(t.winner()->id, slow_.id());
      EXPECT_EQ(t.entries[1].status, "sanitizer");
      EXPECT_NE(t.entries[1].message.find("Race reported"), std::string::npos) << t.entries[1].message;
    }
  };
  run();
  EXPECT_EQ(replays(), 4);  // the runner-up's; the winner's finding stops each tool before a worker runs
  run();
  EXPECT_EQ(replays(), 0) << "every (winner, tool) verdict was in the store";
  fuzzed_[1].image = root_ / "rebuilt.cubin";  // the runner-up's image changes (images live by content)
  std::ofstream(fuzzed_[1].image) << "rebuilt";
  run();
  EXPECT_EQ(replays(), 4);
  options_.store.driver = "driver 2";
  run();
  EXPECT_EQ(replays(), 4);
}

TEST_F(SanitizeWinners, WithoutTheToolTheStageSaysSo) {
  ::setenv("TUNEFUZZ_COMPUTE_SANITIZER", (root_ / "no-such-sanitizer").c_str(), 1);
  EXPECT_THROW(sanitize_winners(timings_, fuzzed_, options_), Error);
}

}  // namespace
}  // namespace tunefuzz
