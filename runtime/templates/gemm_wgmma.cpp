// Everything the tuner knows about templates/gemm_wgmma.cu, declared for 16-bit inputs (gemm_wgmma), fp8
// inputs (gemm_wgmma_fp8) and tf32 inputs (gemm_wgmma_tf32). Keep names, defaults and rules in step with the
// kernel's #defines and static_asserts: tests/test_wgmma.cpp compiles points on both sides of each rule.
#include "runtime/templates/gemm_wgmma.hpp"

#include <algorithm>

#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz {

namespace {

constexpr int64_t kSwizzleBytes = 128;  // the TMA/wgmma swizzle: tiles are slabs of 128-byte rows

struct Family {
  const char* name;
  int64_t element_bytes;
  const char* summary;
  std::vector<TypePair> types;
  const char* layout_note;   ///< why PACK=0 refuses a storage order without a kernel (fp8: all but RC)
  int64_t default_bn = 256;  ///< fp8 defaults to 128: it holds two sets of accumulators (see below)
};

// fp8 wgmma accumulates with less than fp32 precision, so the kernel sums each K tile in a second set of
// registers and adds it into the fp32 accumulators (kAccumulatorSets in the kernel).
int64_t accumulator_sets(int64_t element_bytes) {
  return element_bytes == 1 ? 2 : 1;
}

int64_t threads(const Point& p) {
  return 128 * (1 + p["CONSUMERS"]);
}

int64_t cluster_size(const Point& p) {
  return p["CLUSTER_M"] * p["CLUSTER_N"];
}

int64_t rows_per_consumer(const Point& p) {
  return p["CONSUMERS"] > 0 ? p["BM"] / p["CONSUMERS"] : 0;
}

// tf32: the registers a consumer thread holds while it rewrites an M/N-major tile K-major, the most over the
// orders in LAYOUTS (kTransposeRegisters in the kernel): 4 per group of 4 K-values of one row, for a round of
// 2 groups a thread (rows in whole 32-row blocks) where BK is one 128-byte row, else for the whole tile.
int64_t tf32_transpose_registers(const Point& p) {
  const int64_t transposers = 128 * p["CONSUMERS"], bk = p["BK"], slab = kSwizzleBytes / 4;
  if (transposers <= 0 || bk <= 0) return 0;
  const auto round_groups = [&](int64_t rows) {
    const int64_t round = bk == slab ? std::min(rows, std::max(slab, 2 * transposers * 4 / bk)) : rows;
    return round * bk / 4 / transposers;
  };
  const int64_t mask = p[kLayoutsParameter];
  const int64_t rr = layout_bit({Order::row, Order::row}), cr = layout_bit({Order::col, Order::row}),
                cc = layout_bit({Order::col, Order::col});
  return 4 * std::max((mask & (cr | cc)) ? round_groups(p["BM"]) : 0,
                      (mask & (rr | cr)) ? round_groups(p["BN"]) : 0);
}

// Whether the point's epilogue can stage C in shared memory for TMA stores (TF_TMA_STORE in the kernel): C
// stored as the problem states it, in whole 64-column slabs (every output type's staging row holds 32 or 64).
bool stages_c(const Point& p) {
  return !p["SWAP_AB"] && p["BN"] % 64 == 0;
}

// The ring of STAGES × (A + B tiles), one 128-byte-row staging slab per consumer for the epilogue where the
// point stages C, and 1 KiB of slack to align the ring to the swizzle's period (kSmemBytes in the kernel).
// The mbarriers are static.
int64_t shared_memory(const Point& p, int64_t eb) {
  return 1024 + p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * eb +
         (stages_c(p) ? p["CONSUMERS"] * rows_per_consumer(p) * kSwizzleBytes : 0);
}

std::vector<Constraint> constraints(int64_t eb) {
  const int64_t slab = kSwizzleBytes / eb;
  std::vector<Constraint> out = {
      {"positive",
       "every tunable must be at least 1 (the switches PERSISTENT, A_REGS, PACK and SWAP_AB at least 0)",
       [](const Point& p, const GpuLimits&) {
         for (const auto& [name, value] : p.values())
           if (value <
               (name == "PERSISTENT" || name == "A_REGS" || name == "PACK" || name == "SWAP_AB" ? 0 : 1))
             return false;
         return true;
       }},
      {"switch", "PERSISTENT, A_REGS, PACK and SWAP_AB are switches: 0 or 1",
       [](const Point& p, const GpuLimits&) {
         return p["PERSISTENT"] <= 1 && p["A_REGS"] <= 1 && p["PACK"] <= 1 && p["SWAP_AB"] <= 1;
       }},
      {"consumers", "CONSUMERS must be 1 or 2 consumer warpgroups",
       [](const Point& p, const GpuLimits&) { return p["CONSUMERS"] == 1 || p["CONSUMERS"] == 2; }},
      {"wgmma_m",
       "BM must be a multiple of 64*CONSUMERS (each consumer issues m64 wgmma), at most 256 rows per "
       "consumer",
       [](const Point& p, const GpuLimits&) {
         return p["CONSUMERS"] > 0 && p["BM"] % (64 * p["CONSUMERS"]) == 0 && rows_per_consumer(p) <= 256;
       }},
      {"wgmma_n", "BN is the wgmma's N here: a multiple of 8 from 8 to 256",
       [](const Point& p, const GpuLimits&) {
         const int64_t n = p["BN"];
         return n % 8 == 0 && n >= 8 && n <= 256;
       }},

      {"tma_box", "BK must be a multiple of 128 bytes of input (one swizzled TMA box row), at most 256",
       [slab](const Point& p, const GpuLimits&) { return p["BK"] % slab == 0 && p["BK"] <= 256; }},
      {"accumulators",
       "(BM/CONSUMERS/64) * BN/2 fp32 accumulators per consumer thread (twice that for fp8, which sums "
       "each K tile apart) exceed 256",
       [eb](const Point& p, const GpuLimits&) {
         return rows_per_consumer(p) / 64 * p["BN"] / 2 * accumulator_sets(eb) <= 256;
       }},
      threads_constraint("128*(1+CONSUMERS)", threads),
      shared_memory_constraint("the ring, STAGES*(BM+BN)*BK elements, plus a 128-byte-row epilogue slab per "
                               "consumer where C is staged and 1 KiB of "
                               "alignment slack",
                               [eb](const Point& p) { return shared_memory(p, eb); }),
      {"stages", "STAGES must be at least 2: one stage loads while another is consumed",
       [](const Point& p, const GpuLimits&) { return p["STAGES"] >= 2; }},
      {"cluster",
       "CLUSTER_M x CLUSTER_N must be 1x1, 2x1 or 1x2: two CTAs at most, sharing B (2x1) or A (1x2)",
       [](const Point& p, const GpuLimits&) {
         return p["CLUSTER_M"] <= 2 && p["CLUSTER_N"] <= 2 && cluster_size(p) <= 2;
       }},
      {"cluster_halves",
       "CLUSTER_M = 2 loads each B box in two halves of whole 8-row groups: BN must be a multiple of 16",
       [](const Point& p, const GpuLimits&) { return p["CLUSTER_M"] == 1 || p["BN"] % 16 == 0; }},
  };
  if (eb == 4) {
    out.push_back({"a_regs_tf32",
                   "A_REGS=1 is for 16-bit and fp8 inputs: tf32 wgmma reads A from shared memory",
                   [](const Point& p, const GpuLimits&) { return !p["A_REGS"]; }});
    out.push_back({"transpose_registers",
                   "tf32 rewrites M/N-major tiles K-major through registers: the accumulators "
                   "(BM/CONSUMERS/64)*BN/2 plus 4 per group of 4 K-values a consumer thread holds at once (2 "
                   "groups with BK = 32; with a deeper BK the whole tile of column-major A or row-major B, "
                   "rows*BK/4/(128*CONSUMERS), over the orders in LAYOUTS) exceed 192",
                   [](const Point& p, const GpuLimits&) {
                     const int64_t moved = tf32_transpose_registers(p);
                     return moved == 0 || rows_per_consumer(p) / 64 * p["BN"] / 2 + moved <= 192;
                   }});
  }
  return out;
}

bool has_kernel(const Layout& layout, int64_t element_bytes) {
  const std::vector<Layout> kernels = gemm_wgmma_kernel_layouts(element_bytes);
  return std::find(kernels.begin(), kernels.end(), layout) != kernels.end();
}

std::optional<std::string> refusal(const Point& p, const GemmShape& s, const Family& f) {
  const int64_t eb = f.element_bytes;
  if (auto why = operands_refusal(f.name, s, all_layouts(), "")) return why;
  if (auto why = exported_layout_refusal(p, s)) return why;
  if (!p["PACK"] && !has_kernel(s.layout, eb))
    return std::string(f.layout_note) + "; the PACK=1 twin of this candidate transposes the other operands first";
  // A_REGS reads row-major A, and a BN off whole 64-column slabs column-major B: the problem's, or (PACK=1
  // with fp8, tf32) the transposed copies'.
  const Layout read = p["PACK"] ? pack_plan(s, eb, gemm_wgmma_pack_rule(eb)).layout : s.layout;
  if (!gemm_wgmma_computes(p, read)) {
    if (p["A_REGS"] && read.a != Order::row)
      return "A_REGS=1 loads A into registers from row-major A only; the A_REGS=0 point serves layout " +
             to_string(s.layout);
    return "BN=" + std::to_string(p["BN"]) +
           " is not whole 64-column slabs, so the point reads column-major (K-major) B only, not layout " +
           to_string(read) + "; a BN of 64, 128, 192 or 256 serves it";
  }
  if (quick_return(s) != QuickReturn::none) return std::nullopt;  // no tensor map is encoded
  // SWAP_AB is the form for skinny M: the problem's M (the form's N) in one tile of BN columns. Larger M is
  // served by the points that tile it, so the campaign does not time this one there.
  if (p["SWAP_AB"] && s.n > p["BN"])
    return "SWAP_AB=1 computes M in one tile of BN = " + std::to_string(p["BN"]) +
           " (M = " + std::to_string(s.n) + "); points that tile M, or a larger BN, serve it";
  // TMA: 16-byte aligned bases and row strides (PACK=1 copies operands that are not into aligned scratch);
  // coordinates are 32-bit.
  if (p["PACK"]) {
    const PackPlan plan = pack_plan(s, eb, gemm_wgmma_pack_rule(eb));
    if (!plan.pack_a && !plan.pack_b)
      return std::string(
          "PACK=1 has nothing to pack here: TMA reads A and B in place, so the PACK=0 twin of this candidate "
          "serves this problem");
  } else if ((s.lda * eb) % 16 != 0 || (s.ldb * eb) % 16 != 0) {
    return "TMA needs 16-byte row strides: lda*" + std::to_string(eb) + " = " + std::to_string(s.lda * eb) +
           ", ldb*" + std::to_string(eb) + " = " + std::to_string(s.ldb * eb) +
           " bytes; the PACK=1 twin of this candidate, or a gemm_mma candidate, serves this problem";
  } else if (s.a_alignment % 16 != 0 || s.b_alignment % 16 != 0) {
    return std::string(
        "TMA needs A and B base addresses aligned to 16 bytes; the PACK=1 twin of this candidate, or a "
        "gemm_mma candidate, serves this problem");
  }
  // A cluster's second tile may start one tile past the matrix (and its loads there read zeros).
  if (std::max({s.m + p["BM"] * p["CLUSTER_M"], s.n + p["BN"] * p["CLUSTER_N"], s.k + p["BK"]}) > INT32_MAX)
    return std::string("TMA coordinates are 32-bit: M, N and K plus a cluster's tiles must be below 2^31");
  const int64_t ctas = gemm_wgmma_grid(p, s, 0, p["SPLIT_K"]);
  if (ctas > INT32_MAX && !p["PERSISTENT"])
    return "the grid would need " + std::to_string(ctas) + " CTAs (over 2^31 - 1); PERSISTENT=1 serves it";
  return std::nullopt;
}

KernelTemplate make_template(const Family& f) {
  const int64_t eb = f.element_bytes;
  KernelTemplate t;
  t.name = f.name;
  t.source_file = "gemm_wgmma.cu";
  t.summary = f.summary;
  t.entry_points = {"tf_gemm_rc", kPackEntry, kPackTransposedEntry, kReduceEntry, kScaleCEntry};
  if (eb != 1) t.entry_points.insert(t.entry_points.end(), {"tf_gemm_rr", "tf_gemm_cr", "tf_gemm_cc"});
  t.parameters = {
      {"BM", 128, "CTA tile rows (M): CONSUMERS x 64 x m64 blocks per consumer"},
      {"BN", f.default_bn, "CTA tile columns (N), the wgmma instruction's N"},
      {"BK", kSwizzleBytes / eb, "CTA tile depth (K) per TMA stage, a multiple of 128 bytes"},
      {"STAGES", 4, "depth of the TMA ring of shared-memory stages"},
      {"CONSUMERS", 2, "consumer warpgroups issuing wgmma (a producer warpgroup issues the TMA loads)"},
      {"GROUP_M", 8, "CTA raster swizzle: tile rows (cluster tile rows) walked together for L2 reuse"},
      {"CLUSTER_M", 2, "CTAs per cluster along M: 2 = two tile rows share each B tile (TMA multicast)"},
      {"CLUSTER_N", 1, "CTAs per cluster along N: 2 = two tile columns share each A tile (TMA multicast)"},
      {"SPLIT_K", 1,
       "K splits: each output tile's K loop is shared by this many units, whose fp32 partials a second pass "
       "adds in a fixed order",
       false},
      {"PERSISTENT", 1, "1 = launch only as many CTAs as fit on the GPU at once; each walks many units",
       false, 0},
      {"PACK", 0,
       "1 = copy operands TMA cannot read in place (a leading dimension or base off 16 bytes) into aligned "
       "scratch first",
       false, 0},
      {"A_REGS", 0,
       "1 = consumers load A into registers (ldmatrix) and wgmma reads it there; row-major A only", true, 0},
      {"SWAP_AB", 0,
       "1 = compute Cᵀ = Bᵀ·Aᵀ, C stored transposed: the problem's M is the kernel's N (BN down to 8 for "
       "skinny M) and its B streams as the kernel's A",
       true, 0},
      layouts_parameter(),
  };
  t.constraints = constraints(eb);
  t.constraints.push_back(layouts_constraint());
  t.constraints.push_back({"a_regs_layouts", "A_REGS=1 computes RR and RC only: LAYOUTS names neither",
                           [eb](const Point& p, const GpuLimits&) {
                             return eb != 2 || !p["A_REGS"] ||
                                    (p[kLayoutsParameter] & (layout_bit({Order::row, Order::row}) |
                                                             layout_bit({Order::row, Order::col})));
                           }});
  t.constraints.push_back({"k_major_b_layouts",
                           "BN not a multiple of 64 computes RC and CC only (row-major B tiles load in "
                           "64-column slabs): LAYOUTS names "
                           "neither",
                           [eb](const Point& p, const GpuLimits&) {
                             return eb != 2 || p["BN"] % 64 == 0 ||
                                    (p[kLayoutsParameter] & (layout_bit({Order::row, Order::col}) |
                                                             layout_bit({Order::col, Order::col})));
                           }});
  t.layouts = all_layouts();  // fp8: all but RC with PACK=1 only (refusal)
  t.supported_types = f.types;
  t.shared_memory_bytes = [eb](const Point& p) { return shared_memory(p, eb); };
  t.threads_per_block = threads;
  t.expected_instructions = [](const Point& p) {
    std::vector<std::string> out = {"wgmma.mma_async.sync.aligned", "cp.async.bulk.tensor.2d.shared::cluster",
                                    "mbarrier.try_wait.parity"};
    if (p["CONSUMERS"] == 2) out.push_back("setmaxnreg.inc");
    if (p["A_REGS"]) out.push_back("ldmatrix.sync.aligned.m8n8.x4");
    // (How a stage is released to the partner is left to the fuzzer: the release_local mutant must reach it.)
    if (cluster_size(p) > 1) {
      out.push_back(".multicast::cluster");
      out.push_back("barrier.cluster.wait");
    }
    return out;
  };
  t.refusal = [f](const Point& p, const GemmShape& s) { return refusal(p, s, f); };
  t.swaps_operands = [](const Point& p) { return p["SWAP_AB"] != 0; };
  t.geometry = [eb](const Point& p, const GemmShape& s) {
    LaunchGeometry g;
    g.grid_x = gemm_wgmma_grid(p, s, 0, p["SPLIT_K"]);
    g.workspace_bytes = split_k_workspace_bytes(s, p["SPLIT_K"]);
    if (p["PACK"]) {
      const PackPlan plan = pack_plan(s, eb, gemm_wgmma_pack_rule(eb));
      g.workspace_bytes += plan.a_bytes + plan.b_bytes;
    }
    g.cluster_x = cluster_size(p);
    g.block_x = threads(p);
    g.shared_memory_bytes = shared_memory(p, eb);
    return g;
  };
  t.archs = {"sm_90"};
  t.arch_suffix = "a";
  // ptxas: "Potential Performance Loss: wgmma.mma_async instructions are serialized due to ...".
  t.slow_path_log_phrases = {"wgmma.mma_async instructions are serialized"};
  t.mutants = gemm_wgmma_mutant_names();
  // fp8: each K tile's sum stays inside the tensor core, which keeps about 14 significant bits (e8m13,
  // truncating) across the wgmma chain; the kernel adds it into fp32 after every K tile.
  if (eb == 1) t.accumulation = [](const Point& p) { return Accumulation{p["BK"], 0x1p-14}; };
  serve_canonical_forms(t);
  return t;
}

}  // namespace

