// Everything the tuner knows about templates/gemm_skinny.cu, the decode GEMM (M ≤ 128 against a large B). Keep
// names, defaults and rules in step with the kernel's #defines and static_asserts: tests/test_gemm_skinny.cpp
// compiles points on both sides of each rule.
#include "runtime/templates/gemm_skinny.hpp"

#include <algorithm>
#include <bit>

#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz {

namespace {

constexpr int64_t kElementBytes = 2;   // fp16 and bf16
constexpr int64_t kMaxRows = 128;      // the M the template serves, and its largest BM
constexpr int64_t kOperandRegisters = 32;  // fragments, addresses and loop state besides the accumulators

// Quotients of tunables, 0 where the divisor is not positive (such points are pruned by `positive`, but every
// rule and formula is evaluated when a point is explained).
int64_t quotient(int64_t a, int64_t b) {
  return b > 0 ? a / b : 0;
}

int64_t ceil_quotient(int64_t a, int64_t b) {
  return b > 0 ? (a + b - 1) / b : 0;
}

int64_t threads(const Point& p) {
  return quotient(p["BN"], p["WN"]) * quotient(p["BM"], p["WM"]) * 32;
}

// B (BK, BN) or (BN, BK) and A (BM, BK) or (BK, BM) per stage: no padding, so both storage orders take the same.
int64_t shared_memory(const Point& p) {
  return p["STAGES"] * (p["BN"] + p["BM"]) * p["BK"] * kElementBytes;
}

// fp32 accumulators per thread: (WN/16)·(WM/8) fragments of four.
int64_t accumulators(const Point& p) {
  return p["WN"] * p["WM"] / 32;
}

bool is_power_of_two(int64_t x) {
  return x > 0 && std::has_single_bit(static_cast<uint64_t>(x));
}

std::vector<Constraint> constraints() {
  return {
      positive_constraint(),
      {"warp_tiling", "the warp tile WMxWN must divide the CTA tile BMxBN",
       [](const Point& p, const GpuLimits&) {
         return p["WM"] > 0 && p["WN"] > 0 && p["BM"] % p["WM"] == 0 && p["BN"] % p["WN"] == 0;
       }},
      {"mma_shape",
       "WN and BK must be multiples of 16 (m16 fragments of B transposed; k16 steps), WM 8 or a multiple of "
       "16 (ldmatrix loads one or two n8 fragments of A transposed)",
       [](const Point& p, const GpuLimits&) {
         return p["WN"] % 16 == 0 && p["BK"] % 16 == 0 && (p["WM"] == 8 || p["WM"] % 16 == 0);
       }},
      {"power_of_two", "BM, BN and BK must be powers of two: 16-byte chunks are XOR-swizzled within a stored row",
       [](const Point& p, const GpuLimits&) {
         return is_power_of_two(p["BM"]) && is_power_of_two(p["BN"]) && is_power_of_two(p["BK"]);
       }},
      {"tile_rows", "BM must be at most 128: the template serves M <= 128, and a larger tile only pads",
       [](const Point& p, const GpuLimits&) { return p["BM"] <= kMaxRows; }},
      threads_constraint("(BN/WN)*(BM/WM)*32", threads),
      shared_memory_constraint("the pipeline's shared memory, STAGES*(BN + BM)*BK*2 bytes", shared_memory),
      {"accumulators",
       "the warp tile's fp32 accumulators, WM*WN/32 registers per thread, leave too few of the 255 registers "
       "for operands (limit 128)",
       [](const Point& p, const GpuLimits&) { return accumulators(p) <= 128; }},
      {"register_budget",
       "accumulators plus ~32 registers of operands and addresses exceed what each of the CTA's threads can "
       "have (registers per SM / threads, at most 255)",
       [](const Point& p, const GpuLimits& limits) {
         if (threads(p) <= 0) return false;
         const int64_t per_thread =
             std::min<int64_t>(limits.max_registers_per_thread, limits.registers_per_sm / threads(p));
         return accumulators(p) + kOperandRegisters <= per_thread;
       }},
      {"stages", "STAGES must be at least 2: one stage loads while another is consumed",
       [](const Point& p, const GpuLimits&) { return p["STAGES"] >= 2; }},
      {"vector_width",
       "VEC must be 2, 4 or 8 elements: cp.async copies 4, 8 or 16 bytes (element-wise loads are gemm_mma's, "
       "VEC=1)",
       [](const Point& p, const GpuLimits&) {
         const int64_t v = p["VEC"];
         return v == 2 || v == 4 || v == 8;
       }},
  };
}

std::optional<std::string> refusal(const Point& p, const GemmShape& s) {
  if (auto why = operands_refusal("gemm_skinny", s, all_layouts(), "")) return why;
  if (auto why = exported_layout_refusal(p, s)) return why;
  if (quick_return(s) != QuickReturn::none) return std::nullopt;  // no load is made
  if (s.m > kMaxRows)
    return "gemm_skinny serves M <= 128 (decode and skinny shapes), not M=" + std::to_string(s.m) +
           "; gemm_mma and gemm_wgmma serve larger M";
  const int64_t units = gemm_skinny_tiles(p, s) * p["SPLIT_K"];
  if (units > INT32_MAX)
    return "the grid would need " + std::to_string(units) + " CTAs (over 2^31 - 1); a smaller SPLIT_K serves it";
  return stored_vector_refusal(s, p["VEC"], kElementBytes, "a smaller VEC, or gemm_mma with VEC=1 or PACK=1,");
}

std::vector<std::string> expected_instructions(const Point& p) {
  // Tensor cores fed by ldmatrix from a cp.async ring (16-byte copies bypass L1: .cg), and the split-K
  // fixup: partials stored and loaded through L2, an atomic arrival counter per tile.
  return {"mma.sync.aligned.m16n8k16",
          "ldmatrix.sync.aligned.m8n8",
          p["VEC"] == 8 ? "cp.async.cg.shared.global" : "cp.async.ca.shared.global",
          "st.global.cg.v4.f32",
          "ld.global.cg.v4.f32",
          "atom.global.add.u32"};
}

KernelTemplate make_template() {
  KernelTemplate t;
  t.name = "gemm_skinny";
  t.source_file = "gemm_skinny.cu";
  t.summary =
      "decode GEMM for M <= 128: B streamed once through a cp.async ring, mma.sync on Bᵀ·Aᵀ (M padded to 8), "
      "fp16/bf16, any layout, split-K finished in the same launch";
  t.entry_points = {"tf_gemm_rr", "tf_gemm_rc", "tf_gemm_cr", "tf_gemm_cc", kScaleCEntry};
  t.parameters = {
      {"BM", 16, "C rows per CTA tile (M); M <= BM puts every row in one CTA, so B is read once"},
      {"BN", 64, "C columns per CTA tile (N): the width of the slice of B a CTA streams"},
      {"BK", 128, "K per pipeline stage"},
      {"WM", 16, "warp tile rows (M): 8 or a multiple of 16"},
      {"WN", 16, "warp tile columns (N): a multiple of 16"},
      {"STAGES", 4, "shared-memory pipeline depth: STAGES-1 tiles of B in flight while one is consumed"},
      {"VEC", 8,
       "elements per cp.async along the stored rows of A and B: 2, 4 or 8; must divide their lengths and "
       "lds"},
      {"SPLIT_K", 1,
       "K splits: each output tile's K range is shared by this many CTAs; the last to finish adds the "
       "partials in split order",
       false},
      layouts_parameter(),
  };
  t.constraints = constraints();
  t.constraints.push_back(layouts_constraint());
  t.layouts = all_layouts();
  t.supported_types = sixteen_bit_type_pairs();
  t.shared_memory_bytes = shared_memory;
  t.threads_per_block = threads;
  t.expected_instructions = expected_instructions;
  t.refusal = refusal;
  t.geometry = [](const Point& p, const GemmShape& s) { return gemm_skinny_geometry(p, s, {}); };
  t.mutants = gemm_skinny_mutant_names();
  serve_canonical_forms(t);
  return t;
}

}  // namespace

const KernelTemplate& gemm_skinny_template() {
  static const KernelTemplate t = make_template();
  return t;
}

const std::vector<std::string>& gemm_skinny_mutant_names() {
  // Codes match TF_MUTANT_* in templates/gemm_skinny.cu: bugs of the cross-CTA hand-off of split-K.
  static const std::vector<std::string> names = {"none", "no_counter_reset", "arrive_before_stores",
                                                 "last_off_by_one"};
  return names;
}

int64_t gemm_skinny_tiles(const Point& p, const GemmShape& s) {
  return ceil_quotient(s.m, p["BM"]) * ceil_quotient(s.n, p["BN"]);
}

LaunchGeometry gemm_skinny_geometry(const Point& p, const GemmShape& s, const LaunchOverrides& overrides) {
  LaunchGeometry g;
  const int64_t splits = overrides.splits > 0 ? overrides.splits : p["SPLIT_K"];
  const int64_t tiles = gemm_skinny_tiles(p, s);
  g.grid_x = tiles * splits;
  g.block_x = threads(p);
  g.shared_memory_bytes = shared_memory(p);
  if (splits > 1) g.workspace_bytes = tiles * splits * p["BM"] * p["BN"] * 4;
  return g;
}

}  // namespace tunefuzz
