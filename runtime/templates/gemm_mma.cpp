// Everything the tuner knows about templates/gemm_mma.cu, declared once per input width: gemm_mma (fp16,
// bf16), gemm_mma_tf32 and gemm_mma_fp8 share the source, the tunables and the rules, and differ in element
// size (which shared memory, vector widths and K steps depend on), types and storage orders. Keep names,
// defaults and rules in step with the kernel's #defines and static_asserts: tests/test_space.cpp compiles
// points on both sides of each rule.
#include "runtime/templates/gemm_mma.hpp"

#include <algorithm>
#include <bit>

#include "tuner/common/error.hpp"
#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz {

namespace {

/// What sets the three declarations apart.
struct Family {
  const char* name;
  int64_t element_bytes;  ///< bytes per input element
  const char* mma;        ///< the mma shape's PTX name
  const char* summary;
  std::vector<TypePair> types;
  std::vector<Layout> layouts;
  int64_t default_wn = 64;  ///< fp8 defaults to narrower warp tiles: at 64 its rc kernel spills under NVRTC
};

int64_t mma_k(int64_t element_bytes) {
  return 32 / element_bytes;
}  // 16 (16-bit), 8 (tf32), 32 (fp8)

// Guarded: a point whose warp tile does not divide its CTA tile gets 0 threads (the `divides` rule prunes it)
// instead of a division by zero.
int64_t threads(const Point& p) {
  if (p["WM"] < 1 || p["WN"] < 1) return 0;
  return (p["BM"] / p["WM"]) * (p["BN"] / p["WN"]) * 32;
}

// A and B tiles per stage, as stored: (BM, BK) or (BK, BM) for A, (BK, BN) or (BN, BK) for B. SWIZZLE=0 pads
// every row by 16 bytes, so the two storage orders differ in size; the stage takes the larger.
int64_t shared_memory(const Point& p, int64_t element_bytes) {
  const int64_t pad = p["SWIZZLE"] ? 0 : 16 / element_bytes;
  const int64_t bm = p["BM"], bn = p["BN"], bk = p["BK"];
  const int64_t a_stage = std::max(bm * (bk + pad), bk * (bm + pad));
  const int64_t b_stage = std::max(bk * (bn + pad), bn * (bk + pad));
  return p["STAGES"] * (a_stage + b_stage) * element_bytes;
}

bool is_power_of_two(int64_t x) {
  return x > 0 && std::has_single_bit(static_cast<uint64_t>(x));
}

std::vector<Constraint> constraints(int64_t eb) {
  return {
      {"positive", "every tunable must be at least 1",
       [](const Point& p, const GpuLimits&) {
         for (const auto& [name, value] : p.values())
           if (value < (name == "SWIZZLE" || name == "PACK" || name == "PERSISTENT" ? 0 : 1)) return false;
         return true;
       }},
      {"switch", "SWIZZLE, PACK and PERSISTENT are switches: 0 or 1",
       [](const Point& p, const GpuLimits&) {
         return p["SWIZZLE"] <= 1 && p["PACK"] <= 1 && p["PERSISTENT"] <= 1;
       }},
      {"warp_tiling", "the warp tile WMxWN must divide the CTA tile BMxBN",
       [](const Point& p, const GpuLimits&) {
         return threads(p) > 0 && p["BM"] % p["WM"] == 0 && p["BN"] % p["WN"] == 0;
       }},
      {"mma_shape",
       "WM, WN and BK must be multiples of 16 (m16 fragments; ldmatrix.x4 loads 16 columns; k16 steps), BK "
       "also of the mma's K (32 for fp8)",
       [eb](const Point& p, const GpuLimits&) {
         return p["WM"] % 16 == 0 && p["WN"] % 16 == 0 && p["BK"] % 16 == 0 && p["BK"] % mma_k(eb) == 0;
       }},
      {"threads", "more threads per CTA, (BM/WM)*(BN/WN)*32, than the device allows",
       [](const Point& p, const GpuLimits& limits) {
         return threads(p) <= std::min<int64_t>(1024, limits.max_threads_per_block);
       }},
      {"shared_memory",
       "the pipeline's shared memory, STAGES*(BM*BK + BK*BN) elements (+16 bytes per stored row unswizzled), "
       "exceeds the opt-in limit per CTA",
       [eb](const Point& p, const GpuLimits& limits) {
         return shared_memory(p, eb) <= limits.shared_memory_per_block_optin;
       }},
      {"accumulators",
       "the warp tile's fp32 accumulators, WM*WN/32 registers per thread, leave too few of the "
       "255 registers for operands (limit 128)",
       [](const Point& p, const GpuLimits&) { return p["WM"] * p["WN"] / 32 <= 128; }},
      {"register_budget",
       "accumulators plus ~32 registers of operands and addresses exceed what each of the "
       "CTA's threads can have (registers per SM / threads, at most 255)",
       [](const Point& p, const GpuLimits& limits) {
         if (threads(p) < 1) return false;
         const int64_t per_thread =
             std::min<int64_t>(limits.max_registers_per_thread, limits.registers_per_sm / threads(p));
         return p["WM"] * p["WN"] / 32 + 32 <= per_thread;
       }},
      {"stages", "STAGES must be at least 2: one stage loads while another is consumed",
       [](const Point& p, const GpuLimits&) { return p["STAGES"] >= 2; }},
      {"vector_width", "VEC must be 1, 2, 4, 8 or 16 elements, at most 16 bytes",
       [eb](const Point& p, const GpuLimits&) {
         const int64_t v = p["VEC"];
         return is_power_of_two(v) && v <= 16 && v * eb <= 16;
       }},
      {"swizzle_power_of_two",
       "SWIZZLE=1 XORs chunk indices within a stored row (BK, BM or BN long): all three must be powers of "
       "two",
       [](const Point& p, const GpuLimits&) {
         return !p["SWIZZLE"] ||
                (is_power_of_two(p["BM"]) && is_power_of_two(p["BN"]) && is_power_of_two(p["BK"]));
       }},
      {"pack_vector_width", "PACK=1 exists to restore 16-byte loads: it only pairs with 16-byte VEC",
       [eb](const Point& p, const GpuLimits&) { return !p["PACK"] || p["VEC"] * eb == 16; }},
  };
}

std::optional<std::string> refusal(const Point& p, const GemmShape& s, const Family& f) {
  if (auto why = operands_refusal(f.name, s, f.layouts, "fp8 mma takes row-major A and column-major B: RC"))
    return why;
  if (auto why = exported_layout_refusal(p, s)) return why;
  if (quick_return(s) != QuickReturn::none) return std::nullopt;  // no load is made, nothing is packed
  const int64_t units = ((s.m + p["BM"] - 1) / p["BM"]) * ((s.n + p["BN"] - 1) / p["BN"]) * p["SPLIT_K"];
  if (units > INT32_MAX && !p["PERSISTENT"])
    return "the grid would need " + std::to_string(units) + " CTAs (over 2^31 - 1); PERSISTENT=1 serves it";
  if (p["PACK"]) {
    const PackPlan plan = pack_plan(s, f.element_bytes, PackRule::loads16);
    if (!plan.pack_a && !plan.pack_b)
      return std::string(
          "PACK=1 has nothing to pack here: A and B are aligned for 16-byte loads, so the PACK=0 "
          "twin of this candidate serves this problem");
    return std::nullopt;  // misaligned operands are staged through scratch
  }
  return stored_vector_refusal(s, p["VEC"], f.element_bytes, "a smaller VEC or PACK=1");
}

// What each operand's copies move at once: VEC elements, or a whole 16-byte chunk where its stored rows'
// length, leading dimension and base allow (the kernel's takes_chunks), and 16 bytes once packed (PACK=1
// pairs with 16-byte VEC only).
std::pair<int64_t, int64_t> load_bytes(const Point& p, const GemmShape& s, int64_t eb) {
  const int64_t narrow = p["VEC"] * eb;
  if (narrow >= 16 || narrow < 4) return {narrow, narrow};  // 16 already, or staged through registers
  const int64_t chunk = 16 / eb;
  const auto bytes = [&](const Stored& x) {
    return x.extent % chunk == 0 && x.ld % chunk == 0 && x.alignment % 16 == 0 ? 16 : narrow;
  };
  const auto [a, b] = stored_operands(s);
  return {bytes(a), bytes(b)};
}

KernelTemplate make_template(const Family& f) {
  const int64_t eb = f.element_bytes;
  KernelTemplate t;
  t.name = f.name;
  t.source_file = "gemm_mma.cu";
  t.summary = f.summary;
  t.entry_points = {"tf_gemm_rc", kPackEntry, kReduceEntry, kScaleCEntry};
  if (eb != 1) t.entry_points.insert(t.entry_points.end(), {"tf_gemm_rr", "tf_gemm_cr", "tf_gemm_cc"});
  t.parameters = {
      {"BM", 128, "CTA tile rows (M)"},
      {"BN", 128, "CTA tile columns (N)"},
      {"BK", 32, "CTA tile depth (K) per pipeline stage"},
      {"WM", 64, "warp tile rows"},
      {"WN", f.default_wn, "warp tile columns"},
      {"STAGES", 3, "shared-memory pipeline depth"},
      {"VEC", 16 / eb,
       "elements per global load along the stored rows of A and B (at most 16 bytes); must "
       "divide their lengths and lds. An operand aligned for 16 bytes is copied 16 bytes at a time anyway"},
      {"GROUP_M", 8, "CTA raster swizzle: tile rows walked together for L2 reuse"},
      {"SWIZZLE", 1, "shared-memory layout: 1 = XOR-swizzled 16-byte chunks, 0 = rows padded by 16 bytes",
       true, 0},
      {"PACK", 0, "1 = copy misaligned A/B into zero-padded scratch first, then load 16 bytes at a time",
       false, 0},
      {"SPLIT_K", 1, "K splits: each output tile's K loop is shared by this many CTAs, then reduced in order",
       false},
      {"PERSISTENT", 0, "1 = launch only as many CTAs as fit on the GPU at once; each walks many units",
       false, 0},
      layouts_parameter(),
  };
  t.constraints = constraints(eb);
  t.constraints.push_back(layouts_constraint());
  t.layouts = f.layouts;
  t.supported_types = f.types;
  t.shared_memory_bytes = [eb](const Point& p) { return shared_memory(p, eb); };
  t.threads_per_block = threads;
  const std::string mma = f.mma;
  t.expected_instructions = [mma, eb](const Point& p) {
    std::vector<std::string> out = {"mma.sync.aligned." + mma, "ldmatrix.sync.aligned.m8n8.x4"};
    if (p["VEC"] * eb >= 4) out.push_back("cp.async");
    return out;
  };
  t.refusal = [f](const Point& p, const GemmShape& s) { return refusal(p, s, f); };
  t.load_bytes = [eb](const Point& p, const GemmShape& s) { return load_bytes(p, s, eb); };
  t.geometry = [eb](const Point& p, const GemmShape& s) { return gemm_mma_geometry(p, s, {}, eb); };
  t.mutants = gemm_mma_mutant_names();
  serve_canonical_forms(t);
  return t;
}

}  // namespace

