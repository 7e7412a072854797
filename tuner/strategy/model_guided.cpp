// The model-guided strategy: the cost model (cost_model.hpp) ranks every candidate before anything runs; the
// first round screens the best-ranked few of each template, which fits the model's factor per template and
// measures how far off it is; later rounds screen only candidates the refined model says could still beat
// the fastest screen (by more than its error), best first, a few at a time; one more round screens the rest
// of the groups closest to the fastest screen (members the model cannot tell apart), a member of each in
// turn; the fastest screens are then verified and timed in full (with more where the screens overstated a
// full timing: widen_round), and those whose full timings stay within kCloseFraction of the fastest are
// re-timed in turns with each other and cuBLAS (exhaustive's last round).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tuner/strategy/cost_model.hpp"
#include "tuner/strategy/strategies.hpp"

namespace tunefuzz {

namespace {

constexpr size_t kFirstRound = 4;         // first round: the model's best tile shapes, one candidate each ...
constexpr size_t kFirstRoundPer = 25;     // ... one more per this many candidates ...
constexpr size_t kFirstRoundMost = 8;     // ... up to this many
constexpr size_t kProbesPerTemplate = 1;  // ... and at least the best of each template
constexpr size_t kBatch = 3;              // later rounds: screens per round
constexpr double kScreenShare = 0.25;     // screens stop at this share of the candidates ...
constexpr size_t kScreenFloor = 2;        // ... or this many, if more
constexpr double kSiblingWindow = 0.35;   // then the groups of screens this close to the fastest, whole ...
constexpr double kSiblingShare = 0.1;     // ... up to this share of the candidates more ...
constexpr size_t kSiblingLeast = 1;       // ... or at least this many
constexpr double kLeastError = 0.05;      // the model is never trusted closer than this
constexpr double kFinalWindow = 0.03;     // screens this close to the fastest are timed in full ...
constexpr size_t kMostFinalists = 2;      // ... at most this many, ...
constexpr size_t kMoreFinalists = 3;      // ... or this many where the problem has many candidates ...
constexpr size_t kManyCandidates = 50;    // ... (this many or more)
constexpr size_t kFewCandidates = 8;      // fewer than this: every candidate is screened in the first round

// Why the first round grows with the candidates, the sibling window is 0.35 and large problems time three
// finalists: on the H200 journal of 86ec184 (BN 192 and more split-K points in the space), with 4 first
// probes, a 0.2 window and 2 finalists, the model missed large_k_256x256x262144 by 3.2% (its winner's group,
// 64x128 tiles with 16 splits, ranked 8th by the raw model, was never screened; and its 8-stage member ran
// more than 20% faster than the 4-stage one, a difference the model does not see) and odd_1000 by 2.3% (the
// winner's screen was third within 3% of the fastest). Replays: results/strategy-replay-*.yaml.
// Why a problem with few candidates is screened whole: on the H200 vendor-weak record of 1e7764f,
// vw_tf32_rc_2047x4097x1025 had 6 candidates; the model probed one of each tile group and a sibling, missed
// the winner (the 2-CTA-cluster twin of a probed 128x128 tile, 10% faster than it) and picked a tile 3.6%
// slower. Screening all six costs two screens more than that search did; below eight candidates the model
// saves a few screens at most.

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 1.0 : values[values.size() / 2];
}

class ModelGuided : public SearchStrategy {
 public:
  explicit ModelGuided(const SearchSettings& settings) : settings_(settings) {}

