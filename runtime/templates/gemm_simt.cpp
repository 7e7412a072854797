// Everything the tuner knows about templates/gemm_simt.cu. Keep names, defaults and rules in step with the
// kernel's #defines and static_asserts: tests/test_gemm_simt.cpp compiles points on both sides of each rule.
#include "runtime/templates/gemm_simt.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz {

namespace {

// The two registrations of the one source: fp32 inputs (portable to hiprtc) and 16-bit inputs (CUDA).
struct Family {
  const char* name;
  int64_t element_bytes;  ///< bytes per input element; the stages hold fp32 whatever it is
  const char* summary;
  std::vector<TypePair> types;
};

constexpr int64_t kPad = 4;                // floats of padding per stage row of A and of B (kAPad, kBPad)
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

// A transposed (BK, BM + 4) and B (BK, BN + 4) per stage, in fp32.
int64_t shared_memory(const Point& p) {
  return p["STAGES"] * p["BK"] * (p["BM"] + kPad + p["BN"] + kPad) * 4;
}

// Floats a thread holds between loading a tile from global memory and storing it to shared memory.
int64_t staged_floats(const Point& p) {
  const int64_t vec = p["VEC"];
  const int64_t a_loads = ceil_quotient(quotient(p["BM"] * p["BK"], vec), threads(p));
  const int64_t b_loads = ceil_quotient(quotient(p["BK"] * p["BN"], vec), threads(p));
  return (a_loads + b_loads) * vec;
}

std::vector<Constraint> constraints(int64_t eb) {
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
          "the stages' shared memory, STAGES*BK*(BM+4 + BN+4)*4 bytes (fp32 rows padded by 4 floats)",
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
      {"vector_width", "VEC must be 1, 2, 4 or 8 elements, at most 16 bytes",
       [eb](const Point& p, const GpuLimits&) {
         const int64_t v = p["VEC"];
         return (v == 1 || v == 2 || v == 4 || v == 8) && v * eb <= 16;
       }},
      {"vector_in_tile",
       "VEC must divide BK, BM and BN: a load along a stored row (K, M or N) stays within one row of a tile",
       [](const Point& p, const GpuLimits&) {
         const int64_t v = p["VEC"];
         return v > 0 && p["BK"] % v == 0 && p["BM"] % v == 0 && p["BN"] % v == 0;
       }},
      {"switch", "PACK is a switch: 0 or 1", [](const Point& p, const GpuLimits&) { return p["PACK"] <= 1; }},
      {"pack_vector_width", "PACK=1 exists to restore 16-byte loads: it only pairs with a 16-byte VEC",
       [eb](const Point& p, const GpuLimits&) { return !p["PACK"] || p["VEC"] * eb == 16; }},
  };
}

std::optional<std::string> refusal(const Point& p, const GemmShape& s, const Family& f) {
  // The kernel reads every storage order in place; PACK=1 copies misaligned operands, in their own order.
  if (auto why = operands_refusal(f.name, s, all_layouts(), "")) return why;
  if (auto why = exported_layout_refusal(p, s)) return why;
  if (quick_return(s) != QuickReturn::none) return std::nullopt;  // no load is made, nothing is packed
  const int64_t units = ceil_quotient(s.m, p["BM"]) * ceil_quotient(s.n, p["BN"]) * p["SPLIT_K"];
  if (units > INT32_MAX) return "the grid would need " + std::to_string(units) + " CTAs (over 2^31 - 1)";
  if (p["PACK"]) {
    // The copies have rows of whole vectors, zero-padded (K too, where an operand is stored along K): a
    // vector that runs past M, N or K reads padding, and the epilogue stores only rows below M and columns
    // below N.
    const PackPlan plan = pack_plan(s, f.element_bytes, PackRule::loads16);
    if (!plan.pack_a && !plan.pack_b)
      return std::string(
          "PACK=1 has nothing to pack here: A and B are aligned for 16-byte loads, so the PACK=0 twin of "
          "this candidate serves this problem");
    return std::nullopt;
  }
  return stored_vector_refusal(s, p["VEC"], f.element_bytes, "a smaller VEC or PACK=1");
}

LaunchGeometry geometry(const Point& p, const GemmShape& s, int64_t eb) {
  return gemm_simt_geometry(p, s, {}, eb);
}

std::vector<std::string> expected_instructions(const Point& p, int64_t eb) {
  // Fused multiply-adds on CUDA cores and the thread tile read from shared memory as float4, at every point.
  // fp32 VEC=4: a row-major B's 16-byte loads stored to shared memory whole, where LAYOUTS has an order with
  // a row-major B (the epilogue's float4 loads of C are there at every VEC, so st.shared tells the operand
  // loads apart). fp32 VEC=2: 8-byte loads, which nothing else uses. 16-bit VEC=8 and 4: 16- and 8-byte loads
  // of 32-bit words.
  std::vector<std::string> out = {"fma.rn.f32", "ld.shared.v4.f32"};
  const int64_t bytes = p["VEC"] * eb;
  const int64_t row_major_b = layout_bit({Order::row, Order::row}) | layout_bit({Order::col, Order::row});
  if (eb == 4 && bytes == 16 && (p[kLayoutsParameter] & row_major_b)) out.push_back("st.shared.v4.f32");
  if (eb == 4 && bytes == 8) out.push_back("ld.global.v2.f32");
  if (eb == 2 && bytes == 16) out.push_back("ld.global.v4.u32");
  if (eb == 2 && bytes == 8) out.push_back("ld.global.v2.u32");
  return out;
}

