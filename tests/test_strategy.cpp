// Laws of the search strategies, decided on timings that real campaigns recorded (results/h100.journal and
// results/h200.journal hold every screened candidate's figure per problem), without a GPU:
//  - replayed, the exhaustive strategy picks the recorded winner or one within 2% of its time;
//  - the model-guided strategy picks, on every recorded problem, the exhaustive winner or one within 2% of its
//    time, with at most 40% of the exhaustive search's evaluations (the target);
//  - successive halving picks a winner within 2% too, with fewer timed launches than the exhaustive search;
//  - every strategy's rounds ask only for what may be asked (known candidates; nothing timed in full before
//    it was screened; only timed candidates take turns), and every search ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tuner/campaign/strategy_replay.hpp"

namespace {

using namespace tunefuzz;

struct Recording {
  const char* config;
  const char* journal;
};

const Recording kRecordings[] = {{"configs/h100.yaml", "results/h100.journal"},
                                 {"configs/h200.yaml", "results/h200.journal"}};

std::string source(const char* relative) { return std::string(TUNEFUZZ_SOURCE_DIR) + "/" + relative; }

// Every recorded problem of both journals with the config it was recorded under.
struct Case {
  Config config;
  RecordedProblem recorded;
  std::string where;
};

const std::vector<Case>& recorded_cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> out;
    for (const Recording& r : kRecordings) {
      const Config config = load_config(source(r.config));
      for (RecordedProblem& p : recorded_timings(source(r.journal), config))
        out.push_back({config, std::move(p), std::string(r.journal) + " " + p.problem.name});
    }
    return out;
  }();
  return cases;
}

SearchSettings settings_of(const Config& config) {
  return {config.budgets.timing_finalists, config.budgets.timing_screen_repeats, config.budgets.timing_repeats};
}

TEST(StrategyReplay, EveryShippedConfigsRecordedProblemIsReplayed) {
  // Both journals hold the timings of every problem they ran: 25 on the H200, 26 on the H100.
  ASSERT_EQ(recorded_cases().size(), 51u);
  for (const Case& c : recorded_cases()) EXPECT_GT(c.recorded.entries.size(), 1u) << c.where;
}

TEST(StrategyReplay, ExhaustivePicksTheRecordedWinnerOrOneWithinTwoPercent) {
  for (const Case& c : recorded_cases()) {
    SCOPED_TRACE(c.where);
    const ReplayOutcome recorded = recorded_outcome(c.recorded, settings_of(c.config));
    const ReplayOutcome replayed =
        replay(c.recorded, StrategyKind::exhaustive, settings_of(c.config), c.config.gpu.limits);
    ASSERT_FALSE(recorded.winner.empty());
    EXPECT_LE(replayed.winner_ms, recorded.winner_ms * 1.02) << replayed.winner << " vs " << recorded.winner;
    EXPECT_EQ(replayed.rounds, recorded.rounds);
  }
}

TEST(StrategyReplay, ModelGuidedIsWithinTwoPercentWithAtMostFortyPercentOfTheEvaluations) {
  for (const Case& c : recorded_cases()) {
    SCOPED_TRACE(c.where);
    const ReplayOutcome recorded = recorded_outcome(c.recorded, settings_of(c.config));
    const ReplayOutcome model = replay(c.recorded, StrategyKind::model, settings_of(c.config), c.config.gpu.limits);
    EXPECT_LE(model.winner_ms, recorded.winner_ms * 1.02) << model.winner << " vs " << recorded.winner;
    EXPECT_LE(model.evaluations * 10, recorded.evaluations * 4)
        << model.evaluations << " of the exhaustive search's " << recorded.evaluations;
  }
}

TEST(StrategyReplay, HalvingIsWithinTwoPercentWithFewerLaunches) {
  for (const Case& c : recorded_cases()) {
    SCOPED_TRACE(c.where);
    const ReplayOutcome recorded = recorded_outcome(c.recorded, settings_of(c.config));
    const ReplayOutcome halving =
        replay(c.recorded, StrategyKind::halving, settings_of(c.config), c.config.gpu.limits);
    EXPECT_LE(halving.winner_ms, recorded.winner_ms * 1.02) << halving.winner << " vs " << recorded.winner;
    EXPECT_LT(halving.launches, recorded.launches);
  }
}

// A strategy's rounds, checked against what it had measured before each.
class Lawful : public ::testing::TestWithParam<StrategyKind> {};

TEST_P(Lawful, RoundsAskOnlyForWhatMayBeAskedAndEnd) {
  for (const Case& c : recorded_cases()) {
    SCOPED_TRACE(c.where);
    SearchState state;
    state.problem = c.recorded.problem;
    state.shape = shape_of(c.recorded.problem);
    state.limits = c.config.gpu.limits;
    std::set<std::string> known;
    for (const TimedEntry& e : c.recorded.entries) {
      state.candidates.push_back({parse_candidate_id(e.id), e.id, 0});
      known.insert(e.id);
    }
    const auto strategy = make_strategy(GetParam(), settings_of(c.config));
    std::set<std::string> screened, timed;
    int rounds = 0;
    while (const auto round = strategy->next(state)) {
      ASSERT_LT(++rounds, 40) << "the search does not end";
      EXPECT_GT(round->evaluations(), 0) << "an empty round";
      EXPECT_EQ(round->baseline, rounds == 1) << "cuBLAS is timed once, in the first round";
      TimeResult result;
      result.baseline = c.recorded.baseline;
      for (const std::string& id : round->screen) {
        EXPECT_TRUE(known.count(id)) << id;
        screened.insert(id);
        TimedEntry e;
        e.id = id;
        e.status = "screened";
        e.median_ms = 1.0 + static_cast<double>(std::hash<std::string>{}(id) % 1000) / 1000;
        result.entries.push_back(e);
      }
      for (const std::string& id : round->time) {
        EXPECT_TRUE(screened.count(id)) << id << " timed in full before it was screened";
        timed.insert(id);
        TimedEntry e;
        e.id = id;
        e.status = "timed";
        e.median_ms = state.screens.count(id) ? state.screens.at(id) : 1.0;
        result.entries.push_back(e);
      }
      for (const std::string& id : round->interleave) {
        EXPECT_TRUE(timed.count(id)) << id << " takes turns without a full timing";
        const auto it = std::find_if(result.entries.begin(), result.entries.end(),
                                     [&](const TimedEntry& e) { return e.id == id; });
        if (it != result.entries.end()) it->interleaved_median_ms = it->median_ms;
      }
      absorb(state, *round, result, settings_of(c.config));
    }
    EXPECT_FALSE(timed.empty()) << "nothing was timed in full";
    EXPECT_NE(choose_winner(measured_entries(state)), nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, Lawful, ::testing::ValuesIn(all_strategies()),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
