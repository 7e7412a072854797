// `fuzz mutants` as a library: proof that the fuzzer catches a template's injected bugs. Each bug
// (KernelTemplate::mutants, TF_MUTANT in the source) is compiled into one base point, fuzzed with a budget of
// cases (a third on its schedule-perturbed twin), and a survivor replayed under compute-sanitizer once the
// unmutated candidate is seen to pass the same replays. A bug in code the base point does not compile (a
// cluster hand-off at a point without clusters) leaves the image as it was: no case can kill it, so it is
// reported as such and not fuzzed. Two halves: the plan compiles (no GPU), the run fuzzes and judges.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

struct MutantsSettings {
  std::string template_name;              ///< whose bugs (empty: the config's first template with a point)
  std::vector<std::string> mutant_names;  ///< only these (empty: every one the template declares)
  int jobs = 0;                           ///< compile threads (0: every core)
  std::filesystem::path work_directory;   ///< worker jobs, replays and reproducers
  int64_t cases = 200;                    ///< per mutant
  uint64_t seed = 0;
  int workers = 4;
  double timeout_s = 600;                 ///< per mutant's fuzz job (huge cases take seconds each)
  std::string sanitizer_tool = "synccheck";  ///< compute-sanitizer's tool for the survivors, or "none"
  /// Where each mutant's fuzz verdict is journalled as it is reached (empty: nowhere), so that a run killed
  /// at any moment keeps the verdicts it had (journal.hpp).
  std::filesystem::path journal;
  /// Carry on the run in `journal` (starting one when there is none): its verdicts are taken, the mutants
  /// it lacks are fuzzed. Refused when the journal's run had another base point, cases or seed.
  bool resume = false;
  std::string config_sha256;  ///< of the config's text, for the journal's campaign line
};

/// The base point and the compiled mutants, in code order, with the unmutated candidate (the sanitizer's
/// control) and the codes whose images are the control's.
struct MutantsPlan {
  Candidate base;
  CompiledCandidate control;
  std::vector<CompiledCandidate> mutants;
  std::set<int> same_code;  ///< mutant codes that compile to the unmutated image
};

/// The point bugs are injected into: of the first template the config searches (or the one named), the
/// template default if the config's space keeps it, else the first kept point; the element types of the
/// config's first problem that the template computes. Throws Error{bad_input} when there is none.
Candidate mutant_base(const Config& config, const SpaceStage& space, const std::string& template_name);

/// Picks the base, checks the names asked for (Error{bad_input} naming the known ones; Error{unsupported}
/// for a template without injected bugs) and compiles the control and the mutants. A mutant that spills is
/// compiled all the same: a bug may cost registers, and it is still a bug the fuzzer must see.
MutantsPlan plan_mutants(const Config& config, const SpaceStage& space, const MutantsSettings& settings);

enum class MutantOutcome {
  killed_by_cases,      ///< a fuzz case's output, crash or hang gave it away
  killed_by_sanitizer,  ///< the cases passed; a replay under compute-sanitizer reported it
  survived,             ///< every case passed, and the replays (if any) too
  inconclusive,         ///< the job ran out of time in host work before a case could judge it
  not_fuzzed,           ///< it did not compile (or was not fuzzed): `message` says why
  same_code,            ///< it compiles to the unmutated code at this base point
};
const char* to_string(MutantOutcome outcome);

struct MutantVerdict {
  std::string mutant;
  MutantOutcome outcome = MutantOutcome::survived;
  int64_t cases = 0;                           ///< cases until the kill, or run (survived)
  std::string failure_class;                   ///< e.g. `incorrect/nan`, `sanitizer/synccheck`
  std::optional<fuzz::CaseRecord> shrunk_case;  ///< the case that killed it (the sanitizer's: its replay)
  bool perturbed = false;                      ///< killed on the schedule-perturbed twin
  bool within_two_tiles = false;               ///< the shrunk case spans at most two tiles each way
  int64_t shrink_steps = 0;
  std::string message;                         ///< the failure, the tool's report, or why it was not fuzzed
  std::filesystem::path reproducer;
  bool killed() const {
    return outcome == MutantOutcome::killed_by_cases || outcome == MutantOutcome::killed_by_sanitizer;
  }
};

struct MutantsReport {
  std::string card, driver;
  Candidate base;
  int64_t cases = 0;
  uint64_t seed = 0;
  std::string sanitizer;          ///< `none` or `compute-sanitizer --tool TOOL`
  std::string sanitizer_control;  ///< why no mutant is judged by the sanitizer (the control fails it), or ""
  std::vector<MutantVerdict> mutants;  ///< in code order
  int survivors() const;
};

/// Fuzzes the plan's mutants on `device` and judges each; `on_verdict` hears each verdict as it is reached,
/// with the report so far (its head and the verdicts before). With a journal (settings.journal), fuzz
/// verdicts found there under their keys are not fuzzed again, and each new one is journalled as it comes;
/// a mutant that was running when two runs in a row died is quarantined and reported inconclusive. Throws
/// Error{compile} when the sanitizer is asked for and the unmutated candidate did not compile.
MutantsReport run_mutants(
    const MutantsPlan& plan, const Config& config, const DeviceInfo& device, const MutantsSettings& settings,
    const std::function<void(const MutantsReport& so_far, const MutantVerdict& verdict)>& on_verdict = {});

/// The report as `tunefuzz-mutants/1` YAML (docs/results-format.md), with the command line and config path
/// the caller ran it with.
YAML::Node to_yaml(const MutantsReport& report, const std::string& command, const std::string& config);

}  // namespace tunefuzz