KernelTemplate make_template(const Family& f) {
  const int64_t eb = f.element_bytes;
  KernelTemplate t;
  t.name = f.name;
  t.source_file = "gemm_simt.cu";
  t.summary = f.summary;
  // A kernel and its split-K form per storage order in LAYOUTS. The packing pass runs on CUDA only: the HIP
  // launcher does not pack.
  for (const Layout& layout : all_layouts()) t.entry_points.push_back(gemm_entry_name(layout));
  for (const Layout& layout : all_layouts())
    t.entry_points.push_back(gemm_entry_name(layout, "tf_gemm_split"));
  t.entry_points.insert(t.entry_points.end(), {kScaleCEntry, kReduceEntry, kPackEntry});
  t.parameters = {
      {"BM", 128, "CTA tile rows (M)"},
      {"BN", 128, "CTA tile columns (N)"},
      {"BK", 8, "CTA tile depth (K) per shared-memory stage"},
      {"TM", 8, "thread tile rows: each thread computes TM x TN outputs"},
      {"TN", 8, "thread tile columns"},
      {"STAGES", 2, "shared-memory stages: one is read while the next is written"},
      {"VEC", 16 / eb, "elements per global load along the stored rows of A and B (at most 16 bytes)"},
      {"MIN_BLOCKS", 2, "CTAs per SM the register allocation must leave room for (CUDA; 1 = no cap)"},
      {"GROUP_M", 8, "CTA raster swizzle: tile rows walked together for L2 reuse"},
      {"PACK", 0,
       "1 = copy misaligned A/B into zero-padded scratch first, then load 16 bytes at a time (CUDA only)",
       false, 0},
      {"SPLIT_K", 1,
       "K splits: each output tile's K loop is shared by this many CTAs, then reduced in order (CUDA only)",
       false},
      layouts_parameter(),
  };
  t.constraints = constraints(eb);
  t.constraints.push_back(layouts_constraint());
  t.supported_types = f.types;
  t.layouts = all_layouts();  // read in place, each order by its own kernel
  t.shared_memory_bytes = shared_memory;
  t.threads_per_block = threads;
  t.expected_instructions = [eb](const Point& p) { return expected_instructions(p, eb); };
  t.refusal = [f](const Point& p, const GemmShape& s) { return refusal(p, s, f); };
  t.geometry = [eb](const Point& p, const GemmShape& s) { return geometry(p, s, eb); };
  t.mutants = gemm_simt_mutant_names();
  // A point that splits K launches the split kernel (the runner's choice for more than one split): that of
  // the first storage order in LAYOUTS.
  t.main_entry = [](const Point& p) {
    const std::string kernel = p["SPLIT_K"] > 1 ? "tf_gemm_split" : "tf_gemm";
    for (const Layout& layout : all_layouts())
      if (p[kLayoutsParameter] & layout_bit(layout)) return gemm_entry_name(layout, kernel);
    return kernel;  // LAYOUTS names no order: the layouts constraint prunes such a point first
  };
  serve_canonical_forms(t);
  return t;
}

}  // namespace

LaunchGeometry gemm_simt_geometry(const Point& p, const GemmShape& s, const LaunchOverrides& overrides,
                                  int64_t element_bytes) {
  LaunchGeometry g;
  const int64_t splits = overrides.splits > 0 ? overrides.splits : p["SPLIT_K"];
  g.grid_x = ceil_quotient(s.m, p["BM"]) * ceil_quotient(s.n, p["BN"]) * splits;
  g.block_x = threads(p);
  g.shared_memory_bytes = shared_memory(p);
  if (quick_return(s) != QuickReturn::none) return g;  // nothing loaded: no copies, no partials
  if (p["PACK"]) {
    const PackPlan plan = pack_plan(s, element_bytes, PackRule::loads16);
    g.workspace_bytes = plan.a_bytes + plan.b_bytes;
  }
  g.workspace_bytes += split_k_workspace_bytes(s, splits);
  return g;
}

const KernelTemplate& gemm_simt_template() {
  static const KernelTemplate t = make_template(
      {"gemm_simt",
       4,
       "fp32 GEMM on CUDA cores (FFMA, no tensor cores), register-staged shared-memory stages, every layout "
       "read in place; portable to hiprtc",
       {{Precision::fp32, Precision::fp32}}});
  return t;
}

const KernelTemplate& gemm_simt_16bit_template() {
  static const KernelTemplate t = make_template(
      {"gemm_simt_16bit", 2,
       "the gemm_simt kernel on fp16/bf16 inputs (converted to fp32 as staged, FFMA, fp32 accumulation), any "
       "layout and alignment in one launch: the small, short-latency kernel for tiny problems (CUDA)",
       sixteen_bit_type_pairs()});
  return t;
}

const std::vector<std::string>& gemm_simt_mutant_names() {
  // Codes match TF_MUTANT_* in templates/gemm_simt.cu.
  static const std::vector<std::string> names = {
      "none",           "skip_last_k_tile", "drop_tail",
      "beta0_reads_c",  "int32_offset",     "no_stage_barrier",
      "group_drop",     "no_k_guard",       "split_drops_remainder",
      "partial_scaled", "col_guard_stored", "col_b_step"};
  return names;
}

}  // namespace tunefuzz
