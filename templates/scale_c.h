// The quick return of a GEMM with K = 0: C = beta·C over C's M×N elements (row-major, ldc), or zeros when
// beta == 0 (C is not read). Every template includes it last and exports tf_scale_c; the host launches it
// instead of the GEMM kernel when K is 0 (tunefuzz::quick_return), and nothing at all when M or N is 0. A
// grid-stride loop, one element per step: any grid and block size covers C. C's conversions come from
// output_types.h where the template includes it; without it C is fp32 and read as it is (gemm_simt, which
// stays free of inline PTX for hiprtc).
#ifndef TUNEFUZZ_SCALE_C_H
#define TUNEFUZZ_SCALE_C_H

#include "gemm_params.h"

#ifdef TUNEFUZZ_OUTPUT_TYPES_H
#define TF_SCALE_C_BYTES TF_OUT_BYTES
#define TF_SCALE_C_LOAD(p) tf_load_out(p)
#define TF_SCALE_C_STORE(p, v) tf_store_out(p, v)
#else
static_assert(TF_OUTPUT == TF_TYPE_FP32, "scale_c.h: include output_types.h for a C other than fp32");
#define TF_SCALE_C_BYTES 4
#define TF_SCALE_C_LOAD(p) (*reinterpret_cast<const float*>(p))
#define TF_SCALE_C_STORE(p, v) (*reinterpret_cast<float*>(p) = (v))
#endif

extern "C" __global__ void tf_scale_c(const TfGemmParams p) {
  const tf_i64 elements = p.m * p.n;
  const tf_i64 stride = static_cast<tf_i64>(gridDim.x) * blockDim.x;
  for (tf_i64 i = static_cast<tf_i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < elements; i += stride) {
    const tf_i64 row = i / p.n, col = i - row * p.n;
    unsigned char* const c = static_cast<unsigned char*>(p.c) + (row * p.ldc + col) * TF_SCALE_C_BYTES;
    TF_SCALE_C_STORE(c, p.beta == 0.0f ? 0.0f : p.beta * TF_SCALE_C_LOAD(c));
  }
}

#endif  // TUNEFUZZ_SCALE_C_H
