// The stages of a campaign, each a function from the previous stage's records to its own:
//   space   : config → kept points × element types = candidates      (no compiler, no GPU)
//   compile : candidates → compiled images + resources, pruned on spills, occupancy, slow paths (NVRTC,
//   cache) fuzz    : compiled → RapidCheck campaign per candidate in worker processes (GPU) time    : fuzz
//   survivors × problems → verified timings vs cuBLAS in worker processes (GPU)
// Each record names its candidate by Candidate::id(), so any stage's work can be split across processes,
// GPUs or machines without changing what it means.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend/compiler.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/occupancy.hpp"
#include "tuner/config/config.hpp"
#include "tuner/space/space.hpp"
#include "tuner/store/verdict_store.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {

// ---- space ----
struct SpaceStage {
  std::vector<SpaceReport> reports;   ///< one per template in the config
  /// Kept points × the element types the problems need, each accepting at least one of the problems of its
  /// types (a candidate no problem of the config could be timed on is left out).
  std::vector<Candidate> candidates;
};

/// Throws Error{bad_input} (with the config location) for unknown templates or parameters.
SpaceStage space_stage(const Config& config);

// ---- compile ----
enum class CompileStatus { compiled, compile_failed, spills, occupancy, slow_path };
const char* to_string(CompileStatus status);

struct CompiledCandidate {
  Candidate candidate;
  CompileStatus status = CompileStatus::compiled;
  std::string message;  ///< why it was pruned, or the compiler's error
  std::string key;      ///< cache key
  std::filesystem::path image;
  KernelResources resources;  ///< of the main kernel
  Occupancy occupancy;
  bool from_cache = false;
  double seconds = 0;  ///< compile time (0 when cached)
  /// The schedule-perturbed twin's image (CompileOptions::perturb_seed; empty when none was asked for): the
  /// same candidate with TF_PERTURB, fuzzed for part of its cases, never timed.
  std::filesystem::path perturbed_image;
  int64_t perturb = 0;  ///< the twin's seed
};

struct CompileOptions {
  std::filesystem::path template_directory;
  int jobs = 0;  ///< threads; 0 = all cores
  /// Non-zero: also compile each kept candidate's schedule-perturbed twin (templates/perturb.h), seeded from
  /// this and the candidate id. A candidate whose twin does not compile cannot be fuzzed as the campaign
  /// requires, and is marked compile_failed.
  uint64_t perturb_seed = 0;
  bool quiet = false;  ///< no progress lines (a compile in the background of another stage)
};

/// The perturbation seed (1 .. 2^32 - 1) of a candidate's twin in a campaign seeded with `campaign_seed`.
int64_t perturb_seed(uint64_t campaign_seed, const std::string& candidate_id);

std::vector<CompiledCandidate> compile_stage(const std::vector<Candidate>& candidates, const Config& config,
                                             const Compiler& compiler, const KernelCache& cache,
                                             const CompileOptions& options);

/// A campaign's use of the verdict store: where it is (null: none, `--no-store`), and the card and driver
/// the verdicts are measured on (part of every key).
struct StoreUse {
  const VerdictStore* store = nullptr;
  std::string card;
  std::string driver;
};

/// One of the host's GPUs a campaign runs workers on (`--gpus`): its index among the GPUs this process sees
/// (run_worker's `gpu`) and the card as a worker shown only it reports it.
struct Gpu {
  int rank = 0;  ///< the MPI rank whose node has it (tuner/cluster); 0 without mpirun
  int index = -1;
  std::string name;
  std::string uuid;
};

