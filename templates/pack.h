// The packing passes, shared by the templates that stage operands (PACK=1): tf_pack copies a rows×cols
// operand (leading dimension src_ld) into a zero-padded dst_rows×dst_cols buffer whose rows are 16-byte
// aligned, so the GEMM can read it 16 bytes at a time (or through TMA) whatever its shape; each thread writes
// 16 bytes. tf_pack_transposed writes the operand's transpose instead (dst(i, j) = src(j, i)), so a template
// whose instruction reads K-major tiles alone (tf32 and fp8 wgmma) takes operands stored the other way.
// Include after TF_ELEM_BYTES (the operand's element size) is set.
#ifndef TUNEFUZZ_PACK_H
#define TUNEFUZZ_PACK_H

#include "gemm_params.h"

#if TF_ELEM_BYTES == 4
typedef tf_u32 tf_packed_t;
#elif TF_ELEM_BYTES == 2
typedef tf_u16 tf_packed_t;
#else
typedef unsigned char tf_packed_t;
#endif

// Launched with blockDim.x threads along a dst row (one 16-byte vector each) and blockDim.y rows per CTA, so a
// block of short rows keeps every thread busy; both directions grid-stride.
extern "C" __global__ void tf_pack(const TfPackParams p) {
  constexpr int kChunk = 16 / TF_ELEM_BYTES;  // elements per 16-byte store
  const tf_packed_t* src = static_cast<const tf_packed_t*>(p.src);
  tf_packed_t* dst = static_cast<tf_packed_t*>(p.dst);
  const tf_i64 vectors_per_row = p.dst_cols / kChunk;
  for (tf_i64 row = blockIdx.y * static_cast<tf_i64>(blockDim.y) + threadIdx.y; row < p.dst_rows;
       row += static_cast<tf_i64>(gridDim.y) * blockDim.y) {
    for (tf_i64 v = blockIdx.x * static_cast<tf_i64>(blockDim.x) + threadIdx.x; v < vectors_per_row;
         v += static_cast<tf_i64>(gridDim.x) * blockDim.x) {
      __align__(16) tf_packed_t e[kChunk];
#pragma unroll
      for (int i = 0; i < kChunk; ++i) {
        const tf_i64 col = v * kChunk + i;
        e[i] = (row < p.rows && col < p.cols) ? src[row * p.src_ld + col] : tf_packed_t(0);
      }
      *reinterpret_cast<uint4*>(dst + row * p.dst_cols + v * kChunk) = *reinterpret_cast<const uint4*>(e);
    }
  }
}

// Launched on 32×8 threads per CTA, each CTA moving 32×32 tiles of dst (grid-stride in both directions)
// through shared memory, so both the reads of src rows and the writes of dst rows are coalesced.
extern "C" __global__ void tf_pack_transposed(const TfPackParams p) {
  __shared__ tf_packed_t tile[32][33];  // (src row, src column) of one tile; +1 column against bank conflicts
  const tf_packed_t* src = static_cast<const tf_packed_t*>(p.src);
  tf_packed_t* dst = static_cast<tf_packed_t*>(p.dst);
  for (tf_i64 row0 = blockIdx.y * 32; row0 < p.dst_rows; row0 += static_cast<tf_i64>(gridDim.y) * 32) {
    for (tf_i64 col0 = blockIdx.x * 32; col0 < p.dst_cols; col0 += static_cast<tf_i64>(gridDim.x) * 32) {
      for (int y = threadIdx.y; y < 32; y += blockDim.y) {
        const tf_i64 j = col0 + y, i = row0 + threadIdx.x;  // src(j, i) = dst(i, j)
        tile[y][threadIdx.x] = (j < p.rows && i < p.cols) ? src[j * p.src_ld + i] : tf_packed_t(0);
      }
      __syncthreads();
      for (int y = threadIdx.y; y < 32; y += blockDim.y) {
        const tf_i64 i = row0 + y, j = col0 + threadIdx.x;
        if (i < p.dst_rows && j < p.dst_cols) dst[i * p.dst_cols + j] = tile[threadIdx.x][y];
      }
      __syncthreads();
    }
  }
}

#endif  // TUNEFUZZ_PACK_H