  std::optional<MeasureRound> next(const SearchState& state) override {
    if (state.rounds == 0) return first_round(state);
    if (!final_done_) {
      if (auto round = screening_round(state)) return round;
      if (!siblings_done_) {
        siblings_done_ = true;
        if (auto round = siblings_round(state)) return round;
      }
      final_done_ = true;
      return final_round(state);
    }
    if (!widened_) {  // screens that overstated a full timing: whatever they may have misranked
      widened_ = true;
      if (auto round = widen_round(state, static_cast<size_t>(settings_.finalists))) return round;
    }
    if (!turns_done_) {  // as exhaustive does: only the finalists whose full timings stay close take turns
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
  // The family the model's factor is fitted to: the template, and apart from it its points that swap their
  // operands (SWAP_AB), whose kernels tile the problem the other way round and keep C out of shared memory.
  std::string template_of(const SearchState& state, const std::string& id) const {
    const Candidate& c = state.candidates[index_.at(id)].candidate;
    const KernelTemplate& t = *c.kernel_template;
    return t.swaps_operands && t.swaps_operands(c.point) ? t.name + " (transposed)" : t.name;
  }

  // Candidates of one template with one output tile (BM x BN), one load path (VEC, PACK), one shared-memory
  // layout (SWIZZLE), one split of K, one rasterisation (GROUP_M: on a wide problem it alone moved a time by
  // a third) and one form (SWAP_AB: its BM x BN tiles Cᵀ) form a group: the model's misses are alike within a
  // group and differ between groups.
  std::string group_of(const SearchState& state, const std::string& id) const {
    const Candidate& c = state.candidates[index_.at(id)].candidate;
    std::string group =
        c.kernel_template->name + "/" + std::to_string(c.point["BM"]) + "x" + std::to_string(c.point["BN"]);
    for (const char* name : {"VEC", "PACK", "SWIZZLE", "SPLIT_K", "GROUP_M", "SWAP_AB"})
      if (c.kernel_template->parameter(name)) group += "/" + std::to_string(c.point[name]);
    return group;
  }

  std::optional<MeasureRound> first_round(const SearchState& state) {
    for (size_t i = 0; i < state.candidates.size(); ++i) {
      const SearchCandidate& c = state.candidates[i];
      index_[c.id] = i;
      raw_[c.id] = estimate_cost(c, state.shape, state.limits).total_ms();
    }
    MeasureRound round;
    round.baseline = true;
    if (state.candidates.size() < kFewCandidates) {
      for (const SearchCandidate& c : state.candidates) round.screen.push_back(c.id);
      if (round.screen.empty()) return std::nullopt;
      return round;
    }
    const size_t first = std::clamp(state.candidates.size() / kFirstRoundPer, kFirstRound, kFirstRoundMost);
    std::set<std::string> groups;
    std::map<std::string, size_t> per_template;
    for (const std::string& id : ranked_by(raw_, state)) {
      if (!groups.insert(group_of(state, id)).second) continue;  // one candidate per group
      size_t& probes = per_template[template_of(state, id)];
      if (round.screen.size() >= first && probes >= kProbesPerTemplate) continue;
      round.screen.push_back(id);
      ++probes;
    }
    if (round.screen.empty()) return std::nullopt;
    return round;
  }

  // Candidates by a figure, smallest first (ties: the candidates' order).
  static std::vector<std::string> ranked_by(const std::map<std::string, double>& figure,
                                            const SearchState& state) {
    std::vector<std::string> ids;
    for (const SearchCandidate& c : state.candidates) ids.push_back(c.id);
    std::stable_sort(ids.begin(), ids.end(),
                     [&](const std::string& a, const std::string& b) { return figure.at(a) < figure.at(b); });
    return ids;
  }

  // The model refined by the screens: a factor per group that has screens (the median of screen /
  // prediction), else per template, else over all; and its error, the worst miss (as a log ratio) of the
  // template-level factor among the screens, at least kLeastError.
  std::map<std::string, double> refined(const SearchState& state, double& error) const {
    std::map<std::string, std::vector<double>> by_group, by_template;
    std::vector<double> all;
    for (const auto& [id, ms] : state.screens) {
      const double ratio = ms / raw_.at(id);
      by_group[group_of(state, id)].push_back(ratio);
      by_template[template_of(state, id)].push_back(ratio);
      all.push_back(ratio);
    }
    const double overall = median(all);
    const auto factor = [&](const std::map<std::string, std::vector<double>>& ratios, const std::string& key,
                            double fallback) {
      const auto it = ratios.find(key);
      return it == ratios.end() ? fallback : median(it->second);
    };
    error = kLeastError;
    for (const auto& [id, ms] : state.screens)
      error = std::max(
          error,
          std::abs(std::log(ms / (raw_.at(id) * factor(by_template, template_of(state, id), overall)))));
    std::map<std::string, double> prediction;
    for (const SearchCandidate& c : state.candidates) {
      const double of_template = factor(by_template, template_of(state, c.id), overall);
      prediction[c.id] = raw_.at(c.id) * factor(by_group, group_of(state, c.id), of_template);
    }
    return prediction;
  }

  std::optional<MeasureRound> screening_round(const SearchState& state) {
    const size_t budget =
        std::max(kScreenFloor, static_cast<size_t>(std::ceil(kScreenShare * state.candidates.size())));
    if (state.screens.size() >= budget || state.screens.empty()) return std::nullopt;
    double error = 0;
    const std::map<std::string, double> prediction = refined(state, error);
    const double best = state.screens.at(by_screen(state).front());
    MeasureRound round;
    for (const std::string& id : ranked_by(prediction, state)) {
      if (state.entries.count(id)) continue;  // measured (or refused) already
      if (prediction.at(id) * std::exp(-error) >= best) break;
      round.screen.push_back(id);
      if (round.screen.size() == kBatch || state.screens.size() + round.screen.size() >= budget) break;
    }
    if (round.screen.empty()) return std::nullopt;
    return round;
  }

  // The model cannot tell a group's members apart beyond its raw estimate (A_REGS, clusters and stages are
  // not in it), so one member's screen says nothing of how its siblings differ. Once the model sees nothing
  // left to beat the fastest screen, the unscreened members of the groups whose best screen is within
  // kSiblingWindow of the fastest are screened, one member of each group in turn, closest group first, up to
  // kSiblingShare of the candidates.
  // Without this round the replay of the H200 record of 0ae2b49 missed square_8192 and llm_mlp_up by 5-6%
  // (their recorded winners have A_REGS=1); the window is wide because one screen is a noisy figure (a replay
  // answers some candidates with their full timing).

  std::optional<MeasureRound> siblings_round(const SearchState& state) const {
    const std::vector<std::string> ranked = by_screen(state);
    if (ranked.empty()) return std::nullopt;
    const double best = state.screens.at(ranked.front());
    const auto budget = std::max<size_t>(
        kSiblingLeast, static_cast<size_t>(kSiblingShare * static_cast<double>(state.candidates.size())));
    // The close groups in order of their best screen, and each one's unscreened members.
    std::vector<std::vector<std::string>> members;
    std::set<std::string> groups;
    for (const std::string& screened : ranked) {
      if (state.screens.at(screened) > best * (1 + kSiblingWindow)) break;
      const std::string group = group_of(state, screened);
      if (!groups.insert(group).second) continue;
      members.emplace_back();
      for (const SearchCandidate& c : state.candidates)
        if (!state.entries.count(c.id) && group_of(state, c.id) == group) members.back().push_back(c.id);
    }
    // One member of each group in turn, closest group first, so that a budget smaller than the groups does not
    // go to the closest group alone.
    MeasureRound round;
    for (size_t turn = 0; round.screen.size() < budget; ++turn) {
      bool any = false;
      for (const std::vector<std::string>& group : members)
        if (turn < group.size() && round.screen.size() < budget) {
          round.screen.push_back(group[turn]);
          any = true;
        }
      if (!any) break;
    }
    if (round.screen.empty()) return std::nullopt;
    return round;
  }

  std::optional<MeasureRound> final_round(const SearchState& state) const {
    const std::vector<std::string> ranked = by_screen(state);
    if (ranked.empty()) return std::nullopt;
    MeasureRound round;
    const double best = state.screens.at(ranked.front());
    const size_t most = state.candidates.size() >= kManyCandidates ? kMoreFinalists : kMostFinalists;
    for (const std::string& id : ranked)
      if (round.time.size() < most && state.screens.at(id) <= best * (1 + kFinalWindow))
        round.time.push_back(id);
    return round;
  }

  SearchSettings settings_;
  std::map<std::string, size_t> index_;
  std::map<std::string, double> raw_;
  bool siblings_done_ = false;
  bool final_done_ = false;
  bool widened_ = false;
  bool turns_done_ = false;
  bool settled_ = false;
};

}  // namespace

std::unique_ptr<SearchStrategy> model_strategy(const SearchSettings& settings) {
  return std::make_unique<ModelGuided>(settings);
}

}  // namespace tunefuzz
