// Fuzz budget by stage (`budgets.fuzz_screen_cases`): every compiled candidate is screened with a few cases
// before timing; a problem's winner gets the full budget, on cases of its own, before it enters a table. A
// failure there demotes it (status `fuzz`) and the problem's next timed candidate is confirmed the same way,
// until each problem's winner passed or it has none.
#pragma once

#include <vector>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

/// The seed of the confirmation's cases: another stream than the screen's, so the winner's full budget is new
/// cases, not the screened ones again.
uint64_t confirmation_seed(uint64_t campaign_seed);

/// Confirms each problem's winner in `timings` with `full` (its cases, seed, journal and store; a candidate
/// that wins several problems is fuzzed once), demoting a winner that fails (status `fuzz`, its failure as the
/// message) until every winner is confirmed or a problem has none. Each confirmation is folded into the
/// candidate's entry of `fuzzed` (cases, perturbed cases, coverage; a failure makes the entry failed), and its
/// `confirmed` flag set, so a later call confirms only new winners. Returns how many winners were demoted.
int64_t confirm_winners(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed,
                        const std::vector<CompiledCandidate>& compiled, const FuzzOptions& full);

}  // namespace tunefuzz
