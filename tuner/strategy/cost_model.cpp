#include "tuner/strategy/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/campaign/occupancy.hpp"

namespace tunefuzz {

namespace {

// Hopper-class figures. Only ratios between them shape a ranking: the strategy fits one factor per template.
constexpr double kTensorMacsPerSmPerSecond = 3.75e12;  // ~990 dense bf16 TFLOP/s over 132 SMs
constexpr double kDramBytesPerSecond = 3.3e12;
constexpr double kL2BytesPerSecond = 9.0e12;
constexpr double kMemoryLatencySeconds = 1.0e-6;  // Little's law: bandwidth = bytes in flight / latency
constexpr double kLaunchSeconds = 4.0e-6;
constexpr double kPaddedRowsSlowdown = 1.06;
// What a template's instructions reach: the share of the tensor rate, and the warps an SM needs resident to
// reach it. wgmma streams operands from shared memory asynchronously, so one CTA's consumer warpgroups
// fill an SM; mma.sync and FMA loops issue from registers and stall on shared memory, so they need more
// warps to hide it.
struct Issue {
  double share;
  int64_t warps_to_fill;
};

Issue issue_of(const Candidate& c) {
  const KernelTemplate& t = *c.kernel_template;
  if (t.name.starts_with("gemm_wgmma")) return {1.0, 8};
  if (t.name.starts_with("gemm_simt")) {
    // FMA on CUDA cores. A thread's TM x TN outputs are that many independent FMAs per k, which hide latency
    // as warps do: 16 warps of 8x8 threads fill an SM, 8 of 16x8 (cuBLAS's FFMA kernel runs 8 warps of 16x8
    // on the H200). Its (TM + TN) / 4 shared-memory vector loads per k take issue slots from the FMAs.
    const double outputs = static_cast<double>(c.point["TM"] * c.point["TN"]);
    const auto fma_share = [](double tile, double sides) { return tile / (tile + sides / 4); };
    const double share =
        0.07 * fma_share(outputs, static_cast<double>(c.point["TM"] + c.point["TN"])) / fma_share(64, 16);
    return {share, std::clamp<int64_t>(static_cast<int64_t>(1024 / std::max(outputs, 1.0)), 8, 16)};
  }
  return {0.6, 16};  // mma.sync: gemm_mma*, gemm_skinny
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / std::max<int64_t>(b, 1); }

int64_t parameter_or(const Candidate& c, const char* name, int64_t fallback) {
  return c.kernel_template->parameter(name) ? c.point[name] : fallback;
}

}  // namespace

// The three overlap, each hiding the others imperfectly: a smooth maximum (the cube root of the sum of cubes)
// ranks by the bound that dominates and then by the others, where a plain maximum would tie.
double CostEstimate::total_ms() const {
  return std::cbrt(compute_ms * compute_ms * compute_ms + memory_ms * memory_ms * memory_ms +
                   l2_ms * l2_ms * l2_ms) +
         reduction_ms + overhead_ms;
}

int64_t resident_blocks(const SearchCandidate& candidate, const GpuLimits& limits) {
  if (candidate.blocks_per_sm > 0) return candidate.blocks_per_sm;
  const Candidate& c = candidate.candidate;
  const KernelTemplate& t = *c.kernel_template;
  const int64_t threads = t.threads_per_block(c.point);
  const int64_t accumulators = c.point["BM"] * c.point["BN"] / std::max<int64_t>(threads, 1);
  const int registers = static_cast<int>(std::min<int64_t>(limits.max_registers_per_thread, accumulators + 40));
  return std::max<int64_t>(1, occupancy(threads, registers, t.shared_memory_bytes(c.point), limits).blocks_per_sm);
}

CostEstimate estimate_cost(const SearchCandidate& candidate, const GemmShape& problem,
                           const GpuLimits& limits) {
  const Candidate& c = candidate.candidate;
  const KernelTemplate& t = *c.kernel_template;
  // The tiles of the form the candidate runs (an N = 1 product runs as a 1×M one: launch_form).
  const GemmShape shape = launch_form(t, c.point, problem).shape;
  const int64_t bm = c.point["BM"], bn = c.point["BN"], bk = c.point["BK"];
  const int64_t k_tiles = std::max<int64_t>(1, ceil_div(shape.k, bk));
  const int64_t splits = std::clamp<int64_t>(parameter_or(c, "SPLIT_K", 1), 1, k_tiles);
  const int64_t stages = parameter_or(c, "STAGES", 2);
  const int64_t units = ceil_div(shape.m, bm) * ceil_div(shape.n, bn) * splits;  // (tile, split) pairs
  const double unit_macs = static_cast<double>(bm * bn) * static_cast<double>(ceil_div(k_tiles, splits) * bk);
  const int64_t sms = std::max<int64_t>(limits.sm_count, 1);
  const int64_t blocks = resident_blocks(candidate, limits);
  const int64_t resident = std::clamp<int64_t>(ceil_div(units, sms), 1, blocks);
  const int64_t waves = ceil_div(units, sms * resident);
  const int64_t warps = ceil_div(t.threads_per_block(c.point), 32);
  const Issue issue = issue_of(c);
  const double fill = std::min(1.0, static_cast<double>(resident * warps) / static_cast<double>(issue.warps_to_fill));
  const double element = size_of(c.types.input), output = size_of(c.types.output);

  CostEstimate e;
  // Shared memory laid out with padded rows instead of the XOR swizzle (SWIZZLE=0) conflicts on some banks.
  const double layout = parameter_or(c, "SWIZZLE", 1) == 0 ? kPaddedRowsSlowdown : 1.0;
  e.compute_ms = 1e3 * static_cast<double>(waves) * unit_macs * static_cast<double>(resident) * layout /
                 (kTensorMacsPerSmPerSecond * issue.share * fill);
  const double least_bytes = (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.k) * shape.n) *
                                 element +
                             static_cast<double>(shape.m) * shape.n * output;
  const double partials = splits > 1 ? 4.0 * splits * static_cast<double>(shape.m) * shape.n : 0.0;
  const double in_flight = static_cast<double>(std::max<int64_t>(stages - 1, 1) * (bm + bn) * bk) * element;
  const double active = static_cast<double>(std::min(units, sms * blocks));
  const double bandwidth = std::min(kDramBytesPerSecond, active * in_flight / kMemoryLatencySeconds);
  e.memory_ms = 1e3 * least_bytes / bandwidth;
  // Split-K partials are written after each unit's loop and read back by the reduction: neither overlaps.
  e.reduction_ms = 1e3 * 2 * partials / kDramBytesPerSecond;
  // Loads narrower than 16 bytes (VEC elements at a time; TMA and templates without VEC move 16) issue more
  // instructions per byte: each operand's stream slows by as much. A template may load an aligned operand
  // wider than VEC (load_bytes).
  const int64_t vec_bytes = parameter_or(c, "VEC", 16) * static_cast<int64_t>(element);
  const auto [a_load, b_load] = t.load_bytes ? t.load_bytes(c.point, shape) : std::pair{vec_bytes, vec_bytes};
  const auto efficiency = [](int64_t bytes) { return std::min(1.0, static_cast<double>(bytes) / 16.0); };
  e.l2_ms = 1e3 * static_cast<double>(units) *
            (static_cast<double>(bm) / efficiency(a_load) + static_cast<double>(bn) / efficiency(b_load)) *
            static_cast<double>(ceil_div(k_tiles, splits) * bk) * element / kL2BytesPerSecond;
  // PACK=1 copies A and B into aligned scratch first: a read and a write of both, before the GEMM.
  if (parameter_or(c, "PACK", 0) == 1)
    e.reduction_ms += 1e3 * 2.0 *
                      (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.k) * shape.n) * element /
                      kDramBytesPerSecond;
  e.overhead_ms = 1e3 * kLaunchSeconds * (1 + (splits > 1 ? 1 : 0) + parameter_or(c, "PACK", 0));
  return e;
}

}  // namespace tunefuzz