// ---- fuzz ----
struct FuzzedCandidate {
  Candidate candidate;
  std::filesystem::path image;
  uint64_t seed = 0;
  bool passed = false;
  int64_t cases_run = 0;
  int64_t perturbed_cases_run = 0;  ///< of cases_run, those on the schedule-perturbed twin
  /// The plain image's cases (its first job), and the wall time of the worker jobs that ran them and the twin's
  /// (process start, image load, cases), so that a campaign can say what the perturbation costs per case;
  /// 0 seconds: not timed (a verdict from the store, or from a journal written before they were kept).
  /// tune run with a screen (budgets.fuzz_screen_cases): this winner also got the full budget
  /// (confirm_winners), whose cases and coverage are counted above, after `screen_cases` cases of its screen;
  /// `confirmation_seed` replays the full budget's cases as `seed` does the screen's.
  bool confirmed = false;
  int64_t screen_cases = 0;
  uint64_t confirmation_seed = 0;
  int64_t plain_cases_run = 0;
  double plain_seconds = 0, perturbed_seconds = 0;
  std::map<std::string, int64_t> coverage;
  std::optional<FuzzFailure> failure;  ///< set when it failed (class hang/crash from the watchdog too)
  std::string worker_log;              ///< the worker's stderr tail when it did not finish cleanly
  std::filesystem::path reproducer;    ///< written by write_reproducers for a failure
  /// The image the failing case ran on: `image`, or the perturbed twin's when failure->perturb is set.
  std::filesystem::path failed_image;
  /// Running when an earlier run of the campaign died: not retried (unless asked), not timed.
  bool quarantined = false;
  /// Not started: the stage's FuzzOptions::no_job_after had passed (neither passed nor failed).
  bool not_started = false;
  /// Taken from the verdict store: an earlier campaign fuzzed this very image with the same budget and seed.
  bool from_store = false;
  /// The workers' seconds by phase over this candidate's jobs (FuzzResult::phase_seconds, summed).
  std::map<std::string, double> phase_seconds;
};

struct FuzzOptions {
  std::filesystem::path work_directory;
  int64_t cases = 100;
  uint64_t seed = 0;
  int workers = 4;
  double timeout_s = 120;
  int huge_weight = 0;             ///< see fuzz::CaseSpace::huge_weight
  Journal* journal = nullptr;      ///< records each step; on resume, finished steps are taken from it
  bool retry_quarantined = false;  ///< fuzz again the candidates an earlier run died on
  /// A launch that has not returned after this long is a hang, however long the whole job may take: a fuzz
  /// case's kernel finishes in well under a second (the huge cases write 2^31 elements in milliseconds and
  /// spend their seconds on the host), while a deadlocked pipeline never returns.
  double kernel_deadline_s = 30;
  /// `fuzz run --sanitize TOOL`: the wrapper (sanitizer_wrapper) under which a further share of each
  /// candidate's cases (sanitized_cases(cases)) runs once its other cases passed; empty: none.
  std::vector<std::string> sanitizer = {};
  /// No candidate's job starts after this moment (`fuzz run --budget`): the jobs running finish, and the
  /// candidates left come back not_started. Unset: every candidate runs.
  std::optional<std::chrono::steady_clock::time_point> no_job_after = std::nullopt;
  /// Verdicts found in the store are taken from it; new ones are filed there.
  StoreUse store = {};
  /// When this call of the campaign began fuzzing (`fuzz run`): each verdict it journals records the seconds
  /// since (`call_seconds`), so a resumed campaign knows how much of its budget a killed call spent.
  std::optional<std::chrono::steady_clock::time_point> call_started = std::nullopt;
  /// `--gpus`: one pool of `workers` per GPU, each worker shown only its GPU, all taking candidates from one
  /// queue. Empty: one pool whose workers see what this process sees.
  std::vector<Gpu> gpus = {};
};

/// Candidate seeds derive from the campaign seed and the candidate id, so a rerun fuzzes the same cases.
uint64_t candidate_seed(uint64_t campaign_seed, const std::string& candidate_id);

/// Threads each fuzz worker may use for host-side judging (FuzzJob::host_threads): the node's `hardware`
/// threads shared among the `workers` × `pools` workers running on it at once (at least 1, at most 16).
/// $TUNEFUZZ_HOST_THREADS, when set, overrides it (0: each worker takes its default, up to 16).
int worker_host_threads(unsigned hardware, int workers, size_t pools);

/// Of a candidate's `cases`, how many run on its schedule-perturbed twin (a third; none below 3 cases).
int64_t perturbed_cases(int64_t cases);
/// How many cases run under `fuzz run --sanitize` beside `cases` (a tenth, at least one): instrumented
/// kernels run tens of times slower.
int64_t sanitized_cases(int64_t cases);

std::vector<FuzzedCandidate> fuzz_stage(const std::vector<CompiledCandidate>& compiled,
                                        const FuzzOptions& options);

