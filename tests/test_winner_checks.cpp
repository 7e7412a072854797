// The checks before a winner enters a table (check_winners): the confirmation and the sanitizers run at the
// same time, their demotions meet, and a demoted winner's successor passes both before the loop ends; the
// twins' prefetch compiles each winner's twin once. Fake checks: no GPU, no worker.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tuner/campaign/confirm_stage.hpp"

namespace tunefuzz {
namespace {

const std::string kFast = parse_candidate_id("gemm_mma/bf16-bf16/BM=128,BN=128,BK=32").id();
const std::string kMiddle = parse_candidate_id("gemm_mma/bf16-bf16/BM=64,BN=128,BK=32").id();
const std::string kSlow = parse_candidate_id("gemm_mma/bf16-bf16/BM=64,BN=64,BK=32").id();

TimedEntry timed(const std::string& id, double ms) {
  TimedEntry e;
  e.id = id;
  e.status = "timed";
  e.median_ms = ms;
  return e;
}

struct Campaign {
  std::vector<ProblemTiming> timings;
  std::vector<FuzzedCandidate> fuzzed;

  // Two problems over the same three candidates, fastest first in both.
  Campaign() {
    for (const char* name : {"p", "q"}) {
      ProblemTiming t;
      t.problem.name = name;
      t.entries = {timed(kSlow, 3), timed(kFast, 1), timed(kMiddle, 2)};
      timings.push_back(t);
    }
    for (const std::string& id : {kFast, kMiddle, kSlow}) {
      FuzzedCandidate f;
      f.candidate = parse_candidate_id(id);
      f.passed = true;
      fuzzed.push_back(f);
    }
  }
};

// A check that fails the candidates in `bad` (demoting them with `status`) and records whom it judged.
struct FakeCheck {
  FakeCheck(std::string status_, std::set<std::string> bad_)
      : status(std::move(status_)), bad(std::move(bad_)) {}

  std::string status;
  std::set<std::string> bad;
  std::vector<std::string> judged;
  std::mutex mutex;

  void operator()(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed) {
    // As the real checks do: judge every winner, demote the failing ones, until each problem's winner passed.
    for (bool demoted = true; demoted;) {
      demoted = false;
      for (ProblemTiming& t : timings) {
        const TimedEntry* w = t.winner();
        if (!w) continue;
        const std::string id = w->id;
        {
          const std::lock_guard lock(mutex);
          judged.push_back(id);
        }
        for (FuzzedCandidate& f : fuzzed)
          if (f.candidate.id() == id && status == "fuzz") f.confirmed = true;
        if (!bad.count(id)) continue;
        for (TimedEntry& e : t.entries)
          if (e.id == id) {
            e.status = status;
            e.message = status + " found it wrong";
          }
        demoted = true;
      }
    }
    if (status == "sanitizer")
      for (ProblemTiming& t : timings)
        if (t.winner()) t.sanitizers = {"memcheck", "racecheck"};
  }
};

// `check`, run by check_winners, which at its first call says it started and waits (at most two minutes) for
// `other` to have started as well.
struct Rendezvous {
  explicit Rendezvous(FakeCheck& check_) : check(check_) {}

  FakeCheck& check;
  std::promise<void> started;
  std::shared_future<void> other;
  bool met = false;
  int calls = 0;

