// Sanitizers on what ships: before a problem's winner enters a table it is replayed on a few small cases of
// its own domain under each of compute-sanitizer's tools (memcheck, racecheck, synccheck, initcheck). A
// finding demotes it and the problem's next timed candidate is tried, until one passes every tool or none is
// left. Verdicts go to the verdict store, so a rerun replays only winners it has not seen. The cases come
// from the caller (fuzz::sanitizer_cases over the candidate's case space), so this stage
// needs nothing of the fuzzing library.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/case.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/cluster/cluster.hpp"

namespace tunefuzz {

/// compute-sanitizer's tools a winner must pass, in the order they run.
const std::vector<std::string>& shipping_sanitizers();

struct SanitizerFinding {
  std::string tool;
  fuzz::CaseRecord record;  ///< the case it was running
  std::string message;      ///< the tool's report line, or the worker's end
  bool hung = false;        ///< the replay ran past its deadline (a loaded machine can do that): not stored
};

/// Replays `candidate` (compiled as `image`) on each of `cases` under compute-sanitizer's `tool`, one worker
/// per case (at `gpu`: its rank, and only that GPU when its index is >= 0: cluster::run_job); the first case that does not end cleanly (a
/// report, a crash, a hang, a wrong output), or nullopt. Throws Error{unsupported} when compute-sanitizer
/// cannot be started.
std::optional<SanitizerFinding> sanitizer_finding(const Candidate& candidate, const std::filesystem::path& image,
                                                  const std::string& tool,
                                                  const std::vector<fuzz::CaseRecord>& cases,
                                                  const std::filesystem::path& work_directory,
                                                  const std::string& name, cluster::Place gpu = {});

struct SanitizeOptions {
  std::filesystem::path work_directory;
  std::vector<std::string> tools = shipping_sanitizers();
  int workers = 4;
  /// `--gpus`: `workers` replays at once on each of these GPUs; empty: on what this process sees.
  std::vector<Gpu> gpus = {};
  /// The small cases a candidate is replayed on.
  std::function<std::vector<fuzz::CaseRecord>(const Candidate&)> cases_for;
  /// Where verdicts of earlier campaigns are kept (tuner/campaign/verdict_keys.hpp: sanitizer_key): a
  /// (winner, tool) pair found there is not replayed again, and each new verdict but a hang is filed.
  StoreUse store;
};

/// Checks each problem's winner under every tool (a candidate that wins several problems is checked once),
/// demoting a winner with a finding (status `sanitizer`, the finding as its message) until each problem's
/// winner passes all tools or it has none. Records the tools passed in ProblemTiming::sanitizers.
void sanitize_winners(std::vector<ProblemTiming>& timings, const std::vector<FuzzedCandidate>& fuzzed,
                      const SanitizeOptions& options);

}  // namespace tunefuzz