/// Writes a reproducer file (tuner/campaign/reproducer.hpp) for every failed candidate into `directory` and
/// records its path in the candidate's record.
void write_reproducers(std::vector<FuzzedCandidate>& fuzzed, const std::filesystem::path& directory,
                       const std::filesystem::path& template_directory, const DeviceInfo& device,
                       const std::string& arch);

// ---- time ----
struct ProblemTiming {
  Problem problem;
  std::vector<std::string> quarantined;  ///< candidates left out: an earlier run died while timing them
  std::string baseline_version;
  TimedEntry baseline;
  std::vector<TimedEntry> entries;   ///< every candidate that could run it (timed, screened, incorrect, ...)
  MemoryTraffic traffic;             ///< least bytes moved, and a copy of as many bytes timed on the card
  /// compute-sanitizer tools the winner was replayed under without a finding (sanitize_winners); empty when
  /// it was not checked.
  std::vector<std::string> sanitizers;
  bool from_store = false;  ///< taken from the verdict store: an earlier campaign timed the same candidates
  StrategyKind strategy = StrategyKind::exhaustive;  ///< the search that chose what to measure and the winner
  int64_t evaluations = 0;  ///< candidate measurements it made (screens, full timings, re-timings in turns)
  int64_t rounds = 0;       ///< measurement rounds the strategy asked for (0: not recorded)
  /// The GPU whose worker timed it, candidates and cuBLAS alike (with `--gpus`; unset otherwise, and for a
  /// timing taken from the verdict store).
  std::optional<Gpu> gpu;
  /// Where its search's time went, in seconds by phase (TimeResult::phase_seconds), over every round.
  std::map<std::string, double> phase_seconds;
  const TimedEntry* winner() const;  ///< fastest `timed` entry, or null
  /// cuBLAS's time over the winner's: on the medians of the round where they took turns when both have one
  /// (the card's drift cancels), else on their own medians; 0 without a winner or a timed baseline.
  double ratio_vs_baseline() const;
};

struct TimeOptions {
  std::filesystem::path work_directory;
  int64_t warmup = 5;
  int64_t repeats = 30;
  int64_t screen_repeats = 3;
  int64_t finalists = 8;
  uint64_t seed = 0;
  double timeout_s = 600;
  StrategyKind strategy = StrategyKind::exhaustive;  ///< what to measure next and who wins (tuner/strategy)
  GpuLimits limits = {};                             ///< the card's, for the model-guided strategy's cost model
  Journal* journal = nullptr;
  bool retry_quarantined = false;
  /// Timings found in the store (same problem, same candidates and images, budgets, card and driver) are
  /// taken from it; new ones are filed there.
  StoreUse store = {};
  /// `--gpus`: as many problems timed at once as there are GPUs, each problem wholly on one (its baseline
  /// too). Empty: one problem at a time, on what this process sees.
  std::vector<Gpu> gpus = {};
  /// Problems timed at once on each GPU (budgets.time_workers), their workers taking turns on the device
  /// through a turn file per GPU in the work directory (gpu_turns_file).
  int workers_per_gpu = 1;
  /// Called with each problem's timing as soon as it is there (timed, or taken from the journal or the
  /// store), from the stage's threads: two calls may run at once.
  std::function<void(const ProblemTiming&)> on_timed = {};
};

/// The order the time stage takes problems in: the config's with one problem at a time; with several at once
/// (`slots`: GPUs times workers per GPU), the longest searches first (by a rough estimate from each problem's
/// size and candidate count), so that the last to finish are short and all end together (longest-first list
/// scheduling). Ties keep the config's order.
std::vector<size_t> time_order(const std::vector<Problem>& problems, const std::vector<size_t>& candidates,
                               size_t slots);
/// The turn file the time workers of a GPU share under `work`: the GPU of that rank, or (gpu -1) what the
/// rank's workers see.
std::filesystem::path gpu_turns_file(const std::filesystem::path& work, int rank, int gpu);
std::vector<ProblemTiming> time_stage(const std::vector<Problem>& problems,
                                      const std::vector<FuzzedCandidate>& fuzzed, const TimeOptions& options);

}  // namespace tunefuzz
