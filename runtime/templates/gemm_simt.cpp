// Everything the tuner knows about templates/gemm_simt.cu. Keep names, defaults and rules in step with the
// kernel's #defines and static_asserts: tests/test_gemm_simt.cpp compiles points on both sides of each rule.
#include "runtime/templates/gemm_simt.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz {

namespace {

constexpr int64_t kElementBytes = 4;       // fp32 everywhere
constexpr int64_t kAPad = 4;               // floats of padding per row of transposed A (kAPad in the kernel)
constexpr int64_t kAddressRegisters = 24;  // pointers, indices and loop counters, roughly

// Quotients of tunables, 0 where the divisor is not positive (such points are pruned by `positive`, but
// every rule and formula is evaluated when a point is explained).
int64_t quotient(int64_t a, int64_t b) {
  return b > 0 ? a / b : 0;
}

int64_t ceil_quotient(int64_t a, int64_t b) {
  return b > 0 ? (a + b - 1) / b : 0;
}

int64_t threads(const Point& p) {
  return quotient(p["BM"], p["TM"]) * quotient(p["BN"], p["TN"]);
}

// A transposed (BK, BM + kAPad) and B (BK, BN) per stage.
int64_t shared_memory(const Point& p) {
  return p["STAGES"] * p["BK"] * (p["BM"] + kAPad + p["BN"]) * kElementBytes;
}

// Floats a thread holds between loading a tile from global memory and storing it to shared memory.
int64_t staged_floats(const Point& p) {
  const int64_t vec = p["VEC"];
  const int64_t a_loads = ceil_quotient(quotient(p["BM"] * p["BK"], vec), threads(p));
  const int64_t b_loads = ceil_quotient(quotient(p["BK"] * p["BN"], vec), threads(p));
  return (a_loads + b_loads) * vec;
}

std::vector<Constraint> constraints() {
  return {
      {"positive", "every tunable must be at least 1 (PACK, a switch, at least 0)",
       [](const Point& p, const GpuLimits&) {
         for (const auto& [name, value] : p.values())
           if (value < (name == "PACK" ? 0 : 1)) return false;
         return true;
       }},
      {"thread_tiling", "the thread tile TMxTN must divide the CTA tile BMxBN",
       [](const Point& p, const GpuLimits&) {
         return p["TM"] > 0 && p["TN"] > 0 && p["BM"] % p["TM"] == 0 && p["BN"] % p["TN"] == 0;
       }},
      {"thread_tile_vectors",
       "TM and TN must be multiples of 4: a thread reads its rows of A and columns of B as float4 vectors",
       [](const Point& p, const GpuLimits&) { return p["TM"] % 4 == 0 && p["TN"] % 4 == 0; }},
      threads_constraint("(BM/TM)*(BN/TN)", threads),
      shared_memory_constraint(
          "the stages' shared memory, STAGES*BK*(BM+4 + BN)*4 bytes (A transposed, rows padded by 4 floats)",
          shared_memory),
      {"register_budget",
       "TM*TN accumulators, TM+TN operands, the staged loads and ~24 registers of addresses exceed what "
       "MIN_BLOCKS resident CTAs leave each thread (registers per SM / (threads*MIN_BLOCKS), at most 255)",
       [](const Point& p, const GpuLimits& limits) {
         const int64_t resident_threads = threads(p) * p["MIN_BLOCKS"];
         if (resident_threads <= 0) return false;
         const int64_t per_thread =
             std::min<int64_t>(limits.max_registers_per_thread, limits.registers_per_sm / resident_threads);
         const int64_t needed = p["TM"] * p["TN"] + p["TM"] + p["TN"] + staged_floats(p) + kAddressRegisters;
         return needed <= per_thread;
       }},
      {"stages", "STAGES must be at least 2: one stage is read while the next is written",
       [](const Point& p, const GpuLimits&) { return p["STAGES"] >= 2; }},
      {"vector_width", "VEC must be 1, 2 or 4 floats (4- to 16-byte loads)",
       [](const Point& p, const GpuLimits&) {
         const int64_t v = p["VEC"];
         return v == 1 || v == 2 || v == 4;
       }},
      {"vector_in_tile", "VEC must divide BK: a load along K stays within one row of the A tile",
       [](const Point& p, const GpuLimits&) { return p["VEC"] > 0 && p["BK"] % p["VEC"] == 0; }},
      {"switch", "PACK is a switch: 0 or 1", [](const Point& p, const GpuLimits&) { return p["PACK"] <= 1; }},
      {"pack_vector_width", "PACK=1 exists to restore 16-byte loads: it only pairs with VEC=4",
       [](const Point& p, const GpuLimits&) { return !p["PACK"] || p["VEC"] == 4; }},
  };
}

std::optional<std::string> refusal(const Point& p, const GemmShape& s) {
  // The kernel reads row-major A and B; PACK=1 copies column-major operands as their transposes first.
  if (!p["PACK"] || s.layout == Layout{}) {
    if (auto why = shape_refusal("gemm_simt", s, kElementBytes, p["BM"], p["BN"]))
      return s.layout == Layout{}
                 ? why
                 : *why + "; the PACK=1 twin of this candidate transposes column-major operands first";
  } else {
    if (auto why = operands_refusal("gemm_simt", s, all_layouts(), "")) return why;
  }
  if (quick_return(s) != QuickReturn::none) return std::nullopt;  // no load is made, nothing is packed
  const int64_t units = ceil_quotient(s.m, p["BM"]) * ceil_quotient(s.n, p["BN"]) * p["SPLIT_K"];
  if (units > INT32_MAX) return "the grid would need " + std::to_string(units) + " CTAs (over 2^31 - 1)";
  if (p["PACK"]) {
    // The copies have K padded to whole vectors (zeros) and rows of whole vectors: a vector that runs past N
    // reads padding, and the epilogue stores only columns below N.
    const PackPlan plan = pack_plan(s, kElementBytes, PackRule::loads16_row_major);
    if (!plan.pack_a && !plan.pack_b)
      return std::string(
          "PACK=1 has nothing to pack here: A and B are aligned for 16-byte loads, so the PACK=0 twin of "
          "this candidate serves this problem");
    return std::nullopt;
  }
  return vector_refusal(s, p["VEC"], kElementBytes, "a smaller VEC or PACK=1");
}

LaunchGeometry geometry(const Point& p, const GemmShape& s) {
  return gemm_simt_geometry(p, s, {});
}

std::vector<std::string> expected_instructions(const Point& p) {
  // Fused multiply-adds on CUDA cores and the thread tile read from shared memory as float4, at every point.
  // VEC=4: B's 16-byte loads stored to shared memory whole (the epilogue's float4 loads of C are there at
  // every VEC, so st.shared tells the operand loads apart). VEC=2: 8-byte loads, which nothing else uses.
  std::vector<std::string> out = {"fma.rn.f32", "ld.shared.v4.f32"};
  if (p["VEC"] == 4) out.push_back("st.shared.v4.f32");
  if (p["VEC"] == 2) out.push_back("ld.global.v2.f32");
  return out;
}

KernelTemplate make_template() {
  KernelTemplate t;
  t.name = "gemm_simt";
  t.source_file = "gemm_simt.cu";
  t.summary =
      "fp32 GEMM on CUDA cores (FFMA, no tensor cores), register-staged shared-memory stages, "
      "row-major A and B (other layouts transposed first, PACK=1); portable to hiprtc";
  t.entry_points = {
      "tf_gemm",  "tf_gemm_split",     kScaleCEntry, kReduceEntry,
      kPackEntry, kPackTransposedEntry};  // the packing passes on CUDA only: the HIP launcher does not pack
  t.parameters = {
      {"BM", 128, "CTA tile rows (M)"},
      {"BN", 128, "CTA tile columns (N)"},
      {"BK", 8, "CTA tile depth (K) per shared-memory stage"},
      {"TM", 8, "thread tile rows: each thread computes TM x TN outputs"},
      {"TN", 8, "thread tile columns"},
      {"STAGES", 2, "shared-memory stages: one is read while the next is written"},
      {"VEC", 4, "floats per global load along K of A and N of B; must divide K, N, lda, ldb"},
      {"MIN_BLOCKS", 2, "CTAs per SM the register allocation must leave room for (CUDA; 1 = no cap)"},
      {"GROUP_M", 8, "CTA raster swizzle: tile rows walked together for L2 reuse"},
      {"PACK", 0,
       "1 = copy misaligned or column-major A/B into zero-padded row-major scratch first, then load 16 bytes "
       "at a time (CUDA only)",
       false, 0},
      {"SPLIT_K", 1,
       "K splits: each output tile's K loop is shared by this many CTAs, then reduced in order (CUDA only)",
       false},
  };
  t.constraints = constraints();
  t.supported_types = {{Precision::fp32, Precision::fp32}};
  t.layouts = all_layouts();  // all but RR with PACK=1 only (refusal)
  t.shared_memory_bytes = shared_memory;
  t.threads_per_block = threads;
  t.expected_instructions = expected_instructions;
  t.refusal = refusal;
  t.geometry = geometry;
  t.mutants = gemm_simt_mutant_names();
  // A point that splits K launches the split kernel (the runner's choice for more than one split).
  t.main_entry = [](const Point& p) { return std::string(p["SPLIT_K"] > 1 ? "tf_gemm_split" : "tf_gemm"); };
  serve_canonical_forms(t);
  return t;
}

}  // namespace

