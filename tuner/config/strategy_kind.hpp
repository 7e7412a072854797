// The search strategies a campaign can pick (config `budgets.strategy`, `tune run --strategy`): a config's
// word for one of tuner/strategy's searches, declared here so that configs can name it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunefuzz {

enum class StrategyKind {
  exhaustive,  ///< screen every candidate, time the fastest few in full, re-time the close ones in turns
  halving,     ///< successive halving: rungs of more launches on fewer survivors, then the last few in full
  model,       ///< a cost model ranks the candidates, screens refine it, only the promising are measured
};
const char* to_string(StrategyKind kind);
std::optional<StrategyKind> parse_strategy(std::string_view name);
/// Every strategy, in the order of the enum (for listings and the replay).
const std::vector<StrategyKind>& all_strategies();
/// Their names for a message: "exhaustive, halving or model".
std::string strategy_names();

}  // namespace tunefuzz
