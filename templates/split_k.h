// Split-K's two halves, shared by the templates that split K: each split of a tile writes its unscaled fp32
// partial into the workspace (splits × m × ldw floats, split-major; ldw a multiple of 4 and the workspace
// 16-byte aligned, as the host allocates it), and the second pass, tf_reduce, adds the partials of every
// element in split order and applies the template's epilogue. The fixed order makes the result independent
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

// The second pass over C's quads (four columns of a row; quads_per_row of them per row), grid-stride: the
// partials summed in split order, handed to store(row, col, v0, v1) as two pairs.
template <class StorePair>
__device__ __forceinline__ void reduce_splits(const TfGemmParams& p, tf_i64 quads_per_row, StorePair store) {
  const tf_i64 quads = p.m * quads_per_row;
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
}

}  // namespace tf

#endif  // TUNEFUZZ_SPLIT_K_H
