// The element type of A and B (TF_INPUT) for templates that compute in fp32 on CUDA cores (gemm_simt): one
// 16-bit element to fp32, exactly, in PTX (no CUDA headers under NVRTC). fp32 inputs need no conversion and
// do not include this header (it is CUDA's alone: hiprtc never reads it).
#ifndef TUNEFUZZ_INPUT_TYPES_H
#define TUNEFUZZ_INPUT_TYPES_H

#include "tunefuzz_rtc.h"

#if TF_INPUT == TF_TYPE_FP16 || TF_INPUT == TF_TYPE_BF16
// The element in the low 16 bits of `bits`.
__device__ __forceinline__ float tf_in_to_float(tf_u32 bits) {
#if TF_INPUT == TF_TYPE_BF16
  return __uint_as_float(bits << 16);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<tf_u16>(bits)));
  return f;
#endif
}
#endif

#endif  // TUNEFUZZ_INPUT_TYPES_H
