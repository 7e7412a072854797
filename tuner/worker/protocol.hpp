// The messages between the coordinator (tune, fuzz) and a worker process (tunefuzz-worker): a job file in,
// a result file out, both YAML, plus a progress file the worker appends to before each launch so that when
// it crashes or hangs the coordinator knows what it was doing. One job is one unit of work (a candidate to
// fuzz, a problem to time), so jobs can be spread over GPUs and machines without changing their meaning.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "fuzz/case.hpp"
#include "fuzz/triage.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz {

/// Seconds by phase (a job's, a stage's): adds each phase of `from` to `into`, a phase `into` lacks from 0.
inline void add_phase_seconds(std::map<std::string, double>& into,
                              const std::map<std::string, double>& from) {
  for (const auto& [phase, seconds] : from) into[phase] += seconds;
}

/// What the worker found on the machine.
struct FuzzJob {
  std::string candidate;  ///< Candidate::id()
  std::filesystem::path image;
  int64_t cases = 100;
  uint64_t seed = 0;
  int huge_weight = 0;  ///< fuzz::CaseSpace::huge_weight: how often C's offsets cross 2^31
  std::filesystem::path progress;
  /// Threads the worker's host-side judging may use (fuzz::set_host_threads); 0: the worker's default. It
  /// decides nothing about the verdict, only how fast it comes.
  int host_threads = 0;
};

struct FuzzFailure {
  fuzz::FailureClass failure_class = fuzz::FailureClass::incorrect;
  std::string subtype;  ///< IncorrectKind for `incorrect`, empty otherwise
  std::string message;
  fuzz::CaseRecord first_case;   ///< the case that failed first
  fuzz::CaseRecord shrunk_case;  ///< the smallest case that fails the same way
  int64_t cases_until_failure = 0;
  int64_t shrink_steps = 0;
  std::string reproduce;  ///< RapidCheck reproduce string (RC_PARAMS="reproduce=...")
  /// Non-zero: the case failed on the candidate's schedule-perturbed twin with this seed (TF_PERTURB).
  int64_t perturb = 0;
};

struct FuzzResult {
  bool passed = false;
  int64_t cases_run = 0;
  std::map<std::string, int64_t> coverage;  ///< case tag → cases that carried it
  std::optional<FuzzFailure> failure;
  /// Where the worker's time went, in seconds by phase (tuner/device/fuzzing.hpp's PhaseClock): context,
  /// load, space, make, upload, kernel, download, judge. Empty from a worker that does not time them.
  std::map<std::string, double> phase_seconds;
};

/// How the worker prepares each timed launch (tuner/device/timer.hpp), part of every screen's and timing's
/// store key: 1, L2 flushed by a memset over twice its size; 2, that memset and then a kernel reading it
/// back, so that the timed launch no longer pays for writing the memset's dirty lines back
/// (results/flush-probe-h200/).
inline constexpr int kTimerVersion = 2;

/// How a round's screens are taken, part of every screen's store key: 1, one candidate after another; 2, in
/// turns, launch by launch across the round's candidates (TimeJob::screen_in_turns), so that the card's
/// drift under its power cap hits them alike (results/campaign-h200-ad3b621/: screens one after another
/// drifted by up to 19% with three time workers on the GPU).
inline constexpr int kScreenVersion = 2;

/// One round of measurements of one problem (a strategy's MeasureRound, tuner/strategy/search.hpp): the
/// worker measures what the lists name, in this order (baseline, screens, full timings, turns), and decides
/// nothing; whoever runs the rounds picks what comes next and who wins.
/// cuBLAS's check on a problem's inputs (TimeBench::verify: the projections, then the exact check on integer
/// inputs), as an earlier campaign's worker made it: the verdict store keeps it (VerdictKind::baseline),
/// since nothing of ours decides it, and a worker whose cuBLAS is `cublas_version` takes it instead of
/// checking again.
struct BaselineCheck {
  std::string cublas_version;
  std::string message;  ///< why cuBLAS was out of the bound and timed anyway; empty when it was within
  double worst_error_ratio = 0;
  bool exact_verified = false;
};

struct TimeJob {
  Problem problem;
  struct Entry {
    std::string candidate;
    std::filesystem::path image;
  };
  std::vector<Entry> candidates;        ///< the image of every candidate the lists below name
  bool baseline = true;                 ///< verify and time cuBLAS, and the copy giving the bandwidth floor
  /// With `baseline`: cuBLAS's check from the store, taken when the worker's cuBLAS made it (it is then timed
  /// and not checked again).
  std::optional<BaselineCheck> baseline_check;
  std::vector<std::string> screen;      ///< a few timed launches each (screen_repeats)
  /// The screens taken in turns (one warm-up launch each, one after another, then screen_repeats turns of
  /// A B C ...); false: each candidate's launches one after another, as a round redone after a worker died
  /// during its turns is, so that the death is blamed on the one candidate running.
  bool screen_in_turns = true;
  std::vector<std::string> time;        ///< verified against the inputs, then timed with `repeats` launches
  std::vector<std::string> interleave;  ///< re-timed taking turns (A B ... A B ...), `repeats` turns each
  bool interleave_baseline = false;     ///< cuBLAS takes its turn among them
  int64_t warmup = 5;
  int64_t repeats = 30;        ///< timed launches per full timing, turns per re-timing
  int64_t screen_repeats = 3;  ///< timed launches per screen
  uint64_t seed = 0;
  /// Threads the host-side checks may use (the oracle's projections and exact elements); 0: the worker's
  /// default. Set on every job, since a serving worker may come to it from another stage's job.
  int host_threads = 0;
  /// With several time workers on one GPU (budgets.time_workers): the GPU's turn file, held while the worker
  /// has work on the device (tuner/device/gpu_turn.hpp); empty when the worker is alone on its GPU.
  std::filesystem::path gpu_turns;
  std::filesystem::path progress;
};

