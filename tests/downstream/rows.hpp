// What the GPU programs of this downstream project (gpu_check, profile_rows) share: CUDA error checks, element
// sizes, storing a value as an element type, and a table row's own problem.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <library_types.h>
#include <tunefuzz/runtime.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace downstream {

namespace rt = tunefuzz::runtime;

inline void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

inline size_t bytes_of(rt::Type t) {
  switch (t) {
    case rt::Type::fp16: case rt::Type::bf16: return 2;
    case rt::Type::fp8e4m3: case rt::Type::fp8e5m2: return 1;
    default: return 4;
  }
}

/// `value` stored as `t` (round to nearest even; fp8 saturates; tf32 in fp32 storage, its low 13 mantissa
/// bits zero, as the time job's tf32 inputs are), appended to `out`.
inline void store(double value, rt::Type t, std::vector<unsigned char>& out) {
  unsigned char bytes[4];
  const float f = static_cast<float>(value);
  switch (t) {
    case rt::Type::tf32: {  // finite values: add half a tf32 step (ties to even) and drop the low bits
      uint32_t u;
      std::memcpy(&u, &f, 4);
      if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
      std::memcpy(bytes, &u, 4);
      break;
    }
    case rt::Type::fp16: { const __half h = __float2half_rn(f); std::memcpy(bytes, &h, 2); break; }
    case rt::Type::bf16: { const __nv_bfloat16 h = __float2bfloat16_rn(f); std::memcpy(bytes, &h, 2); break; }
    case rt::Type::fp8e4m3: bytes[0] = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3); break;
    case rt::Type::fp8e5m2: bytes[0] = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2); break;
    default: std::memcpy(bytes, &f, 4);
  }
  out.insert(out.end(), bytes, bytes + bytes_of(t));
}

/// cuBLAS's name of an element type it takes (fp32 storage for tf32).
inline cudaDataType_t cuda_type(rt::Type t) {
  switch (t) {
    case rt::Type::fp16: return CUDA_R_16F;
    case rt::Type::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

/// A table type name as the runtime's type.
inline rt::Type type_of(const std::string& name) {
  return name == "fp16" ? rt::Type::fp16 : name == "fp32" ? rt::Type::fp32 : name == "tf32" ? rt::Type::tf32
         : name == "fp8e4m3" ? rt::Type::fp8e4m3 : name == "fp8e5m2" ? rt::Type::fp8e5m2 : rt::Type::bf16;
}

/// A row's own problem: its sizes, types, storage orders and scalars (beta != 0 takes the epilogue reading C),
/// with packed leading dimensions.
inline rt::Problem problem_of(const rt::TunedRow& row) {
  rt::Problem p;
  p.m = row.m, p.n = row.n, p.k = row.k;
  p.a = p.b = type_of(row.precision);
  p.c = type_of(row.output);
  p.a_order = row.layout[0] == 'C' ? rt::Order::col : rt::Order::row;
  p.b_order = row.layout[1] == 'C' ? rt::Order::col : rt::Order::row;
  p.lda = p.a_order == rt::Order::row ? p.k : p.m;
  p.ldb = p.b_order == rt::Order::row ? p.n : p.k;
  p.ldc = p.n;
  p.alpha = static_cast<float>(row.alpha);
  p.beta = static_cast<float>(row.beta);
  return p;
}

}  // namespace downstream
