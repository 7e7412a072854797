// The coordinator's side of a worker: start tunefuzz-worker on a job file, wait with a watchdog, and say how
// it ended: finished (with its result), failed with an error it reported, crashed (killed by a signal, or its
// CUDA context poisoned), hung (killed at the time limit), or could not start (no driver, no binary).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace tunefuzz {

struct WorkerOutcome {
  enum class End { finished, error, crashed, hung, failed_to_start };
  End end = End::failed_to_start;
  int exit_code = -1;
  int signal = 0;
  YAML::Node result;  ///< the result document (may be partial, with an `error` key, when not finished)
  std::string last_progress;  ///< the last line of the progress file: what the worker was doing
  std::string stderr_tail;    ///< the end of its standard error
  double seconds = 0;
  /// Killed because one kernel launch ran longer than the kernel deadline (a deadlock on the device), not
  /// because the whole job ran out of time.
  bool kernel_overran = false;
  /// Killed (End::hung) while a kernel ran: past the kernel deadline, or at the job's limit with the progress
  /// file last saying "kernel". False for a kill during host work, which is a timeout rather than a hang.
  bool killed_in_kernel() const {
    return end == End::hung && (kernel_overran || last_progress.rfind("kernel ", 0) == 0);
  }
  double kernel_deadline_s = 0;

  /// One line: `finished`, `crashed (signal 11: Segmentation fault) during: case m=...`,
  /// `hung: killed after 120 s during: ...`.
  std::string describe() const;
};

/// Where tunefuzz-worker is: $TUNEFUZZ_WORKER, else beside the running executable.
std::filesystem::path worker_executable();

/// Runs `job` (its `progress` path, if any, is read back on a crash) in a fresh worker process. `directory`
/// holds the job, result and log files and must exist. Kills the worker's process group after `timeout_s`,
/// or, with `kernel_deadline_s` > 0, as soon as the progress file has said for that long that a kernel is
/// running (its last line starts with `kernel `: tuner/device/fuzzing.hpp): a kernel that does not return is
/// told from a job that is merely long (huge cases spend seconds on the host). `wrapper` (e.g.
/// {"compute-sanitizer", "--tool", "memcheck"}) is put in front of the worker's command line. `gpu` >= 0
/// shows the worker only that GPU (its index among those this process sees; worker_environment), so the
/// worker's device 0 is it; -1 leaves the environment as it is.
/// `reuse` (without a wrapper) hands the job to a worker that lives for many jobs (`tunefuzz-worker
/// --serve`), kept by the calling thread for its next job on the same GPU, and when the thread ends by the
/// next thread that asks for one started the same way (start_serving_workers): no process start, driver and
/// context per job. The outcome is the one a worker of one job would give; a worker whose job did not finish,
/// or found a failure (`passed: false`), is let go, so the next job starts a fresh process.
WorkerOutcome run_worker(const YAML::Node& job, const std::filesystem::path& directory,
                         const std::string& name, double timeout_s,
                         const std::vector<std::string>& wrapper = {}, double kernel_deadline_s = 0,
                         int gpu = -1, bool reuse = false);

/// Starts serving workers (`tunefuzz-worker --serve`) for `gpu` until `count` are idle, their logs in
/// `directory`, for run_worker's `reuse` jobs to take: each makes its CUDA context as it starts (one at a
/// time on some hosts: 0.26 s each on the four-H200 machines), so started ahead of the jobs they do that
/// while the caller does something else. A serving worker whose thread ends is kept idle the same way for the
/// next thread's jobs.
void start_serving_workers(int gpu, int count, const std::filesystem::path& directory);

/// Lets every idle serving worker go (each exits at the end of its input); the process's end does it too.
void release_idle_workers();

/// `environment` (NAME=VALUE entries) with what every worker runs under unless the coordinator's environment
/// already says otherwise: CUDA_DEVICE_MAX_CONNECTIONS=1. A worker issues its work on one stream, so one
/// hardware queue per context costs it nothing, and a context with one queue is made about three times faster
/// when many processes make theirs at once: 16 workers over two H200s had every context after 1.4 s instead
/// of 2.9 s (results/context-probe-h200x2/).
std::vector<std::string> with_worker_defaults(std::vector<std::string> environment);

/// The environment `environment` (NAME=VALUE entries) with CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES
/// naming only GPU `gpu` of those it shows: entry `gpu` of the list a variable already holds (so `--gpus 1`
/// under CUDA_VISIBLE_DEVICES=2,3 is card 3), else `gpu` itself. `gpu` < 0: `environment` unchanged.
std::vector<std::string> worker_environment(const std::vector<std::string>& environment, int gpu);

/// The `wrapper` that runs a worker under compute-sanitizer's `tool` (memcheck, racecheck, synccheck or
/// initcheck), exiting 9 on any report; throws Error{bad_input} naming `--sanitize TOOL` for another tool.
/// The program is `compute-sanitizer` from the PATH, or $TUNEFUZZ_COMPUTE_SANITIZER.
std::vector<std::string> sanitizer_wrapper(const std::string& tool);

/// The first line of compute-sanitizer's output that reports something (an error, a hazard, a barrier
/// misuse), without the tool's `=========` prefix; else its summary line; else empty.
std::string sanitizer_report(const std::string& output);

}  // namespace tunefuzz
