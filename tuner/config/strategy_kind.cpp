// The names of the search strategies, as configs, the command line and journals spell them.
#include "tuner/config/strategy_kind.hpp"

namespace tunefuzz {

const char* to_string(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::exhaustive: return "exhaustive";
    case StrategyKind::halving: return "halving";
    case StrategyKind::model: return "model";
  }
  return "?";
}

const std::vector<StrategyKind>& all_strategies() {
  static const std::vector<StrategyKind> kinds = {StrategyKind::exhaustive, StrategyKind::halving,
                                                  StrategyKind::model};
  return kinds;
}

std::string strategy_names() {
  std::string names;
  const std::vector<StrategyKind>& kinds = all_strategies();
  for (size_t i = 0; i < kinds.size(); ++i)
    names += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + std::string(to_string(kinds[i]));
  return names;
}

std::optional<StrategyKind> parse_strategy(std::string_view name) {
  for (StrategyKind kind : all_strategies())
    if (name == to_string(kind)) return kind;
  return std::nullopt;
}

}  // namespace tunefuzz
