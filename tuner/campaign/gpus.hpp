// `--gpus`: which of the host's GPUs one campaign uses. Each chosen GPU gets its own pool of workers, each
// worker shown only that GPU; one table holds one card model, so GPUs of different models are refused.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tuner/campaign/stages.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz {

/// What `--gpus` asked for: `all`, or distinct GPU indices (`0,2,3`) among those this process sees.
struct GpuChoice {
  bool all = false;
  std::vector<int> indices;
  /// False without `--gpus`: the campaign runs as it always has, its workers seeing what this process sees.
  bool given() const { return all || !indices.empty(); }
};

/// Parses `all` or a comma-separated list of distinct indices 0 to 1023; anything else (empty, a sign, a
/// letter, an index twice) throws Error{bad_input} naming `--gpus VALUE` and what is expected.
GpuChoice parse_gpu_choice(const std::string& text);
/// parse_gpu_choice's complaint about `text` without the flag's name (a command line's validator, which
/// names it), or empty when it parses.
std::string gpu_choice_error(const std::string& text);

/// Probes the host (how many GPUs this process sees), then each chosen GPU in a worker shown only it. Throws
/// Error{no_device} with the probe's reason when there is no GPU; Error{bad_input} for an index beyond the
/// GPUs present, or for GPUs of more than one model (named with their indices). `first`, when given,
/// receives the first chosen GPU's whole report.
std::vector<Gpu> probe_gpus(const GpuChoice& choice, const std::filesystem::path& work_directory,
                            DeviceInfo* first = nullptr);

/// `gpu` as the journal, the table (`timed_on`) and a rank's report write it: `rank` (when not 0), `index`,
/// `name`, `uuid` (when known); and back.
YAML::Node to_yaml(const Gpu& gpu);
Gpu gpu_from_yaml(const YAML::Node& node);

/// Where a worker job for `gpu` runs (tuner/cluster).
inline cluster::Place place_of(const Gpu& gpu) { return {gpu.rank, gpu.index}; }

/// A campaign over MPI ranks (tuner/cluster), on rank 0: `local` (this rank's GPUs from probe_gpus, or empty
/// without `--gpus`: then the one GPU `device` names, as every worker sees it) followed by each other rank's
/// report, in rank order. Throws Error{no_device} naming a rank that has no usable GPU, Error{bad_input} for a
/// card of another model than `device` (one table holds one card model).
std::vector<Gpu> cluster_gpus(std::vector<Gpu> local, const DeviceInfo& device);

/// What a rank > 0 reports to rank 0 (cluster::serve): its GPUs for `choice` (probe_gpus; without `--gpus`,
/// the one its workers see, index -1), or the error that stopped the probe.
YAML::Node rank_gpu_report(const GpuChoice& choice, const std::filesystem::path& work_directory);

/// `0 (NVIDIA H100 80GB HBM3, GPU-...), 1 (...)`: the GPUs as a note names them (`rank 1 GPU 0 (...)` for
/// another rank's).
std::string describe(const std::vector<Gpu>& gpus);

}  // namespace tunefuzz
