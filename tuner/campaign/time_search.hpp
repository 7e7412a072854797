// One problem's timing as its strategy runs it: the strategy (tuner/strategy) asks for a round, a worker
// process measures it (tuner/device/time_job.cpp), the figures go back to the strategy, until it asks for no
// more; the winner is then chosen from what was measured. A worker that dies mid-round is blamed on the
// candidate its progress names (an entry crashed or hung) and the rest of the round runs in a fresh worker.
#pragma once

#include <string>
#include <vector>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

/// Times `problem` on `candidates` with options.strategy; worker files are named `time-<index>-<n>`. With
/// `gpu`, every worker of the problem is shown that GPU alone (and the timing records it).
ProblemTiming search_problem(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
                             const TimeOptions& options, size_t index, const Gpu* gpu = nullptr);

}  // namespace tunefuzz
