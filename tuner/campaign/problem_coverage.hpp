// Which candidates serve each problem of a config, and, for a problem none serves, which parameter values of
// which template would: the check `tune space` and `tune run` make before any work, so a campaign never
// spends hours to end with a problem nobody can compute; and why a problem ended one without a winner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

/// A point of a template that would serve a problem no candidate serves: it passes every constraint against
/// the GPU's limits and the template's refusal accepts the problem.
struct Suggestion {
  const KernelTemplate* kernel_template = nullptr;
  Point point;
  /// `VEC=1` (the values that differ from a point the config keeps, or from the template default when the
  /// config keeps none of the template), comma separated.
  std::string changes;
  bool searched = false;  ///< the config keeps points of the template (else the change is from its default)
};

struct ProblemCandidates {
  Problem problem;
  int64_t candidates = 0;               ///< space-stage candidates of its element types that accept it
  std::vector<Suggestion> suggestions;  ///< when `candidates` is 0: at most one per template
};

/// For each problem of `config`, the candidates of `stage` that accept it; for those with none, the
/// smallest change (one parameter, else two) of each template that computes its element types on the
/// config's GPU, searched over the config's values, the template's defaults and powers of two up to 256.
std::vector<ProblemCandidates> candidates_per_problem(const Config& config, const SpaceStage& stage);

/// One line per problem without a candidate: its name and shape, and the suggestions (or that no template
/// here computes its element types and layout).
std::vector<std::string> uncovered_problem_lines(const std::vector<ProblemCandidates>& coverage);

/// Why `timing`'s problem ended a campaign without a winner, in one line naming it: no candidate accepts it
/// (and what would serve it), or the stage that removed those that do: compilation (counts per prune
/// reason), fuzzing (counts per failure class, quarantined or not fuzzed), or verification and timing
/// (counts per status).
std::string why_no_winner(const ProblemTiming& timing, const ProblemCandidates& coverage,
                          const std::vector<CompiledCandidate>& compiled,
                          const std::vector<FuzzedCandidate>& fuzzed);

/// `m x n x k precision->output layout`, for messages.
std::string describe_problem(const Problem& problem);

}  // namespace tunefuzz
