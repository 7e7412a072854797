#include "tuner/space/space.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace tunefuzz {

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
    for (int64_t value : given.values)
      if (!seen.insert(value).second)
        throw Error(ErrorKind::bad_input, "value " + std::to_string(value) + " is listed twice", given.where);
  }
  for (const ParameterDecl& decl : kernel_template.parameters) {
    std::vector<int64_t> values = {decl.default_value};
    for (const ParameterValues& given : search.space)
      if (given.name == decl.name) values = given.values;
    axes_.emplace_back(decl.name, std::move(values));
  }
}

int64_t Space::size() const {
  int64_t n = 1;
  for (const auto& [name, values] : axes_) n *= static_cast<int64_t>(values.size());
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
  size_t start = 0;
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