const KernelTemplate& gemm_wgmma_template() {
  static const KernelTemplate t = make_template(
      {"gemm_wgmma", 2,
       "Hopper GEMM (sm_90a): wgmma + TMA ring + producer/consumer warpgroups + persistent tiles, fp16/bf16, "
       "any layout",
       sixteen_bit_type_pairs(), ""});
  return t;
}

const KernelTemplate& gemm_wgmma_fp8_template() {
  static const KernelTemplate t =
      make_template({"gemm_wgmma_fp8",
                     1,
                     "Hopper GEMM (sm_90a) on fp8 e4m3/e5m2 wgmma (m64nNk32): RC, other layouts transposed "
                     "first (PACK=1)",
                     fp8_type_pairs(),
                     "fp8 wgmma reads K-major A and B: it has a kernel for layout RC only",
                     128});
  return t;
}

const KernelTemplate& gemm_wgmma_tf32_template() {
  static const KernelTemplate t = make_template(
      {"gemm_wgmma_tf32",
       4,
       "Hopper GEMM (sm_90a) on tf32 wgmma (m64nNk8, fp32 storage and C), any layout: M/N-major "
       "tiles rewritten K-major in shared memory, or (PACK=1) transposed into RC first",
       {{Precision::tf32, Precision::fp32}},
       ""});
  return t;
}

