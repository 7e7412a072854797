// What the space tests share: a device's limits, points of a template's space, how a space's verdicts read
// (pruned counts per rule, the rules an explained point breaks), and the law that every rule can fire alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"
#include "tuner/space/space.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz::test {

/// An H100 SXM as the driver reports it; the other limits keep their defaults (1024 threads per block,
/// 255 registers per thread, 2048 threads and 32 blocks per SM, 1024 bytes reserved per block).
inline GpuLimits h100() {
  GpuLimits limits;
  limits.shared_memory_per_block_optin = 232448;
  limits.shared_memory_per_sm = 233472;
  limits.registers_per_sm = 65536;
  limits.sm_count = 132;
  return limits;
}

/// `t`'s default point with `overrides` applied; a name `t` does not declare is a mistake of the test.
inline Point point_with(const KernelTemplate& t,
                        std::initializer_list<std::pair<const char*, int64_t>> overrides) {
  std::vector<std::pair<std::string, int64_t>> values = t.default_point().values();
  for (const auto& [name, value] : overrides) {
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    if (it == values.end()) throw Error(ErrorKind::internal, std::string("test names no parameter ") + name);
    it->second = value;
  }
  return Point(std::move(values));
}

/// A config's search over template `name`: `space` lists values, the rest take the template's defaults.
inline TemplateSearch search_of(const std::string& name, std::vector<ParameterValues> space) {
  TemplateSearch s;
  s.name = name;
  s.space = std::move(space);
  return s;
}

/// Counts of a report by constraint name.
inline std::map<std::string, int64_t> pruned_counts(const SpaceReport& report) {
  std::map<std::string, int64_t> counts;
  for (const PruneCount& p : report.pruned) counts[p.constraint] = p.count;
  return counts;
}

/// The names of the constraints an explanation says fail, in template order.
inline std::vector<std::string> failing(const Explanation& e) {
  std::vector<std::string> names;
  for (const auto& [constraint, holds] : e.verdicts)
    if (!holds) names.push_back(constraint->name);
  return names;
}

/// The explanation of `assignment` in `space`. --explain refuses values below a parameter's minimum (zero and
/// negative sizes); a config may still list them, and the `positive` rule prunes them there: such an
/// assignment is explained as the one point of a space that lists exactly its values.
inline Explanation explain_anywhere(const Space& space, const std::string& assignment) {
  try {
    return space.explain(assignment);
  } catch (const Error& e) {
    if (e.message().find("out of range") == std::string::npos) throw;
  }
  TemplateSearch search;
  search.name = space.kernel_template().name;
  for (size_t start = 0; start < assignment.size();) {
    const size_t end = std::min(assignment.find(',', start), assignment.size());
    const std::string part = assignment.substr(start, end - start);
    const size_t eq = part.find('=');
    search.space.push_back({part.substr(0, eq), {std::stoll(part.substr(eq + 1))}, {}});
    start = end + 1;
  }
  return Space(space.kernel_template(), search, space.limits()).explain("");
}

/// The law "every constraint can be the one that fires": each of `breaks` (rule, assignment) is pruned by
/// that rule and no other, every rule of the space's template has at least one, and none names a rule the
/// template lacks.
inline void expect_every_rule_fires_alone(const Space& space,
                                          const std::vector<std::pair<std::string, std::string>>& breaks) {
  const std::vector<Constraint>& rules = space.kernel_template().constraints;
  for (const Constraint& c : rules) {
    SCOPED_TRACE(c.name);
    int points = 0;
    for (const auto& [name, assignment] : breaks) {
      if (name != c.name) continue;
      ++points;
      const Explanation e = explain_anywhere(space, assignment);
      EXPECT_FALSE(e.kept()) << assignment;
      EXPECT_EQ(failing(e), std::vector<std::string>{c.name}) << assignment;
    }
    EXPECT_GT(points, 0) << "no test point breaks constraint '" << c.name << "': add one";
  }
  for (const auto& [name, assignment] : breaks)  // no test point for a rule that is gone
    EXPECT_TRUE(std::any_of(rules.begin(), rules.end(), [&](const Constraint& c) { return c.name == name; }))
        << name;
}

}  // namespace tunefuzz::test
