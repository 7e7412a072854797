// A tuning campaign's configuration (configs/*.yaml): the target GPU and its limits, the problems to tune,
// the templates with their search spaces, pruning rules, budgets and the output path. The loader checks
// shape and types; template parameter names and values are checked by the space (tuner/space), which
// reports them with the locations kept here. Schema: docs/configs.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/common/error.hpp"
#include "tuner/common/precision.hpp"
#include "tuner/config/strategy_kind.hpp"

namespace tunefuzz {

/// Resource limits of one GPU model, as the driver reports them.
struct GpuLimits {
  int64_t shared_memory_per_block_optin = 0;        ///< bytes a block may use after opting in
  int64_t shared_memory_per_sm = 0;                 ///< bytes per multiprocessor
  int64_t shared_memory_reserved_per_block = 1024;  ///< bytes the system keeps per resident block
  int64_t registers_per_sm = 0;
  int64_t max_registers_per_thread = 255;
  int64_t max_threads_per_block = 1024;
  int64_t max_threads_per_sm = 2048;
  int64_t max_blocks_per_sm = 32;
  int64_t sm_count = 0;
  int64_t warp_size = 32;  ///< threads per warp (NVIDIA, 32) or wavefront (AMD CDNA, 64)
};

struct GpuSpec {
  std::string name;  ///< card name as the driver reports it, e.g. `NVIDIA H100 80GB HBM3`
  std::string arch;  ///< `sm_90`, `sm_80`, ... (NVIDIA, NVRTC) or `gfx90a`, `gfx942`, ... (AMD, hiprtc)
  GpuLimits limits;
  SourceLocation where;
  SourceLocation arch_where;  ///< where `gpu.arch` is written, for errors about the target
};

/// One GPU as its driver reports it: what a worker probe returns and what the runtime dispatches on.
struct DeviceInfo {
  std::string name;
  std::string arch;
  GpuLimits limits;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  std::string driver_version;
  int cuda_driver_api = 0;
  /// How many GPUs the probing process saw (1 for a worker shown one through CUDA_VISIBLE_DEVICES).
  int device_count = 1;
  /// The card's UUID as the driver reports it (`GPU-...`); empty where the runtime has none (HIP).
  std::string uuid;
};

/// True for an AMD target name: `gfx` and 3 or 4 characters, digits but for a last one that may be a
/// lower-case letter (`gfx908`, `gfx90a`, `gfx1100`). The config loader accepts these and `sm_*` names.
bool is_amd_arch(std::string_view arch);
/// Whether `arch` names a GPU target: sm_ followed by digits and an optional 'a', or an AMD target.
bool is_arch_name(std::string_view arch);

/// One GEMM to tune: C (m×n) = alpha · A (m×k) · B (k×n) + beta · C.
struct Problem {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
  Precision input = Precision::bf16;   ///< type of A and B (any Precision)
  Precision output = Precision::bf16;  ///< type of C: fp16, bf16 or fp32 (fp32 for tf32 inputs)
  Layout layout;
  double alpha = 1.0;
  double beta = 0.0;
  SourceLocation where;
};

/// One parameter of a template's search space with the values to try.
struct ParameterValues {
  std::string name;
  std::vector<int64_t> values;
  SourceLocation where;
};

/// A template to consider and the part of its space to search.
struct TemplateSearch {
  std::string name;
  std::vector<ParameterValues> space;  ///< in file order; parameters left out take the template default
  SourceLocation where;
};

struct Pruning {
  int64_t min_blocks_per_sm = 1;  ///< occupancy below this (resident blocks per SM) prunes a candidate
  bool allow_spills = false;      ///< keep candidates whose registers spill to local memory
};

struct Budgets {
  int64_t fuzz_cases = 100;           ///< RapidCheck cases per candidate
  /// `tune run`: cases every compiled candidate is screened with; a problem's winner then gets `fuzz_cases` more
  /// of its own before it enters a table (tuner/campaign/confirm_stage). 0, or at least fuzz_cases: no screen,
  /// every candidate gets fuzz_cases.
  int64_t fuzz_screen_cases = 0;
  int64_t timing_warmup = 5;          ///< untimed launches before timing
  int64_t timing_repeats = 30;        ///< timed launches per finalist and problem (median reported)
  int64_t timing_screen_repeats = 3;  ///< timed launches per candidate in the screening round
  int64_t timing_finalists = 8;       ///< fastest screened candidates verified and timed in full (0 = all)
  double candidate_timeout_s = 120;   ///< a worker taking longer is killed and its candidate marked `hang`
  int64_t fuzz_workers = 4;           ///< fuzz worker processes sharing the GPU at once
  /// `tune run`: problems timed at once on each GPU, their workers taking turns on the device
  /// (tuner/device/gpu_turn.hpp), so that one problem's host work overlaps another's measurements
  int64_t time_workers = 1;
  StrategyKind strategy = StrategyKind::exhaustive;  ///< how each problem's candidates are searched
};

struct Config {
  std::filesystem::path file;  ///< where it was read from
  GpuSpec gpu;
  std::vector<Problem> problems;
  std::vector<TemplateSearch> templates;
  Pruning pruning;
  Budgets budgets;
  uint64_t seed = 0;             ///< base seed of the fuzz stage
  std::filesystem::path output;  ///< results table, relative to the working directory
};

/// Reads and checks a config file. Throws Error{bad_input} naming file, line and field on any defect,
/// or Error{io} when the file cannot be read.
Config load_config(const std::filesystem::path& file);

/// The same from text; `file_name` is used in error messages.
Config parse_config(const std::string& text, const std::string& file_name);

}  // namespace tunefuzz
