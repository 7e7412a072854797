// Fuzz budget by stage (`budgets.fuzz_screen_cases`): every compiled candidate is screened with a few cases
// before timing; a problem's winner gets the full budget, on cases of its own, before it enters a table. A
// failure there demotes it (status `fuzz`) and the problem's next timed candidate is confirmed the same way,
// until each problem's winner passed or it has none. Only then are schedule-perturbed twins needed: a
// screened campaign compiles them for the winners alone (on an H200 the twins of all 454 candidates of the
// shipped config took 260 of a cold campaign's 412 s of compiling).
#pragma once

#include <functional>
#include <vector>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

/// Whether `config` screens its fuzz budget: budgets.fuzz_screen_cases set and below fuzz_cases.
bool fuzz_is_screened(const Config& config);

/// Compiles the schedule-perturbed twins of `candidates` (returning each with its image and its twin's).
using TwinCompiler = std::function<std::vector<CompiledCandidate>(const std::vector<Candidate>&)>;

/// The seed of the confirmation's cases: another stream than the screen's, so the winner's full budget is new
/// cases, not the screened ones again.
uint64_t confirmation_seed(uint64_t campaign_seed);

/// Confirms each problem's winner in `timings` with `full` (its cases, seed, journal and store; a candidate
/// that wins several problems is fuzzed once), demoting a winner that fails (status `fuzz`, its failure as the
/// message) until every winner is confirmed or a problem has none. Each confirmation is folded into the
/// candidate's entry of `fuzzed` (cases, perturbed cases, coverage; a failure makes the entry failed), and its
/// `confirmed` flag set, so a later call confirms only new winners. A winner compiled without its twin gets
/// one from `twins` first (when given; a twin that does not compile demotes the winner, as a failure would).
/// Returns how many winners were demoted.
int64_t confirm_winners(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed,
                        const std::vector<CompiledCandidate>& compiled, const FuzzOptions& full,
                        const TwinCompiler& twins = {});

}  // namespace tunefuzz