LaunchGeometry gemm_simt_geometry(const Point& p, const GemmShape& s, const LaunchOverrides& overrides) {
  LaunchGeometry g;
  const int64_t splits = overrides.splits > 0 ? overrides.splits : p["SPLIT_K"];
  g.grid_x = ceil_quotient(s.m, p["BM"]) * ceil_quotient(s.n, p["BN"]) * splits;
  g.block_x = threads(p);
  g.shared_memory_bytes = shared_memory(p);
  if (quick_return(s) != QuickReturn::none) return g;  // nothing loaded: no copies, no partials
  if (p["PACK"]) {
    const PackPlan plan = pack_plan(s, kElementBytes, PackRule::loads16_row_major);
    g.workspace_bytes = plan.a_bytes + plan.b_bytes;
  }
  g.workspace_bytes += split_k_workspace_bytes(s, splits);
  return g;
}

const KernelTemplate& gemm_simt_template() {
  static const KernelTemplate t = make_template();
  return t;
}

const std::vector<std::string>& gemm_simt_mutant_names() {
  // Codes match TF_MUTANT_* in templates/gemm_simt.cu.
  static const std::vector<std::string> names = {"none",          "skip_last_k_tile", "drop_tail",
                                                 "beta0_reads_c", "int32_offset",     "no_stage_barrier",
                                                 "group_drop",    "no_k_guard",       "split_drops_remainder",
                                                 "partial_scaled"};
  return names;
}

}  // namespace tunefuzz