TmaBox gemm_wgmma_operand_box(const Point& p, bool is_a, bool stored_along_k, int64_t element_bytes) {
  const int64_t slab = kSwizzleBytes / element_bytes;
  // An operand a cluster shares (B for CLUSTER_M = 2, A for CLUSTER_N = 2) is loaded in half boxes.
  const int64_t parts = is_a ? p["CLUSTER_N"] : p["CLUSTER_M"];
  return {slab, (stored_along_k ? (is_a ? p["BM"] : p["BN"]) : p["BK"]) / parts};
}

int64_t gemm_wgmma_grid(const Point& p, const GemmShape& s, int64_t requested, int64_t splits) {
  const int64_t tiles_m = (s.m + p["BM"] - 1) / p["BM"], tiles_n = (s.n + p["BN"] - 1) / p["BN"];
  const int64_t cm = p["CLUSTER_M"], cn = p["CLUSTER_N"], size = cm * cn;
  const int64_t all = ((tiles_m + cm - 1) / cm) * ((tiles_n + cn - 1) / cn) * std::max<int64_t>(splits, 1) * size;
  if (requested <= 0) return all;
  return std::min(all, (requested + size - 1) / size * size);
}

TmaBox gemm_wgmma_output_box(const Point& p, int64_t output_bytes) {
  // fp8: 64-byte rows (64 columns), so that every BN is whole slabs (kOutRowBytes in the kernel).
  const int64_t row_bytes = output_bytes == 1 ? 64 : kSwizzleBytes;
  return {row_bytes / output_bytes, rows_per_consumer(p), row_bytes};
}

