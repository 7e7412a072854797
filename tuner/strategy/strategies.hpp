// The strategies behind make_strategy (tuner/strategy/search.hpp), each in its own file.
#pragma once

#include <memory>

#include "tuner/strategy/search.hpp"

namespace tunefuzz {

/// Finalists within this fraction of the fastest full timing are re-timed taking turns with cuBLAS.
inline constexpr double kCloseFraction = 0.03;

std::unique_ptr<SearchStrategy> exhaustive_strategy(const SearchSettings& settings);
std::unique_ptr<SearchStrategy> halving_strategy(const SearchSettings& settings);
std::unique_ptr<SearchStrategy> model_strategy(const SearchSettings& settings);

/// After a strategy's full timings: when one came out faster than its own screen by more than kCloseFraction,
/// the screens overstate some kernels' times at this problem's scale, by more for some than for others, and
/// may misrank them: the screens that could still win, corrected by the largest overstatement seen and
/// allowed twice the band, are then timed in full, fastest first, until `finalists` are (exhaustive's count;
/// 0: no cap); none otherwise. On the
/// H200 at d4942a0, llm_mlp_up's winner screened at 2.97 ms, eighth, and ran 2.52 ms timed in full, while the
/// 128x128 tiles that screened first ran 2.66 to 2.83: halving and the model-guided search timed only the
/// first few and came out 5.4% slower than the exhaustive search, which times eight.
std::optional<MeasureRound> widen_round(const SearchState& state, size_t finalists);

/// The round that re-times `close` (timed candidates) taking turns, with cuBLAS when its timing stands; none
/// when fewer than two would take part.
std::optional<MeasureRound> turns_round(const SearchState& state, const std::vector<std::string>& close);

/// After the turns: when the best turn-taking figure came out slower, by more than the band that chose who
/// took turns, than the sequential median of a timed candidate that took no turns (scaled by cuBLAS's own
/// ratio of the two figures, the card's drift), the turns are taken again with every such candidate (each
/// strategy's last round); none otherwise. Candidates only screened stay out: a screen's few launches are
/// too rough a figure to reopen the search on. A kernel can run slower after other kernels than after itself:
/// on the H200 at 90f69aa two gemm_mma finalists of vw_skinny_m3_rc ran 40 us in sequence and 56 us in turns,
/// cuBLAS 41 in both, while gemm_skinny, 3.6% off in sequence and so outside the band, ran 41 us in turns.
std::optional<MeasureRound> settle_round(const SearchState& state);

}  // namespace tunefuzz