const KernelTemplate& gemm_mma_template() {
  static const KernelTemplate t = make_template({"gemm_mma", 2, "m16n8k16",
                                                 "tensor-core GEMM via mma.sync + ldmatrix + cp.async "
                                                 "pipeline (sm_80+), fp16/bf16, any layout, split-K, "
                                                 "persistent",
                                                 sixteen_bit_type_pairs(), all_layouts()});
  return t;
}

const KernelTemplate& gemm_mma_tf32_template() {
  static const KernelTemplate t =
      make_template({"gemm_mma_tf32",
                     4,
                     "m16n8k8",
                     "the gemm_mma pipeline on tf32 tensor cores (fp32 storage, m16n8k8), any layout",
                     {{Precision::tf32, Precision::fp32}},
                     all_layouts()});
  return t;
}

const KernelTemplate& gemm_mma_fp8_template() {
  static const KernelTemplate t = make_template(
      {"gemm_mma_fp8",
       1,
       "m16n8k32",
       "the gemm_mma pipeline on fp8 tensor cores (e4m3/e5m2, m16n8k32, sm_89+), row-major A, column-major B",
       fp8_type_pairs(),
       {{Order::row, Order::col}},
       32});
  return t;
}

LaunchGeometry gemm_mma_geometry(const Point& p, const GemmShape& s, const LaunchOverrides& overrides,
                                 int64_t element_bytes) {
  LaunchGeometry g;
  const int64_t splits = overrides.splits > 0 ? overrides.splits : p["SPLIT_K"];
  const int64_t units = ((s.m + p["BM"] - 1) / p["BM"]) * ((s.n + p["BN"] - 1) / p["BN"]) * splits;
  g.grid_x = overrides.grid > 0 ? std::min(units, overrides.grid) : units;
  g.block_x = threads(p);
  g.shared_memory_bytes = shared_memory(p, element_bytes);
  if (p["PACK"]) {
    const PackPlan plan = pack_plan(s, element_bytes, PackRule::loads16);
    g.workspace_bytes = plan.a_bytes + plan.b_bytes;
  }
  g.workspace_bytes += split_k_workspace_bytes(s, splits);
  return g;
}

const std::vector<std::string>& gemm_mma_mutant_names() {
  // Codes match TF_MUTANT_* in templates/gemm_mma.cu.
  static const std::vector<std::string> names = {"none",
                                                 "skip_last_k_tile",
                                                 "drop_tail",
                                                 "no_acc_init",
                                                 "beta0_reads_c",
                                                 "int32_offset",
                                                 "no_stage_barrier",
                                                 "group_drop",
                                                 "fp16_acc",
                                                 "unit_keeps_acc",
                                                 "empty_split_skips",
                                                 "split_drops_remainder",
                                                 "wait_one_short",
                                                 "unit_no_drain",
                                                 "reduce_whole_quads",
                                                 "col_rows_rounded",
                                                 "reduce_first_lane_only",
                                                 "chunks_ignore_extent"};
  return names;
}

}  // namespace tunefuzz