  WinnerCheck as_check() {
    return [this](std::vector<ProblemTiming>& t, std::vector<FuzzedCandidate>& f) {
      if (calls++ == 0) {
        started.set_value();
        met = other.wait_for(std::chrono::minutes(2)) == std::future_status::ready;
      }
      check(t, f);
    };
  }
};

TEST(CheckWinners, TheConfirmationAndTheSanitizersRunAtTheSameTime) {
  Campaign c;
  // Each check waits for the other to have started: run one after the other, the first would wait in vain.
  FakeCheck confirm{"fuzz", {}}, sanitize{"sanitizer", {}};
  Rendezvous confirming{confirm}, sanitizing{sanitize};
  confirming.other = sanitizing.started.get_future().share();
  sanitizing.other = confirming.started.get_future().share();
  check_winners(c.timings, c.fuzzed, confirming.as_check(), sanitizing.as_check());
  EXPECT_TRUE(confirming.met);
  EXPECT_TRUE(sanitizing.met);
  EXPECT_EQ(confirming.calls, 1);
  EXPECT_EQ(sanitizing.calls, 1);
  for (const ProblemTiming& t : c.timings) {
    ASSERT_NE(t.winner(), nullptr);
    EXPECT_EQ(t.winner()->id, kFast);
    EXPECT_EQ(t.sanitizers, (std::vector<std::string>{"memcheck", "racecheck"}));
  }
}

// `c` through check_winners with both fakes; each problem's winner must be `winner`.
const std::vector<ProblemTiming>& checked(Campaign& c, FakeCheck& confirm, FakeCheck& sanitize,
                                          const std::string& winner) {
  check_winners(
      c.timings, c.fuzzed, [&](auto& t, auto& f) { confirm(t, f); },
      [&](auto& t, auto& f) { sanitize(t, f); });
  for (const ProblemTiming& t : c.timings) EXPECT_EQ(t.winner() ? t.winner()->id : "none", winner);
  return c.timings;
}

TEST(CheckWinners, ASanitizerFindingDemotesTheWinnerAndItsSuccessorIsConfirmedToo) {
  Campaign c;
  FakeCheck confirm{"fuzz", {}}, sanitize{"sanitizer", {kFast}};
  for (const ProblemTiming& t : checked(c, confirm, sanitize, kMiddle)) {
    EXPECT_EQ(t.entries[1].status, "sanitizer");
    EXPECT_EQ(t.entries[1].message, "sanitizer found it wrong");
    EXPECT_FALSE(t.sanitizers.empty());
  }
  // The successor was confirmed in a second round (the first confirmed only the fastest).
  EXPECT_NE(std::find(confirm.judged.begin(), confirm.judged.end(), kMiddle), confirm.judged.end());
  EXPECT_TRUE(c.fuzzed[1].confirmed);
}

TEST(CheckWinners, AFailedConfirmationDemotesTheWinnerAndItsSuccessorIsSanitizedToo) {
  Campaign c;
  FakeCheck confirm{"fuzz", {kFast}}, sanitize{"sanitizer", {}};
  for (const ProblemTiming& t : checked(c, confirm, sanitize, kMiddle))
    EXPECT_EQ(t.entries[1].status, "fuzz");
  // The first round's sanitizers saw the fastest only; the successor was sanitized in the second.
  EXPECT_NE(std::find(sanitize.judged.begin(), sanitize.judged.end(), kMiddle), sanitize.judged.end());
}

TEST(CheckWinners, BothFailingLeavesTheConfirmationsVerdictAndTheNextCandidateWins) {
  Campaign c;
  FakeCheck confirm{"fuzz", {kFast}}, sanitize{"sanitizer", {kFast, kMiddle}};
  for (const ProblemTiming& t : checked(c, confirm, sanitize, kSlow)) {
    EXPECT_EQ(t.entries[1].status, "fuzz");       // the fastest: the confirmation's verdict came first
    EXPECT_EQ(t.entries[2].status, "sanitizer");  // the middle one: the sanitizers'
  }
}

TEST(CheckWinners, WithoutSanitizersNothingClaimsThem) {
  Campaign c;
  FakeCheck confirm{"fuzz", {}};
  check_winners(c.timings, c.fuzzed, [&](auto& t, auto& f) { confirm(t, f); }, {});
  for (const ProblemTiming& t : c.timings) {
    EXPECT_EQ(t.winner()->id, kFast);
    EXPECT_TRUE(t.sanitizers.empty());
  }
}

TEST(CheckWinners, WithNeitherCheckTheWinnersStand) {
  Campaign c;
  check_winners(c.timings, c.fuzzed, {}, {});
  for (const ProblemTiming& t : c.timings) EXPECT_EQ(t.winner()->id, kFast);
}

TEST(CheckWinners, AWinnerTheConfirmationLeavesUnjudgedIsAnErrorNotALoop) {
  Campaign c;
  FakeCheck sanitize{"sanitizer", {}};
  try {
    check_winners(
        c.timings, c.fuzzed, [](auto&, auto&) {}, [&](auto& t, auto& f) { sanitize(t, f); });
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::internal);
    EXPECT_NE(e.message().find("left unjudged by the confirmation"), std::string::npos) << e.message();
  }
}

TEST(TwinPrefetch, CompilesEachWinnersTwinOnceAndWaits) {
  std::mutex mutex;
  std::map<std::string, int> compiled;
  {
    TwinPrefetch prefetch([&](const std::vector<Candidate>& winners) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::lock_guard lock(mutex);
      for (const Candidate& w : winners) ++compiled[w.id()];
      return std::vector<CompiledCandidate>{};
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (const std::string& id : {kFast, kMiddle, kFast}) prefetch.add(parse_candidate_id(id));
      });
    for (auto& t : threads) t.join();
    prefetch.wait();
    const std::lock_guard lock(mutex);
    EXPECT_EQ(compiled, (std::map<std::string, int>{{kFast, 1}, {kMiddle, 1}}));
  }
}