/// One implementation timed on one problem.
struct TimedEntry {
  std::string id;  ///< candidate id, or `cublas`
  /// timed (verified, full repeats) | screened (screening repeats only) | refused | incorrect | failed |
  /// crashed | hung
  std::string status;
  std::string message;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double tflops = 0;             ///< 2·M·N·K / median
  double worst_error_ratio = 0;  ///< oracle's worst error/bound on the verification run
  /// Set for finalists close to the best: the median and spread ((max - min) / median) of a re-timing in
  /// which they took turns (A B A B ...), so slow drift of the card hits all of them alike. 0 otherwise.
  double interleaved_median_ms = 0;
  double interleaved_spread = 0;
  /// The median of the candidate's screen when it was screened before it was timed in full (a screen's few
  /// launches read higher than a full timing on large problems), so that a replay of the record answers a
  /// screen with a screen. 0 when there was none, and in an entry whose status is `screened` (its median).
  double screen_ms = 0;
  /// The verification also ran the kernel on integer inputs and found every sampled element the exact value
  /// rounded once (TimeBench::verify; false where that check cannot be exact, and on entries not verified).
  bool exact_verified = false;
};

/// The least memory traffic of a problem (A and B read, C written, and read too when beta != 0) and the time
/// a device-to-device copy moving as many bytes takes on the same card, L2 flushed: the bandwidth floor a
/// memory-bound GEMM (decode) is judged against.
struct MemoryTraffic {
  int64_t bytes = 0;
  double copy_ms = 0;
};

struct TimeResult {
  std::string baseline_version;
  TimedEntry baseline;
  std::vector<TimedEntry> entries;
  MemoryTraffic traffic;
  /// Where the workers' time went, in seconds by phase (tuner/device/fuzzing.hpp's PhaseClock): context,
  /// inputs (made and uploaded), cublas (its handle), load (the images), baseline (cuBLAS verified and timed,
  /// and the copy floor), screen, verify (a finalist's run, download and check), time (its timed launches),
  /// interleave, report (the partial results written as they come); the coordinator adds dispatch (its
  /// round trips to the workers, less what they report). Empty from a worker that does not time them.
  std::map<std::string, double> phase_seconds;
  /// The worker checked cuBLAS on the inputs in this job (rather than taking the job's baseline_check): what
  /// the coordinator files in the store.
  bool baseline_checked = false;
};

/// Cases to replay on one candidate.
struct CaseSet {
  std::string candidate;
  std::filesystem::path image;
  std::vector<fuzz::CaseRecord> records;
};

/// Cases replayed in one process (a reproducer's case; the sanitizer replays, several candidates' in one
/// process under compute-sanitizer), set after set and in order, up to the first that fails; each `runs`
/// times to check determinism.
struct CaseJob {
  std::vector<CaseSet> sets;
  int64_t runs = 2;
  std::filesystem::path progress;
};

struct CaseResult {
  bool passed = false;        ///< no case failed (a refused case does not fail)
  bool refused = false;       ///< some case was refused: a size this candidate does not take
  std::string failure_class;  ///< empty when passed
  std::string subtype;
  std::string message;
};

YAML::Node to_yaml(const CaseJob& job);
CaseJob case_job_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const CaseResult& result);
CaseResult case_result_from_yaml(const YAML::Node& node);

YAML::Node to_yaml(const fuzz::CaseRecord& record);
fuzz::CaseRecord case_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const DeviceInfo& info);
DeviceInfo device_info_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const Problem& problem);
Problem problem_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const FuzzJob& job);
FuzzJob fuzz_job_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const FuzzResult& result);
FuzzResult fuzz_result_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const BaselineCheck& check);
BaselineCheck baseline_check_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const TimeJob& job);
TimeJob time_job_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const TimedEntry& entry);
TimedEntry timed_entry_from_yaml(const YAML::Node& node);
YAML::Node to_yaml(const TimeResult& result);
TimeResult time_result_from_yaml(const YAML::Node& node);

/// Writes a node as a YAML document, atomically, ending with its end line (yaml_end_line).
void write_yaml(const std::filesystem::path& path, const YAML::Node& node);
/// The last line of every YAML file the tool writes: `# end: N problems` for a results table or collection
/// (N: its problem rows, all tables together), `# end` otherwise. A file cut short loses it, so readers of
/// tables refuse a table without it, or whose count disagrees with the rows they read.
std::string yaml_end_line(const YAML::Node& node);
/// Reads a YAML document; throws Error{bad_input} naming the file on malformed input.
YAML::Node read_yaml(const std::filesystem::path& path);

}  // namespace tunefuzz
