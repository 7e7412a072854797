#include <algorithm>

#include "runtime/templates/gemm_rules.hpp"
#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

namespace {

/// The point with LAYOUTS set to `mask`.
Point with_layouts(const Point& point, int64_t mask) {
  std::vector<std::pair<std::string, int64_t>> values = point.values();
  for (auto& [name, value] : values)
    if (name == kLayoutsParameter) value = mask;
  return Point(std::move(values));
}

/// Whether the candidate computes some problem of `layout`: its refusal accepts a 64- or 8-row problem of it
/// whose rows are aligned or one whose rows are not (PACK=1 points refuse what needs no packing, others what
/// does; a point that swaps its operands takes M up to its BN only).
bool computes(const Candidate& c, const Layout& layout) {
  for (const int64_t rows : {64, 8})
    for (const int64_t size : {256, 255}) {
      Problem p;
      p.m = rows, p.n = size, p.k = size, p.layout = layout;
      if (!c.kernel_template->refusal(c.point, shape_of(p))) return true;
    }
  return false;
}

/// Whether a candidate narrowed to the orders of its LAYOUTS still serves some problem: its constraints hold
/// (A_REGS=1 needs RR or RC) and it computes a problem of some storage order (an fp8 point without PACK
/// computes RC alone; a point that swaps its operands computes the orders whose transposed form it has).
bool serves_some(const Candidate& c, const GpuLimits& limits) {
  const auto& rules = c.kernel_template->constraints;
  if (!std::all_of(rules.begin(), rules.end(), [&](const Constraint& r) { return r.holds(c.point, limits); }))
    return false;
  const auto& layouts = all_layouts();
  return std::any_of(layouts.begin(), layouts.end(), [&](const Layout& l) { return computes(c, l); });
}

/// Whether the candidate accepts one of the config's problems of its element types: one that serves none
/// could never be timed, so compiling and fuzzing it would be work for nothing.
bool serves_a_problem(const Candidate& c, const std::vector<Problem>& problems) {
  return std::any_of(problems.begin(), problems.end(), [&](const Problem& p) {
    return TypePair{p.input, p.output} == c.types && !c.kernel_template->refusal(c.point, shape_of(p));
  });
}

bool searches(const TemplateSearch& search, const std::string& parameter) {
  return std::any_of(search.space.begin(), search.space.end(),
                     [&](const ParameterValues& v) { return v.name == parameter; });
}

}  // namespace

SpaceStage space_stage(const Config& config) {
  SpaceStage stage;
  // The element types the problems ask for, in first-seen order, and the storage orders each is asked in or
  // run in (a problem's canonical form may read A or B in the other order: canonical_form), and the orders
  // its transposed form reads, which points that swap their operands run (transposed_form).
  std::vector<TypePair> wanted;
  std::vector<int64_t> layouts, swapped_layouts;
  for (const Problem& p : config.problems) {
    const TypePair types{p.input, p.output};
    const int64_t bits = layout_bit(p.layout) | layout_bit(canonical_form(shape_of(p)).shape.layout);
    const int64_t swapped_bits = layout_bit(transposed_form(shape_of(p)).shape.layout);
    const auto at = std::find(wanted.begin(), wanted.end(), types);
    if (at == wanted.end()) {
      wanted.push_back(types);
      layouts.push_back(bits);
      swapped_layouts.push_back(swapped_bits);
    } else {
      layouts[static_cast<size_t>(at - wanted.begin())] |= bits;
      swapped_layouts[static_cast<size_t>(at - wanted.begin())] |= swapped_bits;
    }
  }
  for (const TemplateSearch& search : config.templates) {
    const KernelTemplate& t = find_template(search.name, search.where);
    t.compile_arch(config.gpu.arch, search.where);  // a template this GPU cannot run is a config error
    const Space space(t, search, config.gpu.limits);
    SpaceReport report = space.prune();
    // Where the config leaves LAYOUTS to the campaign, each candidate exports the storage orders its element
    // types' problems use, no more (each order is a whole kernel to compile); a point that computes none of
    // them (A_REGS=1 with only column-major A asked for, fp8 without PACK with only RR) is no candidate.
    const bool narrow = t.parameter(kLayoutsParameter) && !searches(search, kLayoutsParameter);
    for (size_t w = 0; w < wanted.size(); ++w) {
      const TypePair& types = wanted[w];
      if (std::find(t.supported_types.begin(), t.supported_types.end(), types) == t.supported_types.end())
        continue;
      for (const Point& kept : report.kept) {
        const bool swaps = t.swaps_operands && t.swaps_operands(kept);
        Candidate candidate{&t, narrow ? with_layouts(kept, swaps ? swapped_layouts[w] : layouts[w]) : kept,
                            types};
        if (narrow && !serves_some(candidate, config.gpu.limits)) continue;
        if (!serves_a_problem(candidate, config.problems)) continue;
        // Two spaces of one template may overlap: each candidate is kept once.
        const bool seen = std::any_of(stage.candidates.begin(), stage.candidates.end(),
                                      [&](const Candidate& c) { return c.id() == candidate.id(); });
        if (!seen) stage.candidates.push_back(std::move(candidate));
      }
    }
    stage.reports.push_back(std::move(report));
  }
  return stage;
}

}  // namespace tunefuzz