TEST(TwinPrefetch, ACompileThatThrowsIsLeftToTheConfirmation) {
  TwinPrefetch prefetch([](const std::vector<Candidate>&) -> std::vector<CompiledCandidate> {
    throw Error(ErrorKind::internal, "injected: the compiler is gone");
  });
  prefetch.add(parse_candidate_id(kFast));
  EXPECT_NO_THROW(prefetch.wait());
}

TEST(TwinPrefetch, CompilesAtMostItsShareAtOnce) {
  // Each compile waits (a minute at most) until two run at once, then gives a third 0.2 s to join them: with
  // two slots none can, and the three twins do not compile one by one either.
  std::mutex mutex;
  std::condition_variable changed;
  int running = 0, most = 0;
  {
    TwinPrefetch prefetch(
        [&](const std::vector<Candidate>&) {
          std::unique_lock lock(mutex);
          most = std::max(most, ++running);
          changed.notify_all();
          changed.wait_for(lock, std::chrono::seconds(60), [&] { return most >= 2; });
          changed.wait_for(lock, std::chrono::milliseconds(200), [&] { return most >= 3; });
          --running;
          return std::vector<CompiledCandidate>{};
        },
        2);
    for (const std::string& id : {kFast, kMiddle, kSlow}) prefetch.add(parse_candidate_id(id));
    prefetch.wait();
  }
  EXPECT_EQ(most, 2);
}

// The winners a campaign prefetches twins for before its time stage: those of the table it is to replace.
TEST(TwinPrefetch, TheTableToReplaceNamesItsWinnersAndNothingElseDoes) {
  const std::filesystem::path table = TUNEFUZZ_SOURCE_DIR "/results/smoke-h200.yaml";
  const std::vector<std::string> winners = table_winners(table);
  ASSERT_FALSE(winners.empty());
  for (const std::string& id : winners) EXPECT_NO_THROW(parse_candidate_id(id)) << id;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tf-table-winners";
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(table_winners(dir / "none.yaml").empty()) << "no table yet";
  EXPECT_TRUE(table_winners(dir).empty()) << "a folder";
  std::ofstream(dir / "cut.yaml") << "format: tunefuzz-results/1\nproblems:\n  - name: x\n";
  EXPECT_TRUE(table_winners(dir / "cut.yaml").empty()) << "a table cut short";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tunefuzz
