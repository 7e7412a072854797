// Successive halving: every candidate is screened with one launch, then only the fastest quarter goes on to a
// rung of four times the launches, and so on, until at most `kLastRung` are left; those are verified and
// timed in full, and the close ones re-timed in turns as the exhaustive strategy does. It spends fewer
// launches than exhaustive on large spaces, but still looks at every candidate once.
#include <algorithm>

#include "tuner/strategy/strategies.hpp"

namespace tunefuzz {

namespace {

constexpr int64_t kReduction = 4;  // survivors of a rung: a quarter (at least kLastRung)
constexpr size_t kLastRung = 3;    // timed in full once no more than this many are left

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
      if (ranked.size() > kLastRung) {
        const size_t keep = std::max<size_t>(kLastRung, ranked.size() / kReduction);
        ranked.resize(keep);
        survivors_ = ranked;
        launches_ = std::min(launches_ * kReduction, settings_.repeats);
        round.screen = ranked;
        round.screen_repeats = launches_;
        return round;
      }
      timed_ = true;
      round.time = ranked;
      return round;
    }
    if (!turns_done_) {
      turns_done_ = true;
      return turns_round(state, close_to_best(state, kCloseFraction));
    }
    return std::nullopt;
  }

 private:
  SearchSettings settings_;
  std::vector<std::string> survivors_;
  int64_t launches_ = 1;
  bool timed_ = false;
  bool turns_done_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> halving_strategy(const SearchSettings& settings) {
  return std::make_unique<Halving>(settings);
}

}  // namespace tunefuzz
