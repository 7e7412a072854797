#include <algorithm>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

SpaceStage space_stage(const Config& config) {
  SpaceStage stage;
  // The element types the problems ask for, in first-seen order.
  std::vector<TypePair> wanted;
  for (const Problem& p : config.problems) {
    const TypePair types{p.input, p.output};
    if (std::find(wanted.begin(), wanted.end(), types) == wanted.end()) wanted.push_back(types);
  }
  for (const TemplateSearch& search : config.templates) {
    const KernelTemplate& t = find_template(search.name, search.where);
    t.compile_arch(config.gpu.arch, search.where);  // a template this GPU cannot run is a config error
    const Space space(t, search, config.gpu.limits);
    SpaceReport report = space.prune();
    for (const TypePair& types : wanted) {
      if (std::find(t.supported_types.begin(), t.supported_types.end(), types) == t.supported_types.end())
        continue;
      for (const Point& point : report.kept) {
        Candidate candidate{&t, point, types};
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
