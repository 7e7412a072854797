// The steps `tune` and `fuzz` share before and at the GPU: load a config, build its candidates and compile
// them (through the cache), then find the GPU and check it is the one the config was written for.
#pragma once

#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "tuner/campaign/gpus.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/common/error.hpp"

namespace tunefuzz {

struct Prepared {
  Config config;
  SpaceStage space;
  std::vector<CompiledCandidate> compiled;
  std::string compiler;  ///< e.g. `nvrtc 13.0`
};

/// Whether a compile also builds each kept candidate's schedule-perturbed twin (campaigns that fuzz do);
/// `unless_screened`: unless the config screens its fuzz budget (fuzz_is_screened), whose winners get theirs
/// at confirmation.
enum class Twins { none, perturbed, unless_screened };

/// Loads `config_file`, enumerates and prunes its spaces, compiles every candidate on `jobs` threads (0: all
/// cores). `extra` candidates (e.g. mutants) are compiled too, after the config's own.
Prepared prepare(const std::filesystem::path& config_file, int jobs, Twins twins,
                 const std::vector<Candidate>& extra = {});

/// Compiles `candidates` for `config`'s arch through the default cache (with perturbed twins seeded from the
/// config's seed when asked); `quiet`: without a word on the console.
std::vector<CompiledCandidate> compile_candidates(const Config& config,
                                                  const std::vector<Candidate>& candidates, int jobs,
                                                  Twins twins, std::string* compiler_version = nullptr,
                                                  bool quiet = false);

/// Probes the GPU in a worker, in a scratch folder (nothing is written where the campaign's files go until
/// there is a GPU). Throws Error{no_device} (with the reason) when there is none, Error{bad_input} when its
/// arch is not the config's; prints a warning for each limit the config states differently.
DeviceInfo require_device(const Config& config);

/// require_device for a campaign over `choice` (`--gpus`): probes the chosen GPUs into `gpus` (probe_gpus:
/// one model, indices that exist) and checks their card against the config as require_device does. Without
/// `--gpus` it is require_device, and `gpus` stays empty. Over MPI ranks (rank 0), `gpus` then gets every
/// other rank's GPUs too (cluster_gpus), so the campaign's pools send jobs to them.
DeviceInfo require_devices(const Config& config, const GpuChoice& choice, std::vector<Gpu>& gpus);

/// require_devices on another thread, started before the candidates compile, which then also starts the fuzz
/// stage's serving workers (`budgets.fuzz_workers` per GPU of this rank, start_serving_workers) in
/// `work_directory`, created only once the probe finds the GPU: each worker makes its CUDA context while the
/// compile runs (some hosts make them one at a time: 8.2 s for 32 workers on four H200s). Not under mpirun,
/// where require_devices talks to the other ranks: there get() probes in the caller's thread.
class EarlyDevices {
 public:
  EarlyDevices(const Config& config, const GpuChoice& choice, std::filesystem::path work_directory);
  EarlyDevices(const EarlyDevices&) = delete;  // the probe's thread holds on to this object
  EarlyDevices& operator=(const EarlyDevices&) = delete;
  /// What require_devices returns (its `gpus` into `gpus`), or what it threw, rethrown.
  DeviceInfo get(std::vector<Gpu>& gpus);

 private:
  struct Probe {
    DeviceInfo device;
    std::vector<Gpu> gpus;
    std::optional<Error> error;
  };
  Config config_;
  GpuChoice choice_;
  std::filesystem::path work_directory_;
  std::future<Probe> probe_;
};

/// What a rank > 0 does in `tune run` and `fuzz run` once its share is compiled: reports its GPUs for
/// `choice` to rank 0 and runs the jobs rank 0 sends until told to stop (tuner/cluster). Returns the exit
/// status, 0: a rank without a GPU says so to rank 0, whose campaign fails naming it.
int serve_rank(const GpuChoice& choice);

}  // namespace tunefuzz
