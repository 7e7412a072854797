// Portability header for kernel templates: the same source compiles under NVRTC, hiprtc, nvcc and a plain
// host C++ compiler (for the parts shared with host code, such as the tile mapping and kernel parameters).
// It provides fixed-width integers without <cstdint> (unavailable under the runtime compilers), the
// TF_HOST_DEVICE qualifier and TF_LAUNCH_BOUNDS.
#ifndef TUNEFUZZ_RTC_H
#define TUNEFUZZ_RTC_H

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
typedef signed char tf_i8;
typedef int tf_i32;
typedef unsigned int tf_u32;
typedef long long tf_i64;
typedef unsigned long long tf_u64;
typedef unsigned short tf_u16;
#else
#include <cstdint>
typedef int8_t tf_i8;
typedef int32_t tf_i32;
typedef uint32_t tf_u32;
typedef int64_t tf_i64;
typedef uint64_t tf_u64;
typedef uint16_t tf_u16;
#endif

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
#define TF_HOST_DEVICE __host__ __device__
#define TF_DEVICE_CODE 1
#else
#define TF_HOST_DEVICE
#define TF_DEVICE_CODE 0
#endif

// __launch_bounds__ with a register cap: at most max_threads per CTA, and registers few enough for min_blocks
// CTAs per multiprocessor (CUDA). HIP reads a second argument as something else (minimum waves per execution
// unit), so there only the thread count is passed.
#if defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define TF_LAUNCH_BOUNDS(max_threads, min_blocks) __launch_bounds__(max_threads)
#else
#define TF_LAUNCH_BOUNDS(max_threads, min_blocks) __launch_bounds__(max_threads, min_blocks)
#endif

// Element type codes a template receives in TF_INPUT / TF_OUTPUT (tunefuzz::template_code on the host).
#define TF_TYPE_FP16 0
#define TF_TYPE_BF16 1
#define TF_TYPE_FP32 2
#define TF_TYPE_TF32 3
#define TF_TYPE_FP8E4M3 4
#define TF_TYPE_FP8E5M2 5

// The bits of a template's LAYOUTS: the storage orders of A and B whose kernels the image exports (tf_gemm_rr,
// _rc, _cr, _cc), as on the host (runtime/templates/gemm_rules.hpp).
#define TF_LAYOUT_RR 1
#define TF_LAYOUT_RC 2
#define TF_LAYOUT_CR 4
#define TF_LAYOUT_CC 8

#endif  // TUNEFUZZ_RTC_H
