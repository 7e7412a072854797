// Split-K's two halves, shared by the templates that split K: each split of a tile writes its unscaled fp32
// partial into the workspace (splits × m × ldw floats, split-major; ldw a multiple of 4 and the workspace
// 16-byte aligned, as the host allocates it), and the second pass, tf_reduce, adds the partials of every
// element in a fixed order and applies the template's epilogue. The fixed order makes the result independent
// of which split finished first.
#ifndef TUNEFUZZ_SPLIT_K_H
#define TUNEFUZZ_SPLIT_K_H

#include "gemm_params.h"
#include "tile_map.h"

namespace tf {

// Columns col and col + 1 of `row` of split `split`'s partial. A pair that starts inside a row stays inside
// the row's ldw (col is even, ldw a multiple of 4), so only the start is bounds-checked.
__device__ __forceinline__ void store_partial(const TfGemmParams& p, tf_i64 split, tf_i64 row, tf_i64 col,
                                              float v0, float v1) {
  if (row >= p.m || col >= p.n) return;
  float* w = p.workspace + (split * p.m + row) * p.ldw + col;
  *reinterpret_cast<float2*>(w) = make_float2(v0, v1);
}

// The second pass over C's quads (four columns of a row; quads_per_row of them per row), grid-stride. Each
// quad is summed by a group of `lanes` adjacent threads of a warp (tf_reduce_lanes, templates/tile_map.h: as
// many as the launch has threads per quad, a power of two up to 32 and at most the splits). Lane j adds
// splits j, j + lanes, j + 2·lanes, ... in that order, four loads in flight, and the lanes' sums are then
// added by a butterfly of shuffles: a fixed order, so the result depends on the problem and the split count
// only, never on which split finished first. A small output over a huge K (one 128x128 tile in 128 splits) so
// spreads over the GPU instead of 16 CTAs each walking 128 partials one load at a time
// (results/campaign-h200-7dade18/). The sums go to store(row, col, v0, v1) as two pairs.
template <class StorePair>
__device__ __forceinline__ void reduce_splits(const TfGemmParams& p, tf_i64 quads_per_row, StorePair store) {
  const tf_i64 quads = p.m * quads_per_row;
  const tf_i64 threads = static_cast<tf_i64>(gridDim.x) * blockDim.x;
  const int lanes = tf_reduce_lanes(p.splits, quads, threads);
  const unsigned warp_lane = threadIdx.x & 31u;  // blockDim.x is a multiple of 32
  const unsigned group_mask =
      lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (warp_lane & ~static_cast<unsigned>(lanes - 1));
  const tf_i64 lane = warp_lane & static_cast<unsigned>(lanes - 1);
  const tf_i64 split_floats = p.m * p.ldw;  // one split's partial
  const tf_i64 groups = threads / lanes;
  for (tf_i64 q = (blockIdx.x * static_cast<tf_i64>(blockDim.x) + threadIdx.x) / lanes; q < quads; q += groups) {
    const tf_i64 row = q / quads_per_row;
    const tf_i64 col = (q % quads_per_row) * 4;
    const float* w = p.workspace + row * p.ldw + col;
    const auto part = [&](tf_i64 s) { return *reinterpret_cast<const float4*>(w + s * split_floats); };
    const auto add = [](float4& sum, const float4 v) {
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    };
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    tf_i64 s = lane;
    for (; s + 3 * lanes < p.splits; s += 4 * lanes) {
      const float4 v0 = part(s), v1 = part(s + lanes), v2 = part(s + 2 * lanes), v3 = part(s + 3 * lanes);
      add(sum, v0);
      add(sum, v1);
      add(sum, v2);
      add(sum, v3);
    }
    for (; s < p.splits; s += lanes) add(sum, part(s));
    // Lanes a and a ^ d add the same two values (a + b == b + a in IEEE arithmetic), so every lane of the
    // group ends with the same bits.
    for (int d = 1; d < lanes; d *= 2) {
      sum.x += __shfl_xor_sync(group_mask, sum.x, d, lanes);
      sum.y += __shfl_xor_sync(group_mask, sum.y, d, lanes);
      sum.z += __shfl_xor_sync(group_mask, sum.z, d, lanes);
      sum.w += __shfl_xor_sync(group_mask, sum.w, d, lanes);
    }
    if (lane == 0) {
      store(row, col, sum.x, sum.y);
      store(row, col + 2, sum.z, sum.w);
    }
  }
}

}  // namespace tf

#endif  // TUNEFUZZ_SPLIT_K_H
