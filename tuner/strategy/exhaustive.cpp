// The exhaustive strategy (today's campaign): every candidate is screened with a few launches, the fastest
// `finalists` are verified and timed in full, and those within kCloseFraction of the fastest are re-timed
// taking turns with each other and with cuBLAS, so the card's drift can pick neither the winner nor the ratio.
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
