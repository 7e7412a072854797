// What decides a campaign's verdicts, as the keys they are filed under in the verdict store
// (tuner/store/verdict_store.hpp). An image counts by its code digest (code_sha256: its sections but the
// debug information). A fuzz verdict: the candidate (launch parameters are not in the image), the code
// digests of its image and of its schedule-perturbed twin's, the cases (and how many on the twin and under a
// sanitizer), its seed, the huge-case weight, the kernel deadline, the case generator's version, the card
// and the driver. A problem's timing: what the problem computes (its name does not matter), every candidate
// timed on it with its image's digest, the strategy, the timing budgets and seed, the card and the driver
// (and the clocks, which the worker does not report: recorded as unknown). One candidate's screen on a
// problem: what the problem computes, the candidate and its image's digest, warm-up, the screen's launches,
// the seed, card and driver (clocks unknown). A winner's sanitizer replays: the candidate, its image's
// digest, the tool and the program run as compute-sanitizer, the cases, the case generator's version, the
// card and the driver (a compute-sanitizer upgraded without a new driver is not seen: clear the store's
// `sanitizer` folder after one). cuBLAS's check on a problem's inputs: what the problem computes, the inputs'
// and the oracle's versions, the seed, our launch code's version (how cuBLAS is called), card and driver;
// the cuBLAS version is in the verdict, and a worker with another one checks again.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

/// code_sha256 (runtime/backend/elf_image.hpp) of a file, computed once per path in a process (images do not
/// change under a path).
std::string image_code_sha256(const std::filesystem::path& image);

VerdictKey fuzz_verdict_key(const CompiledCandidate& compiled, const FuzzOptions& options);
/// The digest of that key: what a journal's `fuzzed` event is filed under.
std::string fuzz_verdict_digest(const CompiledCandidate& compiled, const FuzzOptions& options);

VerdictKey sanitizer_key(const Candidate& candidate, const std::filesystem::path& image,
                         const std::vector<std::string>& wrapper, const std::vector<fuzz::CaseRecord>& cases,
                         const StoreUse& use);

VerdictKey screen_key(const Problem& problem, const FuzzedCandidate& candidate, int64_t screen_repeats,
                      const TimeOptions& options);

VerdictKey baseline_key(const Problem& problem, const TimeOptions& options);

VerdictKey timing_key(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
                      const TimeOptions& options);

}  // namespace tunefuzz
