#include "runtime/templates/gemm_rules.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "templates/tile_map.h"  // tf_reduce_lanes: the reduce kernel reads its group size the same way

namespace tunefuzz {

const std::vector<TypePair>& sixteen_bit_type_pairs() {
  static const std::vector<TypePair> pairs = {
      {Precision::bf16, Precision::bf16}, {Precision::bf16, Precision::fp32},
      {Precision::bf16, Precision::fp16}, {Precision::fp16, Precision::fp16},
      {Precision::fp16, Precision::fp32}, {Precision::fp16, Precision::bf16}};
  return pairs;
}

const std::vector<TypePair>& fp8_type_pairs() {
  static const std::vector<TypePair> pairs = {
      {Precision::fp8e4m3, Precision::bf16}, {Precision::fp8e4m3, Precision::fp16},
      {Precision::fp8e4m3, Precision::fp32}, {Precision::fp8e4m3, Precision::fp8e4m3},
      {Precision::fp8e5m2, Precision::bf16}, {Precision::fp8e5m2, Precision::fp16},
      {Precision::fp8e5m2, Precision::fp32}, {Precision::fp8e5m2, Precision::fp8e5m2}};
  return pairs;
}

const std::vector<Layout>& all_layouts() {
  static const std::vector<Layout> layouts = {
      {Order::row, Order::row}, {Order::row, Order::col}, {Order::col, Order::row}, {Order::col, Order::col}};
  return layouts;
}

int64_t layout_bit(const Layout& layout) {
  return int64_t{1} << ((layout.a == Order::col ? 2 : 0) + (layout.b == Order::col ? 1 : 0));
}

std::string gemm_entry_name(const Layout& layout, std::string_view kernel) {
  std::string order = to_string(layout);
  for (char& c : order) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::string(kernel) + "_" + order;
}

int layout_index(const Layout& layout) {
  return (layout.a == Order::col ? 2 : 0) + (layout.b == Order::col ? 1 : 0);
}

std::string layout_names(int64_t mask) {
  std::string out;
  for (const Layout& layout : all_layouts())
    if (mask & layout_bit(layout)) out += (out.empty() ? "" : ", ") + to_string(layout);
  return out;
}

ParameterDecl layouts_parameter() {
  return {
      kLayoutsParameter, kAllLayouts,
      "storage orders the image has a kernel for, one bit each: RR 1, RC 2, CR 4, CC 8 (a campaign compiles "
      "the orders its problems use)"};
}

Constraint layouts_constraint() {
  return {"layouts", "LAYOUTS is a mask of the storage orders RR 1, RC 2, CR 4 and CC 8: 1 to 15",
          [](const Point& p, const GpuLimits&) {
            return p[kLayoutsParameter] >= 1 && p[kLayoutsParameter] <= kAllLayouts;
          }};
}

std::optional<std::string> exported_layout_refusal(const Point& point, const GemmShape& shape) {
  const int64_t mask = point[kLayoutsParameter];
  if (mask & layout_bit(shape.layout)) return std::nullopt;
  return "LAYOUTS=" + std::to_string(mask) + " compiles layouts " + layout_names(mask) + " only, not " +
         to_string(shape.layout) + "; the same point with " + to_string(shape.layout) +
         " in LAYOUTS serves it";
}

namespace {

/// Bytes of the narrowest C the template writes (1 where it writes fp8).
int64_t narrowest_output_bytes(std::string_view template_name) {
  int64_t bytes = 4;
  for (const TypePair& types : find_template(template_name).supported_types)
    bytes = std::min<int64_t>(bytes, size_of(types.output));
  return bytes;
}

}  // namespace

std::optional<std::string> size_refusal(const GemmShape& s) {
  if (s.m < 0 || s.n < 0 || s.k < 0)
    return "M, N and K must not be negative (M=" + std::to_string(s.m) + ", N=" + std::to_string(s.n) +
           ", K=" + std::to_string(s.k) + ")";
  return std::nullopt;
}

QuickReturn quick_return(const GemmShape& s) {
  if (s.m == 0 || s.n == 0) return QuickReturn::nothing;
  return s.k == 0 ? QuickReturn::scale_c : QuickReturn::none;
}

LaunchGeometry scale_c_geometry(const GemmShape& s) {
  constexpr int64_t threads = 256, most_ctas = 65535;
  LaunchGeometry g;
  g.block_x = threads;
  g.grid_x = std::clamp<int64_t>((s.m * s.n + threads - 1) / threads, 1, most_ctas);
  return g;
}

namespace {
int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
}  // namespace

PackPlan pack_plan(const GemmShape& s, int64_t element_bytes, PackRule rule) {
  const int64_t unit = 16 / element_bytes;  // elements per 16 bytes
  const bool loads16 = rule == PackRule::loads16;
  const auto [a, b] = stored_operands(s);
  const auto needs = [&](const Stored& o) {
    return o.ld % unit != 0 || o.alignment % 16 != 0 || (loads16 && o.extent % unit != 0);
  };
  PackPlan plan;
  // The storage order the GEMM reads: the problem's, or the one the rule's kernel alone reads (K-major A and
  // B is RC), into which the other operands are copied as their transposes.
  plan.layout = rule == PackRule::tma_k_major ? Layout{Order::row, Order::col} : s.layout;
  plan.transpose_a = plan.layout.a != s.layout.a;
  plan.transpose_b = plan.layout.b != s.layout.b;
  const bool a_col = plan.layout.a == Order::col, b_col = plan.layout.b == Order::col;
  // 16-byte loads: K padded to a whole load when an operand read along K (row-major A, column-major B) has K
  // misaligned; then the other operand needs zero rows up to the padded K too, so both are packed.
  const bool pad_k = loads16 && s.k % unit != 0 && (!a_col || b_col);
  plan.k = pad_k ? round_up(s.k, unit) : s.k;
  plan.pack_a = plan.transpose_a || pad_k || needs(a);
  plan.pack_b = plan.transpose_b || pad_k || needs(b);
  // Stored shapes with the padded K: A is (M, K) or (K, M), B is (K, N) or (N, K).
  plan.a_rows = a_col ? plan.k : s.m;
  plan.a_cols = a_col ? s.m : plan.k;
  plan.b_rows = b_col ? s.n : plan.k;
  plan.b_cols = b_col ? plan.k : s.n;
  plan.lda = plan.pack_a ? round_up(plan.a_cols, unit) : s.lda;
  plan.ldb = plan.pack_b ? round_up(plan.b_cols, unit) : s.ldb;
  if (plan.pack_a) plan.a_bytes = round_up(plan.a_rows * plan.lda * element_bytes, 256);
  if (plan.pack_b) plan.b_bytes = round_up(plan.b_rows * plan.ldb * element_bytes, 256);
  return plan;
}

LaunchGeometry split_k_reduce_geometry(const GemmShape& s, int64_t splits) {
  constexpr int64_t threads = TF_REDUCE_THREADS, most_ctas = 65535;
  const int64_t quads = s.m * split_k_partial_ld(s) / 4;
  // The kernel reads its group size back from the launch: as many threads per quad as here.
  const int64_t lanes = tf_reduce_lanes(splits, quads, TF_REDUCE_BUSY_THREADS);
  LaunchGeometry g;
  g.block_x = threads;
  g.grid_x = std::clamp<int64_t>((quads * lanes + threads - 1) / threads, 1, most_ctas);
  return g;
}

int64_t split_k_partial_ld(const GemmShape& s) {
  return (s.n + 3) / 4 * 4;
}

int64_t split_k_workspace_bytes(const GemmShape& s, int64_t splits) {
  return splits > 1 ? splits * s.m * split_k_partial_ld(s) * static_cast<int64_t>(sizeof(float)) : 0;
}

std::pair<Stored, Stored> stored_operands(const GemmShape& s) {
  const bool a_col = s.layout.a == Order::col, b_col = s.layout.b == Order::col;
  return {{"A", a_col ? "M" : "K", a_col ? s.m : s.k, s.lda, s.a_alignment},
          {"B", b_col ? "K" : "N", b_col ? s.k : s.n, s.ldb, s.b_alignment}};
}

std::optional<std::string> operands_refusal(std::string_view template_name, const GemmShape& s,
                                            const std::vector<Layout>& layouts,
                                            std::string_view layout_note) {
  if (std::find(layouts.begin(), layouts.end(), s.layout) == layouts.end())
    return std::string(template_name) + " does not compute layout " + to_string(s.layout) + " (" +
           std::string(layout_note) + ")";
  if (auto why = size_refusal(s)) return why;
  const auto [a, b] = stored_operands(s);
  const bool c_col = s.c_order == Order::col;
  if (a.ld < a.extent || b.ld < b.extent || s.ldc < (c_col ? s.m : s.n))
    return std::string("leading dimensions must be at least the stored row lengths (lda >= ") +
           a.extent_name + ", ldb >= " + b.extent_name +
           (c_col ? ", ldc >= M for a column-major C)" : ", ldc >= N)");
  if (s.c_alignment % narrowest_output_bytes(template_name) != 0)
    return std::string("C's base address is not aligned to its element size");
  return std::nullopt;
}

Constraint positive_constraint() {
  return {"positive", "every tunable must be at least 1", [](const Point& p, const GpuLimits&) {
            return std::all_of(p.values().begin(), p.values().end(),
                               [](const auto& v) { return v.second >= 1; });
          }};
}

Constraint threads_constraint(const std::string& formula, std::function<int64_t(const Point&)> threads) {
  return {"threads", "more threads per CTA, " + formula + ", than the device allows",
          [threads = std::move(threads)](const Point& p, const GpuLimits& limits) {
            return threads(p) <= std::min<int64_t>(1024, limits.max_threads_per_block);
          }};
}

Constraint shared_memory_constraint(const std::string& what, std::function<int64_t(const Point&)> bytes) {
  return {"shared_memory", what + ", exceeds the opt-in limit per CTA",
          [bytes = std::move(bytes)](const Point& p, const GpuLimits& limits) {
            return bytes(p) <= limits.shared_memory_per_block_optin;
          }};
}

std::optional<std::string> shape_refusal(std::string_view template_name, const GemmShape& s,
                                         int64_t c_element_bytes, int64_t tile_m, int64_t tile_n) {
  if (s.layout != Layout{} || s.c_order != Order::row)
    return std::string(template_name) + " computes row-major A, B and C only (layout RR), not " +
           to_string(s.layout) + (s.c_order != Order::row ? " with C column-major" : "");
  if (auto why = size_refusal(s)) return why;
  if (s.lda < s.k || s.ldb < s.n || s.ldc < s.n)
    return std::string("leading dimensions must be at least the row lengths (lda >= K, ldb >= N, ldc >= N)");
  if (s.c_alignment % c_element_bytes != 0)
    return "C's base address is not aligned to its element size (" + std::to_string(c_element_bytes) +
           " bytes)";
  const int64_t tiles = ((s.m + tile_m - 1) / tile_m) * ((s.n + tile_n - 1) / tile_n);
  if (tiles > INT32_MAX) return "the grid would need " + std::to_string(tiles) + " CTAs (over 2^31 - 1)";
  return std::nullopt;
}

std::optional<std::string> vector_refusal(const GemmShape& s, int64_t vec, int64_t element_bytes,
                                          std::string_view instead) {
  for (const auto& [value, name] : {std::pair{s.k, "K"}, {s.n, "N"}, {s.lda, "lda"}, {s.ldb, "ldb"}})
    if (value % vec != 0)
      return "VEC=" + std::to_string(vec) + " needs " + name + " to be a multiple of " + std::to_string(vec) +
             " (" + name + "=" + std::to_string(value) + "); " + std::string(instead) +
             " serves this problem";
  const int64_t vec_bytes = vec * element_bytes;
  if (s.a_alignment % vec_bytes != 0 || s.b_alignment % vec_bytes != 0)
    return "VEC=" + std::to_string(vec) + " needs A and B base addresses aligned to " +
           std::to_string(vec_bytes) + " bytes";
  return std::nullopt;
}

std::optional<std::string> stored_vector_refusal(const GemmShape& s, int64_t vec, int64_t element_bytes,
                                                 std::string_view instead) {
  const auto [a, b] = stored_operands(s);
  for (const Stored& x : {a, b}) {
    for (const auto& [value, name] : {std::pair<int64_t, std::string>{x.extent, x.extent_name},
                                      {x.ld, std::string("ld") + (x.name[0] == 'A' ? "a" : "b")}})
      if (value % vec != 0)
        return "VEC=" + std::to_string(vec) + " needs " + name + " to be a multiple of " + std::to_string(vec) +
               " (" + name + "=" + std::to_string(value) + ", layout " + to_string(s.layout) + "); " +
               std::string(instead) + " serves this problem";
    if (x.alignment % (vec * element_bytes) != 0)
      return "VEC=" + std::to_string(vec) + " needs A and B base addresses aligned to " +
             std::to_string(vec * element_bytes) + " bytes";
  }
  return std::nullopt;
}

}  // namespace tunefuzz
