// Search strategies, apart from measurement: for one problem, a strategy looks at what has been measured so
// far and says what to measure next (a round: candidates to screen, to verify and time in full, to re-time
// taking turns with cuBLAS) and, once it asks for nothing more, the winner is chosen from the figures. The
// worker only measures what a round asks; whoever runs rounds (the time stage on a GPU, the replay of
// recorded timings without one) feeds the results back with absorb(). Kernel Tuner's runner/strategies and
// KTT's Searcher are the models.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/config/config.hpp"
#include "tuner/config/strategy_kind.hpp"
#include "runtime/templates/kernel_template.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {

/// A candidate a problem can be timed on, with what the model knows of it before any measurement.
struct SearchCandidate {
  Candidate candidate;
  std::string id;
  /// Resident CTAs per SM from the compiled resources; 0 when unknown (the model then estimates it).
  int64_t blocks_per_sm = 0;
};

/// What one round measures, in this order, in one worker process.
struct MeasureRound {
  bool baseline = false;                ///< verify and time cuBLAS, and the copy giving the bandwidth floor
  std::vector<std::string> screen;      ///< a few timed launches each (screen_repeats)
  int64_t screen_repeats = 0;           ///< 0: the campaign's screen_repeats
  std::vector<std::string> time;        ///< verified against the inputs, then timed in full
  std::vector<std::string> interleave;  ///< timed candidates re-timed taking turns (A B ... A B ...)
  bool interleave_baseline = false;     ///< cuBLAS takes its turn among them
  /// Candidate measurements the round asks for (screens, full timings and turn-taking re-timings).
  int64_t evaluations() const;
};

/// Everything measured so far for one problem.
struct SearchState {
  Problem problem;
  GemmShape shape;
  GpuLimits limits;
  std::vector<SearchCandidate> candidates;  ///< every candidate that may be timed on the problem
  std::map<std::string, TimedEntry> entries;  ///< by id: the latest figures (status screened, timed, ...)
  std::map<std::string, double> screens;      ///< by id: the screening median (ms) of those screened
  TimedEntry baseline;
  int64_t rounds = 0;
  int64_t evaluations = 0;  ///< candidate measurements so far (MeasureRound::evaluations)
  int64_t launches = 0;     ///< timed launches of candidates so far (repeats of every measurement)
};

/// Settings every strategy reads (from the config's budgets).
struct SearchSettings {
  int64_t finalists = 8;       ///< exhaustive: screened candidates timed in full (0 = all)
  int64_t screen_repeats = 3;  ///< launches per screen
  int64_t repeats = 30;        ///< launches per full timing and per turn-taking re-timing
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /// The next round to measure, or nullopt when the search is over (the winner is then chosen_winner()).
  virtual std::optional<MeasureRound> next(const SearchState& state) = 0;
};

std::unique_ptr<SearchStrategy> make_strategy(StrategyKind kind, const SearchSettings& settings);

/// Folds one round's results into the state: screens, full timings and turn-taking figures per candidate,
/// the baseline when the round measured it, and the round's evaluations and launches.
void absorb(SearchState& state, const MeasureRound& round, const TimeResult& result,
            const SearchSettings& settings);

/// The entries of a state as a list, in the order of its candidates (those measured).
std::vector<TimedEntry> measured_entries(const SearchState& state);

/// The winner among `entries`: the fastest `timed` one, on the turn-taking figures when some were re-timed in
/// turns (those hold the best and every one close to it), else on the sequential medians; a tie (within
/// the best one's own spread, and at least 1%) goes to the cheaper config: fewer stages, then less shared
/// memory, then the smaller id, so reruns pick the same winner. Null when nothing was timed.
const TimedEntry* choose_winner(const std::vector<TimedEntry>& entries);

/// Timed entries whose median is within `fraction` of the fastest timed one (turn-taking candidates).
std::vector<std::string> close_to_best(const SearchState& state, double fraction);

/// The ids of screened candidates (status screened or timed), fastest screen first.
std::vector<std::string> by_screen(const SearchState& state);

}  // namespace tunefuzz
