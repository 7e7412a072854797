// Replays search strategies against timings a campaign recorded (a journal's `timed` events hold every
// screened candidate's figure per problem), without a GPU: a round's screens and full timings return the
// recorded medians, its turn-taking re-timings the recorded turn-taking figures where there are some. So a
// strategy's decisions, its evaluations and the time of the winner it picks can be compared with the
// exhaustive search's on real data. The record has one figure per candidate: a screen and a full timing of
// the same candidate return the same number, and the noise of fewer launches is not modelled.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tuner/strategy/search.hpp"

namespace tunefuzz {

/// One problem's recorded timing.
struct RecordedProblem {
  Problem problem;
  std::vector<TimedEntry> entries;  ///< every candidate of the problem as recorded (screened, timed, ...)
  TimedEntry baseline;
  int64_t rounds = 0;  ///< the rounds the campaign's strategy took (0: a journal written before it said)
};

/// The last recorded timing of each problem of `config` that `journal` holds, in the config's order.
std::vector<RecordedProblem> recorded_timings(const std::filesystem::path& journal, const Config& config);

struct ReplayOutcome {
  std::string problem;
  StrategyKind strategy = StrategyKind::exhaustive;
  int64_t candidates = 0;
  int64_t rounds = 0;
  int64_t evaluations = 0;               ///< screens + full timings + turn-taking re-timings of candidates
  int64_t launches = 0;                  ///< timed launches of candidates
  std::string winner;                    ///< empty when none
  double winner_ms = 0;                  ///< the winner's recorded median (its full timing where it has one)
  bool winner_recorded_in_full = false;  ///< false: the record only holds a screen of the winner
};

/// What the replay answers `round` with from the record: a screen with the recorded screen
/// (TimedEntry::screen_ms where the record kept one beside a full timing, else the recorded median), a full
/// timing with the recorded median, turns with the recorded turn-taking figures when every candidate of the
/// round has one.
TimeResult recorded_answer(const RecordedProblem& recorded, const MeasureRound& round);

/// Runs `kind` against the recorded figures of one problem.
ReplayOutcome replay(const RecordedProblem& recorded, StrategyKind kind, const SearchSettings& settings,
                     const GpuLimits& limits);

/// What the recording spent (exhaustive: every candidate screened, the finalists timed, the close ones
/// re-timed in turns) and the winner it chose (choose_winner over its entries).
ReplayOutcome recorded_outcome(const RecordedProblem& recorded, const SearchSettings& settings);

}  // namespace tunefuzz

namespace tunefuzz {

/// Every strategy replayed on every recorded problem of a journal, beside what the recording spent.
struct ReplayReport {
  std::string card;  ///< the config's gpu.name: the card the journal's campaign ran on
  std::filesystem::path journal;
  std::string journal_sha256;
  std::vector<StrategyKind> strategies;
  struct Row {
    ReplayOutcome recorded;                 ///< the exhaustive search as the campaign ran it
    std::vector<ReplayOutcome> strategies;  ///< one per ReplayReport::strategies
  };
  std::vector<Row> rows;
};

/// Per strategy, over every problem of a report: evaluations in all, and the worst problem's share of the
/// recorded evaluations and ratio of the winner's time to the recorded winner's.
struct ReplaySummary {
  StrategyKind strategy = StrategyKind::exhaustive;
  int64_t evaluations = 0, recorded_evaluations = 0;
  double worst_share = 0, worst_time = 0;
};
std::vector<ReplaySummary> summarise(const ReplayReport& report);

ReplayReport replay_journal(const std::filesystem::path& journal, const Config& config,
                            const std::vector<StrategyKind>& strategies);

/// The report as a YAML document (format tunefuzz-strategy-replay/1), with `command` and the tool's commit.
YAML::Node to_yaml(const ReplayReport& report, const std::string& command);

}  // namespace tunefuzz
