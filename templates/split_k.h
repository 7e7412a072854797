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

// The second pass over C's quads (four columns of a row; quads_per_row of them per row), grid-stride, the
// sums handed to store(row, col, v0, v1) as two pairs. With one thread per quad (tf_reduce_lanes,
// tile_map.h: a large output) each thread adds the quad's partials in split order. A small output gets a
// group of `lanes` adjacent threads per quad instead, so that the pass spreads over the GPU (one 128x128 tile
// in 128 splits ran on 16 CTAs, 16.5 us with DRAM 7%): lane j adds splits j, j + lanes, j + 2·lanes, ... in
// that order, four loads in flight, and the group's first lane then adds the lanes' sums in lane order
// through shared memory (no warp shuffles: the source compiles under hiprtc too). Either way the order
// depends on the problem and the split count only, never on which split finished first.
template <class StorePair>
__device__ __forceinline__ void reduce_splits(const TfGemmParams& p, tf_i64 quads_per_row, StorePair store) {
  const tf_i64 quads = p.m * quads_per_row;
  const int lanes = tf_reduce_lanes(p.splits, quads, static_cast<tf_i64>(gridDim.x) * blockDim.x);
  if (lanes == 1) {
    for (tf_i64 q = blockIdx.x * static_cast<tf_i64>(blockDim.x) + threadIdx.x; q < quads;
         q += static_cast<tf_i64>(gridDim.x) * blockDim.x) {
      const tf_i64 row = q / quads_per_row;
      const tf_i64 col = (q % quads_per_row) * 4;
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
      for (tf_i64 s = 0; s < p.splits; ++s) {
        const float4 part = *reinterpret_cast<const float4*>(p.workspace + (s * p.m + row) * p.ldw + col);
        sum.x += part.x;
        sum.y += part.y;
        sum.z += part.z;
        sum.w += part.w;
      }
      store(row, col, sum.x, sum.y);
      store(row, col + 2, sum.z, sum.w);
    }
    return;
  }
  __shared__ float4 lane_sums[TF_REDUCE_THREADS];  // blockDim.x == TF_REDUCE_THREADS, the host's launch
  const auto add = [](float4& sum, const float4 v) {
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
  };
  const tf_i64 groups = blockDim.x / lanes, split_floats = p.m * p.ldw;
  const int lane = threadIdx.x % lanes;
  // Every thread of the CTA takes each step, so that the barriers are reached by all of them.
  for (tf_i64 first = blockIdx.x * groups; first < quads; first += static_cast<tf_i64>(gridDim.x) * groups) {
    const tf_i64 q = first + threadIdx.x / lanes;
    const tf_i64 row = q / quads_per_row;
    const tf_i64 col = (q % quads_per_row) * 4;
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    if (q < quads) {
      const float* w = p.workspace + row * p.ldw + col;
      const auto part = [&](tf_i64 s) { return *reinterpret_cast<const float4*>(w + s * split_floats); };
      tf_i64 s = lane;
      for (; s + 3 * lanes < p.splits; s += 4 * lanes) {
        const float4 v0 = part(s), v1 = part(s + lanes), v2 = part(s + 2 * lanes), v3 = part(s + 3 * lanes);
        add(sum, v0);
        add(sum, v1);
        add(sum, v2);
        add(sum, v3);
      }
      for (; s < p.splits; s += lanes) add(sum, part(s));
    }
    lane_sums[threadIdx.x] = sum;
    __syncthreads();
    if (lane == 0 && q < quads) {
#if !defined(TF_MUTANT_REDUCE_FIRST_LANE_ONLY) || TF_MUTANT != TF_MUTANT_REDUCE_FIRST_LANE_ONLY
      for (int j = 1; j < lanes; ++j) add(sum, lane_sums[threadIdx.x + j]);
#endif
      store(row, col, sum.x, sum.y);
      store(row, col + 2, sum.z, sum.w);
    }
    __syncthreads();
  }
}

}  // namespace tf

#endif  // TUNEFUZZ_SPLIT_K_H