bool gemm_wgmma_tma_epilogue(const Point& p, const GemmShape& shape, int64_t output_bytes,
                             uint64_t c_address) {
  return stages_c(p) && shape.c_order == Order::row && c_address % 16 == 0 &&
         (shape.ldc * output_bytes) % 16 == 0 && (shape.n * output_bytes) % 16 == 0;
}

bool gemm_wgmma_computes(const Point& p, const Layout& layout) {
  return (!p["A_REGS"] || layout.a == Order::row) && (p["BN"] % 64 == 0 || layout.b == Order::col);
}

std::vector<Layout> gemm_wgmma_kernel_layouts(int64_t element_bytes) {
  if (element_bytes != 1) return all_layouts();
  return {{Order::row, Order::col}};
}

PackRule gemm_wgmma_pack_rule(int64_t element_bytes) {
  return element_bytes == 2 ? PackRule::tma : PackRule::tma_k_major;
}

const std::vector<std::string>& gemm_wgmma_mutant_names() {
  // Codes match TF_MUTANT_* in templates/gemm_wgmma.cu.
  static const std::vector<std::string> names = {"none",
                                                 "k_tile_mismatch",
                                                 "wrong_parity",
                                                 "init_in_role",
                                                 "arrival_count",
                                                 "store_not_drained",
                                                 "skips_advance",
                                                 "no_acc_init",
                                                 "beta0_reads_c",
                                                 "multicast_self",
                                                 "release_local",
                                                 "no_exit_sync",
                                                 "store_before_slab_sync",
                                                 "release_before_mma",
                                                 "split_slot_wraps",
                                                 "transpose_early_write",
                                                 "transpose_unsynced",
                                                 "swap_steps_by_rows",
                                                 "swap_last_column"};
  return names;
}

}  // namespace tunefuzz
