// The quick return of a GEMM with K = 0: C = beta·C over C's M×N elements (row-major, ldc), or zeros when
// beta == 0 (C is not read). Every template includes it after defining TF_OUTPUT and exports tf_scale_c; the
// host launches it instead of the GEMM kernel when K is 0 (tunefuzz::quick_return), and nothing at all when M
// or N is 0. A grid-stride loop, one element per step: any grid and block size covers C.
#ifndef TUNEFUZZ_SCALE_C_H
#define TUNEFUZZ_SCALE_C_H

#include "gemm_params.h"
#include "output_types.h"

extern "C" __global__ void tf_scale_c(const TfGemmParams p) {
  const tf_i64 elements = p.m * p.n;
  const tf_i64 stride = static_cast<tf_i64>(gridDim.x) * blockDim.x;
  for (tf_i64 i = static_cast<tf_i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < elements; i += stride) {
    const tf_i64 row = i / p.n, col = i - row * p.n;
    unsigned char* const c = static_cast<unsigned char*>(p.c) + (row * p.ldc + col) * TF_OUT_BYTES;
    tf_store_out(c, p.beta == 0.0f ? 0.0f : p.beta * tf_load_out(c));
  }
}

#endif  // TUNEFUZZ_SCALE_C_H
