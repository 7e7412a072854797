// The search space of one template under one config: the cartesian product of the config's value lists
// (parameters it leaves out take the template default), pruned statically by the template's constraints
// against the GPU's limits. Nothing here compiles or runs anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/config/config.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// Most points one template search may enumerate (the product of its value lists' lengths).
inline constexpr int64_t kMaxSpacePoints = 1'000'000;

/// How many points one constraint pruned (each pruned point is counted under the first rule it breaks).
struct PruneCount {
  std::string constraint;
  std::string reason;
  int64_t count = 0;
};

struct SpaceReport {
  const KernelTemplate* kernel_template = nullptr;
  int64_t enumerated = 0;
  std::vector<PruneCount> pruned;  ///< one entry per constraint, in the template's order
  std::vector<Point> kept;
};

/// Why one point is kept or pruned: every constraint's verdict, plus the derived figures.
struct Explanation {
  Point point;
  bool in_config_space = true;  ///< every value is one the config lists (or the default, if not listed)
  std::vector<std::string> not_in_space;  ///< parameters whose value the config does not list
  std::vector<std::pair<const Constraint*, bool>> verdicts;
  int64_t shared_memory_bytes = 0;
  int64_t threads = 0;
  bool kept() const;
};

class Space {
 public:
  /// Checks the config's parameter names and values against the template; throws Error{bad_input} with the
  /// config location of the first unknown parameter or duplicate value.
  Space(const KernelTemplate& kernel_template, const TemplateSearch& search, const GpuLimits& limits);

  const KernelTemplate& kernel_template() const { return *template_; }
  const GpuLimits& limits() const { return limits_; }
  /// Number of points before pruning.
  int64_t size() const;
  SpaceReport prune() const;
  /// `assignment` is `NAME=VALUE,...`; parameters it leaves out take the template default. A parameter named
  /// twice, or a value below the parameter's minimum (0 or 1) or above kMaxParameterValue, is Error{bad_input}
  /// naming it (a config may still list such values: the `positive` and switch rules prune them).
  Explanation explain(const std::string& assignment) const;

 private:
  const KernelTemplate* template_;
  GpuLimits limits_;
  std::vector<std::pair<std::string, std::vector<int64_t>>> axes_;  ///< in template parameter order
};

}  // namespace tunefuzz
