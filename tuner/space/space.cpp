#include "tuner/space/space.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <set>

namespace tunefuzz {

namespace {

/// Why `value` is outside the parameter's range [minimum, kMaxParameterValue], or nullopt.
std::optional<std::string> out_of_range(const ParameterDecl& decl, int64_t value) {
  if (value >= decl.minimum && value <= kMaxParameterValue) return std::nullopt;
  return decl.name + "=" + std::to_string(value) + " is out of range: " + decl.name + " takes " +
         std::to_string(decl.minimum) + " to " + std::to_string(kMaxParameterValue);
}

}  // namespace

bool Explanation::kept() const {
  return std::all_of(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.second; });
}

Space::Space(const KernelTemplate& kernel_template, const TemplateSearch& search, const GpuLimits& limits)
    : template_(&kernel_template), limits_(limits) {
  for (const ParameterValues& given : search.space) {
    if (!kernel_template.parameter(given.name)) {
      std::string known;
      for (const auto& decl : kernel_template.parameters) known += (known.empty() ? "" : ", ") + decl.name;
      throw Error(ErrorKind::bad_input,
                  "template " + kernel_template.name + " has no parameter '" + given.name +
                      "' (known: " + known + ")",
                  given.where);
    }
    std::set<int64_t> seen;
    for (int64_t value : given.values) {
      if (!seen.insert(value).second)
        throw Error(ErrorKind::bad_input, "value " + std::to_string(value) + " is listed twice", given.where);
      // Zero and negative values are the `positive` and switch rules' to prune and explain; beyond the
      // bound no formula is safe from overflow.
      if (value < -kMaxParameterValue || value > kMaxParameterValue)
        throw Error(ErrorKind::bad_input,
                    given.name + "=" + std::to_string(value) + " is out of range: values lie within +-" +
                        std::to_string(kMaxParameterValue),
                    given.where);
    }
  }
  for (const ParameterDecl& decl : kernel_template.parameters) {
    std::vector<int64_t> values = {decl.default_value};
    for (const ParameterValues& given : search.space)
      if (given.name == decl.name) values = given.values;
    axes_.emplace_back(decl.name, std::move(values));
  }
  if (size() > kMaxSpacePoints)
    throw Error(ErrorKind::bad_input,
                "the space of " + kernel_template.name + " has " +
                    (size() == std::numeric_limits<int64_t>::max() ? "more than 2^63" : std::to_string(size())) +
                    " points, more than the " + std::to_string(kMaxSpacePoints) +
                    " one search may enumerate; list fewer values",
                search.where);
}

int64_t Space::size() const {
  int64_t n = 1;
  for (const auto& [name, values] : axes_) {
    const auto count = static_cast<int64_t>(values.size());
    if (n > std::numeric_limits<int64_t>::max() / count) return std::numeric_limits<int64_t>::max();
    n *= count;
  }
  return n;
}

SpaceReport Space::prune() const {
  SpaceReport report;
  report.kernel_template = template_;
  for (const Constraint& c : template_->constraints) report.pruned.push_back({c.name, c.reason, 0});
  std::vector<size_t> index(axes_.size(), 0);  // odometer over the axes, last axis fastest
  const int64_t total = size();
  for (int64_t i = 0; i < total; ++i) {
    std::vector<std::pair<std::string, int64_t>> values;
    for (size_t a = 0; a < axes_.size(); ++a) values.emplace_back(axes_[a].first, axes_[a].second[index[a]]);
    Point point(std::move(values));
    ++report.enumerated;
    bool kept = true;
    for (size_t c = 0; c < template_->constraints.size() && kept; ++c)
      if (!template_->constraints[c].holds(point, limits_)) {
        ++report.pruned[c].count;
        kept = false;
      }
    if (kept) report.kept.push_back(std::move(point));
    for (size_t a = axes_.size(); a-- > 0;) {
      if (++index[a] < axes_[a].second.size()) break;
      index[a] = 0;
    }
  }
  return report;
}

Explanation Space::explain(const std::string& assignment) const {
  // Start from the config's value where it lists exactly one, else the template default.
  std::vector<std::pair<std::string, int64_t>> values;
  for (size_t a = 0; a < axes_.size(); ++a)
    values.emplace_back(axes_[a].first, axes_[a].second.size() == 1 ? axes_[a].second.front()
                                                                    : template_->parameters[a].default_value);
  std::set<std::string> named;
  size_t start = 0;
  if (assignment.ends_with(","))
    throw Error(ErrorKind::bad_input, "cannot read '" + assignment + "' in --explain: it ends with a comma");
  while (start < assignment.size()) {
    size_t end = assignment.find(',', start);
    if (end == std::string::npos) end = assignment.size();
    const std::string part = assignment.substr(start, end - start);
    const size_t eq = part.find('=');
    const std::string name = eq == std::string::npos ? part : part.substr(0, eq);
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    int64_t value = 0;
    const char* digits = part.data() + (eq == std::string::npos ? part.size() : eq + 1);
    const auto [ptr, error] = std::from_chars(digits, part.data() + part.size(), value);
    if (eq == std::string::npos || it == values.end() || error != std::errc() ||
        ptr != part.data() + part.size())
      throw Error(ErrorKind::bad_input, "cannot read '" + part +
                                            "' in --explain: expected NAME=INTEGER with NAME a "
                                            "parameter of " +
                                            template_->name);
    if (!named.insert(name).second)
      throw Error(ErrorKind::bad_input, "--explain names " + name + " twice; give each parameter once");
    if (const auto why = out_of_range(*template_->parameter(name), value))
      throw Error(ErrorKind::bad_input, "--explain " + *why);
    it->second = value;
    start = end + 1;
  }
  Explanation e;
  e.point = Point(values);
  for (size_t a = 0; a < axes_.size(); ++a)
    if (std::find(axes_[a].second.begin(), axes_[a].second.end(), values[a].second) ==
        axes_[a].second.end()) {
      e.in_config_space = false;
      e.not_in_space.push_back(axes_[a].first);
    }
  for (const Constraint& c : template_->constraints) e.verdicts.emplace_back(&c, c.holds(e.point, limits_));
  e.shared_memory_bytes = template_->shared_memory_bytes(e.point);
  e.threads = template_->threads_per_block(e.point);
  return e;
}

}  // namespace tunefuzz
