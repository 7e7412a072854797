// The element type of C (TF_OUTPUT) as the GEMM epilogues see it: its size, and loads and stores that convert
// from and to fp32 in PTX (no CUDA headers under NVRTC). Stores round to nearest even; fp8 stores saturate
// (cvt...satfinite: a value beyond the largest finite one, infinities included, becomes it; NaN stays NaN).
// Pair stores and loads need an address aligned to two elements.
#ifndef TUNEFUZZ_OUTPUT_TYPES_H
#define TUNEFUZZ_OUTPUT_TYPES_H

#include "tunefuzz_rtc.h"

#if TF_OUTPUT == TF_TYPE_FP32
#define TF_OUT_BYTES 4
#elif TF_OUTPUT == TF_TYPE_FP16 || TF_OUTPUT == TF_TYPE_BF16
#define TF_OUT_BYTES 2
#elif TF_OUTPUT == TF_TYPE_FP8E4M3 || TF_OUTPUT == TF_TYPE_FP8E5M2
#define TF_OUT_BYTES 1
#else
#error "TF_OUTPUT must be fp16, bf16, fp32, fp8e4m3 or fp8e5m2"
#endif

#if TF_OUTPUT == TF_TYPE_FP32

__device__ __forceinline__ float tf_load_out(const void* p) { return *static_cast<const float*>(p); }
__device__ __forceinline__ void tf_store_out(void* p, float v) { *static_cast<float*>(p) = v; }
__device__ __forceinline__ void tf_load_out_pair(const void* p, float& v0, float& v1) {
  const float2 v = *static_cast<const float2*>(p);
  v0 = v.x;
  v1 = v.y;
}
__device__ __forceinline__ void tf_store_out_pair(void* p, float v0, float v1) {
  *static_cast<float2*>(p) = make_float2(v0, v1);
}

#elif TF_OUT_BYTES == 2

__device__ __forceinline__ float tf_out_to_float(tf_u16 bits) {
#if TF_OUTPUT == TF_TYPE_BF16
  return __uint_as_float(static_cast<tf_u32>(bits) << 16);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#endif
}
// v0 in the low half (the lower address), v1 in the high half.
__device__ __forceinline__ tf_u32 tf_pack_out(float v0, float v1) {
  tf_u32 packed;
#if TF_OUTPUT == TF_TYPE_BF16
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(v1), "f"(v0));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(v1), "f"(v0));
#endif
  return packed;
}
__device__ __forceinline__ float tf_load_out(const void* p) { return tf_out_to_float(*static_cast<const tf_u16*>(p)); }
__device__ __forceinline__ void tf_store_out(void* p, float v) {
  *static_cast<tf_u16*>(p) = static_cast<tf_u16>(tf_pack_out(v, 0.f) & 0xffffu);
}
__device__ __forceinline__ void tf_load_out_pair(const void* p, float& v0, float& v1) {
  const tf_u32 packed = *static_cast<const tf_u32*>(p);
  v0 = tf_out_to_float(static_cast<tf_u16>(packed & 0xffffu));
  v1 = tf_out_to_float(static_cast<tf_u16>(packed >> 16));
}
__device__ __forceinline__ void tf_store_out_pair(void* p, float v0, float v1) {
  *static_cast<tf_u32*>(p) = tf_pack_out(v0, v1);
}

#else  // fp8 (sm_89+)

#if TF_OUTPUT == TF_TYPE_FP8E4M3
#define TF_OUT_FP8 "e4m3x2"
#else
#define TF_OUT_FP8 "e5m2x2"
#endif
// Two fp8 codes (the first in the low byte) to fp32, exactly (through f16, which holds every fp8 value).
__device__ __forceinline__ void tf_unpack_out(tf_u16 bits, float& v0, float& v1) {
  tf_u32 halves;
  asm("cvt.rn.f16x2." TF_OUT_FP8 " %0, %1;" : "=r"(halves) : "h"(bits));
  asm("cvt.f32.f16 %0, %1;" : "=f"(v0) : "h"(static_cast<tf_u16>(halves & 0xffffu)));
  asm("cvt.f32.f16 %0, %1;" : "=f"(v1) : "h"(static_cast<tf_u16>(halves >> 16)));
}
// v0 in the low byte (the lower address), v1 in the high byte.
__device__ __forceinline__ tf_u16 tf_pack_out(float v0, float v1) {
  tf_u16 packed;
  asm("cvt.rn.satfinite." TF_OUT_FP8 ".f32 %0, %1, %2;" : "=h"(packed) : "f"(v1), "f"(v0));
  return packed;
}
__device__ __forceinline__ float tf_load_out(const void* p) {
  float v0, v1;
  tf_unpack_out(*static_cast<const unsigned char*>(p), v0, v1);
  return v0;
}
__device__ __forceinline__ void tf_store_out(void* p, float v) {
  *static_cast<unsigned char*>(p) = static_cast<unsigned char>(tf_pack_out(v, 0.f) & 0xffu);
}
__device__ __forceinline__ void tf_load_out_pair(const void* p, float& v0, float& v1) {
  tf_unpack_out(*static_cast<const tf_u16*>(p), v0, v1);
}
__device__ __forceinline__ void tf_store_out_pair(void* p, float v0, float v1) {
  *static_cast<tf_u16*>(p) = tf_pack_out(v0, v1);
}

#endif

// The epilogue of two adjacent elements of a row of C starting at `c`: alpha·v + beta·C, reading C only with
// read_c, the second element only with `second` (it lies inside the row); one pair store where the address
// is aligned to two elements, else element by element.
__device__ __forceinline__ void tf_epilogue_pair(void* c, float alpha, float beta, float v0, float v1, bool second,
                                                 bool read_c) {
  unsigned char* const at = static_cast<unsigned char*>(c);
  if (second && reinterpret_cast<tf_u64>(at) % (2 * TF_OUT_BYTES) == 0) {
    float c0 = 0.f, c1 = 0.f;
    if (read_c) tf_load_out_pair(at, c0, c1);
    tf_store_out_pair(at, alpha * v0 + beta * c0, alpha * v1 + beta * c1);
  } else {
    tf_store_out(at, alpha * v0 + (read_c ? beta * tf_load_out(at) : 0.f));
    if (second) tf_store_out(at + TF_OUT_BYTES, alpha * v1 + (read_c ? beta * tf_load_out(at + TF_OUT_BYTES) : 0.f));
  }
}

#endif  // TUNEFUZZ_OUTPUT_TYPES_H
