#include "tuner/campaign/case_space.hpp"

#include <algorithm>

#include "fuzz/domain.hpp"

namespace tunefuzz {

namespace {

// Alignment in bytes of an address `offset_bytes` past a 256-byte aligned allocation.
int64_t alignment_after(int64_t offset_bytes) {
  return offset_bytes == 0 ? 256 : std::min<int64_t>(256, offset_bytes & -offset_bytes);
}

}  // namespace

GemmShape shape_of(const fuzz::CaseRecord& r, int input_bytes, int output_bytes) {
  GemmShape s;
  s.a_alignment = alignment_after(r.a_offset * input_bytes);
  s.b_alignment = alignment_after(r.b_offset * input_bytes);
  s.c_alignment = alignment_after(r.c_offset * output_bytes);
  s.m = r.m;
  s.n = r.n;
  s.k = r.k;
  s.lda = r.lda();
  s.ldb = r.ldb();
  s.layout = r.layout;
  s.ldc = r.ldc();
  return s;
}

fuzz::CaseSpace case_space_for(const Candidate& candidate, int64_t sm_count) {
  const Point& p = candidate.point;
  fuzz::CaseSpace s;
  // The preferred unit of K and N: the vector width, 1 where misaligned operands are packed first, and 16
  // bytes for templates without VEC (TMA needs 16-byte row strides).
  const KernelTemplate& t = *candidate.kernel_template;
  const int64_t unit = t.parameter("PACK") && p["PACK"] ? 1
                       : t.parameter("VEC")             ? p["VEC"]
                                                        : 16 / size_of(candidate.types.input);
  s.k_unit = unit;
  s.n_unit = unit;
  s.input_bytes = size_of(candidate.types.input);
  s.output_bytes = size_of(candidate.types.output);
  const OutputTile tile = stated_tile(t, p);  // a point that swaps its operands tiles M by BN
  s.tile_m = tile.rows;
  s.tile_n = tile.cols;
  s.tile_k = p["BK"];
  s.stages = p["STAGES"];
  s.sm_count = sm_count;
  s.varies_splits = t.parameter("SPLIT_K") != nullptr;
  s.varies_grid = t.parameter("PERSISTENT") != nullptr;
  // The domain is what the launcher accepts: the template's refusal over the record's shape. Probing it
  // dimension by dimension gives each layout's steps (which residues the generator may draw off the unit);
  // a layout it accepts nothing of is not drawn at all.
  s.accepts = [kernel_template = &t, point = p, input_bytes = static_cast<int>(s.input_bytes),
               output_bytes = static_cast<int>(s.output_bytes)](const fuzz::CaseRecord& record) {
    return !kernel_template->refusal(point, shape_of(record, input_bytes, output_bytes));
  };
  s.layouts.clear();
  for (const Layout& layout : t.layouts)
    if (const auto steps = fuzz::probe_steps(s, layout, s.accepts)) {
      s.layouts.push_back(layout);
      s.steps.push_back(*steps);
      s.zero_steps.push_back(fuzz::probe_zero_steps(s, layout, s.accepts).value_or(*steps));
    }
  // M's bound, where the candidate has one (gemm_skinny, points that swap their operands): the largest of its
  // layouts', so every layout keeps every M it takes (the refusal filters the rest).
  bool bounded = !s.layouts.empty();
  for (const Layout& layout : s.layouts) {
    const int64_t most = fuzz::probe_max_m(s, layout, s.accepts);
    bounded = bounded && most > 0;
    s.max_m = std::max(s.max_m, most);
  }
  if (!bounded) s.max_m = 0;
  if (s.layouts.empty()) {  // accepts nothing probed: let the generator draw and the refusal say why
    s.layouts = t.layouts;
    s.steps.clear();
    s.zero_steps.clear();
  }
  return s;
}

}  // namespace tunefuzz
