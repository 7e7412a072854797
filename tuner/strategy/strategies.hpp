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

/// The round that re-times `close` (timed candidates) taking turns, with cuBLAS when its timing stands; none
/// when fewer than two would take part.
std::optional<MeasureRound> turns_round(const SearchState& state, const std::vector<std::string>& close);

}  // namespace tunefuzz
