// How much of each candidate's domain a campaign's cases reached, summarised per dimension in one line: the
// domain classes (fuzz/domain.hpp) its cases carried as coverage tags, against those its refusal accepts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// A candidate and the coverage tags of the cases it was fuzzed with (tag → cases).
struct CandidateCoverage {
  Candidate candidate;
  std::map<std::string, int64_t> coverage;
};

/// `domain classes reached / accepted (N candidates): m 64/64, n 64/64, ...` over all candidates (each
/// candidate's accepted classes probed from its refusal on a GPU of `sm_count` SMs); then, for up to `listed`
/// candidates that missed some, a line naming them, and how many more did.
std::string domain_coverage_summary(const std::vector<CandidateCoverage>& candidates, int64_t sm_count,
                                    size_t listed = 2);

}  // namespace tunefuzz
