// Everything the tuner knows about templates/gemm_mma.cu. Keep names, defaults and rules in step with the
// kernel's #defines and static_asserts: tests/test_space.cpp compiles points on both sides of each rule.
#include "tuner/templates/gemm_mma.hpp"

#include <bit>

#include "tuner/common/error.hpp"

namespace tunefuzz {

namespace {

constexpr int64_t kElementBytes = 2;  // fp16 and bf16 inputs

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

int64_t threads(const Point& p) {
  return (p["BM"] / p["WM"]) * (p["BN"] / p["WN"]) * 32;
}

// Rows of A (BM, BK) and B (BK, BN) per stage; SWIZZLE=0 pads every row by 8 elements (16 bytes).
int64_t shared_memory(const Point& p) {
  const int64_t pad = p["SWIZZLE"] ? 0 : 8;
  return p["STAGES"] * (p["BM"] * (p["BK"] + pad) + p["BK"] * (p["BN"] + pad)) * kElementBytes;
}

bool is_power_of_two(int64_t x) {
  return x > 0 && std::has_single_bit(static_cast<uint64_t>(x));
}

std::vector<Constraint> constraints() {
  return {
      {"positive", "every tunable must be at least 1",
       [](const Point& p, const GpuLimits&) {
         for (const auto& [name, value] : p.values())
           if (value < (name == "SWIZZLE" || name == "PACK" ? 0 : 1)) return false;
         return true;
       }},
      {"switch", "SWIZZLE and PACK are switches: 0 or 1",
       [](const Point& p, const GpuLimits&) { return p["SWIZZLE"] <= 1 && p["PACK"] <= 1; }},
      {"warp_tiling", "the warp tile WMxWN must divide the CTA tile BMxBN",
       [](const Point& p, const GpuLimits&) { return p["BM"] % p["WM"] == 0 && p["BN"] % p["WN"] == 0; }},
      {"mma_shape",
       "WM, WN and BK must be multiples of 16 (m16n8k16 steps; ldmatrix.x4.trans loads 16 columns)",
       [](const Point& p, const GpuLimits&) {
         return p["WM"] % 16 == 0 && p["WN"] % 16 == 0 && p["BK"] % 16 == 0;
       }},
      {"threads", "more threads per CTA, (BM/WM)*(BN/WN)*32, than the device allows",
       [](const Point& p, const GpuLimits& limits) {
         return threads(p) <= std::min<int64_t>(1024, limits.max_threads_per_block);
       }},
      {"shared_memory",
       "the pipeline's shared memory, STAGES*(BM*BK + BK*BN)*2 bytes (+16 per row unswizzled), "
       "exceeds the opt-in limit per CTA",
       [](const Point& p, const GpuLimits& limits) {
         return shared_memory(p) <= limits.shared_memory_per_block_optin;
       }},
      {"accumulators",
       "the warp tile's fp32 accumulators, WM*WN/32 registers per thread, leave too few of the "
       "255 registers for operands (limit 128)",
       [](const Point& p, const GpuLimits&) { return p["WM"] * p["WN"] / 32 <= 128; }},
      {"register_budget",
       "accumulators plus ~32 registers of operands and addresses exceed what each of the "
       "CTA's threads can have (registers per SM / threads, at most 255)",
       [](const Point& p, const GpuLimits& limits) {
         const int64_t per_thread =
             std::min<int64_t>(limits.max_registers_per_thread, limits.registers_per_sm / threads(p));
         return p["WM"] * p["WN"] / 32 + 32 <= per_thread;
       }},
      {"stages", "STAGES must be at least 2: one stage loads while another is consumed",
       [](const Point& p, const GpuLimits&) { return p["STAGES"] >= 2; }},
      {"vector_width", "VEC must be 1, 2, 4 or 8 elements (2- to 16-byte loads)",
       [](const Point& p, const GpuLimits&) {
         const int64_t v = p["VEC"];
         return v == 1 || v == 2 || v == 4 || v == 8;
       }},
      {"swizzle_power_of_two", "SWIZZLE=1 XORs chunk indices within a row: BK and BN must be powers of two",
       [](const Point& p, const GpuLimits&) {
         return !p["SWIZZLE"] || (is_power_of_two(p["BK"]) && is_power_of_two(p["BN"]));
       }},
      {"pack_vector_width", "PACK=1 exists to restore 16-byte loads: it only pairs with VEC=8",
       [](const Point& p, const GpuLimits&) { return !p["PACK"] || p["VEC"] == 8; }},
  };
}

std::optional<std::string> refusal(const Point& p, const GemmShape& s) {
  if (s.layout != Layout{})
    return "gemm_mma computes row-major A and B only (layout RR), not " + to_string(s.layout);
  if (s.m < 1 || s.n < 1 || s.k < 1) return std::string("M, N and K must be at least 1");
  if (s.lda < s.k || s.ldb < s.n || s.ldc < s.n)
    return std::string("leading dimensions must be at least the row lengths (lda >= K, ldb >= N, ldc >= N)");
  if (s.c_alignment % kElementBytes != 0 && s.c_alignment % 4 != 0)
    return std::string("C's base address is not aligned to its element size");
  const int64_t tiles = ((s.m + p["BM"] - 1) / p["BM"]) * ((s.n + p["BN"] - 1) / p["BN"]);
  if (tiles > INT32_MAX) return "the grid would need " + std::to_string(tiles) + " CTAs (over 2^31 - 1)";
  if (p["PACK"]) {
    const GemmMmaPackPlan plan = gemm_mma_pack_plan(s);
    if (!plan.pack_a && !plan.pack_b)
      return std::string(
          "PACK=1 has nothing to pack here: A and B are aligned for 16-byte loads, so the PACK=0 "
          "twin of this candidate serves this problem");
    return std::nullopt;  // misaligned operands are staged through scratch
  }
  const int64_t vec = p["VEC"];
  const int64_t vec_bytes = vec * kElementBytes;
  for (const auto& [value, name] : {std::pair{s.k, "K"}, {s.n, "N"}, {s.lda, "lda"}, {s.ldb, "ldb"}})
    if (value % vec != 0)
      return "VEC=" + std::to_string(vec) + " needs " + name + " to be a multiple of " + std::to_string(vec) +
             " (" + name + "=" + std::to_string(value) + "); a smaller VEC or PACK=1 serves this problem";
  if (s.a_alignment % vec_bytes != 0 || s.b_alignment % vec_bytes != 0)
    return "VEC=" + std::to_string(vec) + " needs A and B base addresses aligned to " +
           std::to_string(vec_bytes) + " bytes";
  return std::nullopt;
}

LaunchGeometry geometry(const Point& p, const GemmShape& s) {
  LaunchGeometry g;
  g.grid_x = ((s.m + p["BM"] - 1) / p["BM"]) * ((s.n + p["BN"] - 1) / p["BN"]);
  g.block_x = threads(p);
  g.shared_memory_bytes = shared_memory(p);
  if (p["PACK"]) {
    const GemmMmaPackPlan plan = gemm_mma_pack_plan(s);
    g.workspace_bytes = plan.a_bytes + plan.b_bytes;
  }
  return g;
}

std::vector<std::string> expected_instructions(const Point& p) {
  std::vector<std::string> out = {"mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8.x4"};
  if (p["VEC"] > 1) out.push_back("cp.async");
  return out;
}

KernelTemplate make_template() {
  KernelTemplate t;
  t.name = "gemm_mma";
  t.source_file = "gemm_mma.cu";
  t.summary = "tensor-core GEMM via mma.sync + ldmatrix + cp.async pipeline (sm_80+), row-major A and B";
  t.entry_points = {"tf_gemm", "tf_pack"};
  t.parameters = {
      {"BM", 128, "CTA tile rows (M)"},
      {"BN", 128, "CTA tile columns (N)"},
      {"BK", 32, "CTA tile depth (K) per pipeline stage"},
      {"WM", 64, "warp tile rows"},
      {"WN", 64, "warp tile columns"},
      {"STAGES", 3, "shared-memory pipeline depth"},
      {"VEC", 8, "elements per global load along K of A and N of B; must divide K, N, lda, ldb"},
      {"GROUP_M", 8, "CTA raster swizzle: tile rows walked together for L2 reuse"},
      {"SWIZZLE", 1, "shared-memory layout: 1 = XOR-swizzled 16-byte chunks, 0 = rows padded by 16 bytes"},
      {"PACK", 0, "1 = copy misaligned A/B into zero-padded scratch first, then run with VEC=8", false},
  };
  t.constraints = constraints();
  t.supported_types = {{Precision::bf16, Precision::bf16}, {Precision::bf16, Precision::fp32},
                       {Precision::bf16, Precision::fp16}, {Precision::fp16, Precision::fp16},
                       {Precision::fp16, Precision::fp32}, {Precision::fp16, Precision::bf16}};
  t.shared_memory_bytes = shared_memory;
  t.threads_per_block = threads;
  t.expected_instructions = expected_instructions;
  t.refusal = refusal;
  t.geometry = geometry;
  return t;
}

}  // namespace

const KernelTemplate& gemm_mma_template() {
  static const KernelTemplate t = make_template();
  return t;
}

GemmMmaPackPlan gemm_mma_pack_plan(const GemmShape& s) {
  GemmMmaPackPlan plan;
  const bool k_misaligned = s.k % 8 != 0;
  plan.pack_a = k_misaligned || s.lda % 8 != 0 || s.a_alignment % 16 != 0;
  plan.pack_b = k_misaligned || s.n % 8 != 0 || s.ldb % 8 != 0 || s.b_alignment % 16 != 0;
  plan.k = round_up(s.k, 8);
  plan.lda = plan.pack_a ? plan.k : s.lda;
  plan.ldb = plan.pack_b ? round_up(s.n, 8) : s.ldb;
  if (plan.pack_a) plan.a_bytes = round_up(s.m * plan.lda * kElementBytes, 256);
  if (plan.pack_b) plan.b_bytes = round_up(plan.k * plan.ldb * kElementBytes, 256);
  return plan;
}

const std::vector<std::string>& gemm_mma_mutant_names() {
  // Codes match TF_MUTANT_* in templates/gemm_mma.cu.
  static const std::vector<std::string> names = {
      "none",         "skip_last_k_tile", "drop_tail",  "no_acc_init", "beta0_reads_c",
      "int32_offset", "no_stage_barrier", "group_drop", "fp16_acc"};
  return names;
}

}  // namespace tunefuzz
