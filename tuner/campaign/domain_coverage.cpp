// The per-dimension summary of the domain classes a campaign's cases reached (fuzz run, tune run's fuzz
// stage), against each candidate's accepted classes probed from its refusal.
#include "tuner/campaign/domain_coverage.hpp"

#include <algorithm>
#include <functional>
#include <thread>

#include "fuzz/domain.hpp"
#include "fuzz/matrix.hpp"
#include "tuner/campaign/case_space.hpp"

namespace tunefuzz {

std::string domain_coverage_summary(const std::vector<CandidateCoverage>& candidates, int64_t sm_count,
                                    size_t listed) {
  // Each candidate's accepted classes, probed on the host's cores (one at a time, the 778 candidates of the
  // shipped h200.yaml took 1.5 s on the 2-core development machine, after a campaign's last stage).
  std::vector<std::vector<std::string>> accepted(candidates.size());
  std::vector<std::function<void()>> probes;
  for (size_t i = 0; i < candidates.size(); ++i)
    probes.push_back([&, i] {
      const fuzz::CaseSpace space = case_space_for(candidates[i].candidate, sm_count);
      std::vector<fuzz::CaseRecord> bases;
      for (const Layout& layout : space.layouts)
        for (const fuzz::CaseRecord& base : fuzz::probe_bases(space, layout)) bases.push_back(base);
      accepted[i] = fuzz::accepted_classes(space, bases, space.accepts);
    });
  fuzz::side_by_side(probes, std::max(1u, std::thread::hardware_concurrency()));

  std::map<std::string, std::pair<int64_t, int64_t>> by_dimension;  // dimension → (reached, accepted)
  std::vector<std::pair<std::string, std::string>> missed;          // candidate id, classes it missed
  for (size_t i = 0; i < candidates.size(); ++i) {
    const CandidateCoverage& entry = candidates[i];
    for (const std::string& tag : accepted[i]) {
      std::string dimension = tag.substr(0, tag.find_first_of("%="));
      if (dimension.ends_with("_tile")) dimension.resize(dimension.size() - 5);
      const bool reached = entry.coverage.count(tag) > 0;
      ++by_dimension[dimension].second;
      by_dimension[dimension].first += reached;
      if (reached) continue;
      if (missed.empty() || missed.back().first != entry.candidate.id())
        missed.push_back({entry.candidate.id(), ""});
      missed.back().second += " " + tag;
    }
  }
  std::string line =
      "domain classes reached / accepted (" + std::to_string(candidates.size()) + " candidates):";
  for (fuzz::Dimension d : fuzz::kDimensions) {
    const auto it = by_dimension.find(fuzz::to_string(d));
    if (it == by_dimension.end()) continue;
    line += std::string(d == fuzz::kDimensions.front() ? " " : ", ") + it->first + " " +
            std::to_string(it->second.first) + "/" + std::to_string(it->second.second);
  }
  for (size_t i = 0; i < std::min(listed, missed.size()); ++i) {
    const std::string& classes = missed[i].second;
    line += "\n  missed by " + missed[i].first + ":" +
            (classes.size() > 100 ? classes.substr(0, classes.rfind(' ', 100)) + " ..." : classes);
  }
  if (missed.size() > listed)
    line += "\n  and classes missed by " + std::to_string(missed.size() - listed) + " more candidates";
  return line;
}

}  // namespace tunefuzz
