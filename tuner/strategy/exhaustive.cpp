// The exhaustive strategy (today's campaign): every candidate is screened with a few launches, the fastest
// `finalists` are verified and timed in full, and those within kCloseFraction of the fastest are re-timed
// taking turns with each other and with cuBLAS, so the card's drift can pick neither the winner nor the ratio
// (and again with any timed candidate that beat the turns' best figure in sequence: settle_round).
#include <algorithm>

#include "tuner/strategy/strategies.hpp"

namespace tunefuzz {

std::optional<MeasureRound> turns_round(const SearchState& state, const std::vector<std::string>& close) {
  const bool with_baseline = state.baseline.status == "timed";
  if (close.size() + (with_baseline ? 1 : 0) < 2) return std::nullopt;
  MeasureRound round;
  round.interleave = close;
  round.interleave_baseline = with_baseline;
  return round;
}

std::optional<MeasureRound> widen_round(const SearchState& state, size_t finalists) {
  double overstatement = 1.0, best = 0;  // the smallest full/screen ratio; the fastest full timing
  size_t timed = 0;
  for (const auto& [id, e] : state.entries) {
    if (e.status != "timed") continue;
    ++timed;
    if (best == 0 || e.median_ms < best) best = e.median_ms;
    if (e.screen_ms > 0) overstatement = std::min(overstatement, e.median_ms / e.screen_ms);
  }
  if (best == 0 || overstatement >= 1 - kCloseFraction) return std::nullopt;
  // A screen corrected by the largest overstatement seen may still be off by the band twice over: its own
  // few launches', and that of the kernels' overstatements, which differ from one another.
  const double reach = best * (1 + 2 * kCloseFraction) / overstatement;
  MeasureRound round;
  for (const std::string& id : by_screen(state)) {
    if (state.screens.at(id) > reach || (finalists > 0 && timed + round.time.size() >= finalists)) break;
    if (state.entries.at(id).status != "timed") round.time.push_back(id);
  }
  if (round.time.empty()) return std::nullopt;
  return round;
}

std::optional<MeasureRound> settle_round(const SearchState& state) {
  double best_turns = 0;
  for (const auto& [id, e] : state.entries)
    if (e.status == "timed" && e.interleaved_median_ms > 0 &&
        (best_turns == 0 || e.interleaved_median_ms < best_turns))
      best_turns = e.interleaved_median_ms;
  if (best_turns == 0) return std::nullopt;
  // The card's drift between the two kinds of figure, as cuBLAS saw it (large problems run 10-17% slower in
  // turns than in sequence on the H200, candidates and cuBLAS alike): a sequential median is scaled by it.
  const TimedEntry& base = state.baseline;
  const double drift = base.median_ms > 0 && base.interleaved_median_ms > 0
                           ? base.interleaved_median_ms / base.median_ms
                           : 1.0;
  const auto beats = [&](double sequential_ms) {
    return sequential_ms * drift * (1 + kCloseFraction) < best_turns;
  };
  std::vector<std::string> turns;
  bool joined = false;
  for (const SearchCandidate& c : state.candidates) {
    const auto it = state.entries.find(c.id);
    if (it == state.entries.end() || it->second.status != "timed") continue;
    const TimedEntry& e = it->second;
    const bool took_turns = e.interleaved_median_ms > 0, beat = !took_turns && beats(e.median_ms);
    if (took_turns || beat) turns.push_back(c.id);
    joined = joined || beat;
  }
  return joined ? turns_round(state, turns) : std::nullopt;
}

namespace {

class Exhaustive : public SearchStrategy {
 public:
  explicit Exhaustive(const SearchSettings& settings) : settings_(settings) {}

  std::optional<MeasureRound> next(const SearchState& state) override {
    MeasureRound round;
    if (state.rounds == 0) {
      round.baseline = true;
      for (const SearchCandidate& c : state.candidates) round.screen.push_back(c.id);
      return round;
    }
    if (state.rounds == 1) {
      const std::vector<std::string> ranked = by_screen(state);
      const size_t count = settings_.finalists > 0 ? std::min<size_t>(settings_.finalists, ranked.size())
                                                   : ranked.size();
      if (count == 0) return std::nullopt;
      round.time.assign(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(count));
      return round;
    }
    if (state.rounds == 2) return turns_round(state, close_to_best(state, kCloseFraction));
    if (state.rounds == 3) return settle_round(state);
    return std::nullopt;
  }

 private:
  SearchSettings settings_;
};

}  // namespace

std::unique_ptr<SearchStrategy> exhaustive_strategy(const SearchSettings& settings) {
  return std::make_unique<Exhaustive>(settings);
}

std::unique_ptr<SearchStrategy> make_strategy(StrategyKind kind, const SearchSettings& settings) {
  switch (kind) {
    case StrategyKind::exhaustive: return exhaustive_strategy(settings);
    case StrategyKind::halving: return halving_strategy(settings);
    case StrategyKind::model: return model_strategy(settings);
  }
  return exhaustive_strategy(settings);
}

}  // namespace tunefuzz
