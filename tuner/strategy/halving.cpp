// Successive halving: every candidate is screened with one launch; the fastest quarter, and whatever screened
// close to the fastest, goes on to a rung of twice the launches (four times before cc0b164: the decision is
// made by the full timings at the end, which the wider last rung spends more on); and so on, until a cut
// would drop nothing (at most `kLastRung` left, or all within the screens' noise). Those are verified and
// timed in full (with more where the screens overstated a full timing: widen_round), and the close ones
// re-timed in turns as the exhaustive strategy does. It spends fewer launches than exhaustive, but still
// looks at every candidate once.
#include <algorithm>

#include "tuner/strategy/strategies.hpp"

namespace tunefuzz {

namespace {

constexpr int64_t kReduction = 4;     // survivors of a rung: a quarter (at least kLastRung) ...
constexpr int64_t kLaunchGrowth = 2;  // ... screened with twice the launches of the rung before
constexpr size_t kLastRung = 3;       // timed in full once no more than this many are left ...
constexpr size_t kLastRungMost = 6;   // ... or up to this many, all screened close to the fastest

class Halving : public SearchStrategy {
 public:
  explicit Halving(const SearchSettings& settings) : settings_(settings) {}

  std::optional<MeasureRound> next(const SearchState& state) override {
    MeasureRound round;
    if (state.rounds == 0) {
      round.baseline = true;
      round.screen_repeats = 1;
      for (const SearchCandidate& c : state.candidates) round.screen.push_back(c.id);
      launches_ = 1;
      return round;
    }
    if (!timed_) {
      // The rung's survivors, fastest on the latest screens first.
      std::vector<std::string> ranked;
      for (const std::string& id : by_screen(state))
        if (survivors_.empty() || std::find(survivors_.begin(), survivors_.end(), id) != survivors_.end())
          ranked.push_back(id);
      if (ranked.empty()) return std::nullopt;
      const size_t keep = survivors(ranked, state);
      if (keep < ranked.size()) {
        ranked.resize(keep);
        survivors_ = ranked;
        launches_ = std::min(launches_ * kLaunchGrowth, settings_.repeats);
        round.screen = ranked;
        round.screen_repeats = launches_;
        return round;
      }
      timed_ = true;
      round.time = ranked;
      return round;
    }
    if (!widened_) {  // screens that overstated a full timing: whatever they may have misranked
      widened_ = true;
      if (auto round = widen_round(state, static_cast<size_t>(settings_.finalists))) return round;
    }
    if (!turns_done_) {
      turns_done_ = true;
      return turns_round(state, close_to_best(state, kCloseFraction));
    }
    if (!settled_) {
      settled_ = true;
      return settle_round(state);
    }
    return std::nullopt;
  }

 private:
  // How many of `ranked` (fastest screen first) go on to the next rung: the fastest quarter, at least
  // kLastRung, and past it whatever screened within kCloseFraction of the fastest, up to kLastRungMost (a
  // screen's few launches read some large tiles several percent high: on the H200
  // record of 9855618 llm_mlp_down's winner screened fifth, 2.3% off, and a cut to three dropped it). All of
  // them when no more than kLastRung are left: those are timed in full.
  size_t survivors(const std::vector<std::string>& ranked, const SearchState& state) const {
    if (ranked.size() <= kLastRung) return ranked.size();
    size_t keep = std::max<size_t>(kLastRung, ranked.size() / kReduction);
    const size_t most = std::min(ranked.size(), std::max<size_t>(keep, kLastRungMost));
    const double best = state.screens.at(ranked.front());
    while (keep < most && state.screens.at(ranked[keep]) <= best * (1 + kCloseFraction)) ++keep;
    return keep;
  }

  SearchSettings settings_;
  std::vector<std::string> survivors_;
  int64_t launches_ = 1;
  bool timed_ = false;
  bool widened_ = false;
  bool turns_done_ = false;
  bool settled_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> halving_strategy(const SearchSettings& settings) {
  return std::make_unique<Halving>(settings);
}

}  // namespace tunefuzz
