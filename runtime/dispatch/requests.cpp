#include "runtime/dispatch/requests.hpp"

#include <string>

namespace tunefuzz::dispatch {

namespace {

// cublasComputeType_t values (cublas_api.h), so this GPU-free code needs no cuBLAS header.
constexpr int kCompute32F = 68, kCompute32FPedantic = 69, kCompute32FFastTf32 = 77;

runtime::Type type_of_data(cudaDataType_t type, const char* field) {
  switch (type) {
    case CUDA_R_16F: return runtime::Type::fp16;
    case CUDA_R_16BF: return runtime::Type::bf16;
    case CUDA_R_32F: return runtime::Type::fp32;
    case CUDA_R_8F_E4M3: return runtime::Type::fp8e4m3;
    case CUDA_R_8F_E5M2: return runtime::Type::fp8e5m2;
    default:
      throw Error(ErrorKind::unsupported,
                  std::string(field) + " = " + std::to_string(static_cast<int>(type)) +
                      " is not a type the kernels take (CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F, CUDA_R_8F_E4M3, "
                      "CUDA_R_8F_E5M2)",
                  {"", 0, 0, field});
  }
}

/// Whether op(X) is the transpose of X as stored (N: no; T or C: yes).
bool transposed(int operation, const char* field) {
  if (operation == 0) return false;
  if (operation == 1 || operation == 2) return true;
  throw Error(ErrorKind::bad_input,
              std::string(field) + " = " + std::to_string(operation) + " is not CUBLAS_OP_N, _T or _C",
              {"", 0, 0, field});
}

}  // namespace

Precision precision_of(runtime::Type type) {
  switch (type) {
    case runtime::Type::fp16: return Precision::fp16;
    case runtime::Type::bf16: return Precision::bf16;
    case runtime::Type::fp32: return Precision::fp32;
    case runtime::Type::tf32: return Precision::tf32;
    case runtime::Type::fp8e4m3: return Precision::fp8e4m3;
    case runtime::Type::fp8e5m2: return Precision::fp8e5m2;
  }
  throw Error(ErrorKind::bad_input, "unknown element type " + std::to_string(static_cast<int>(type)));
}

runtime::Type type_of(Precision precision) {
  switch (precision) {
    case Precision::fp16: return runtime::Type::fp16;
    case Precision::bf16: return runtime::Type::bf16;
    case Precision::fp32: return runtime::Type::fp32;
    case Precision::tf32: return runtime::Type::tf32;
    case Precision::fp8e4m3: return runtime::Type::fp8e4m3;
    case Precision::fp8e5m2: return runtime::Type::fp8e5m2;
  }
  return runtime::Type::fp32;
}

Request request_of(const runtime::Problem& p, const runtime::Operands& o) {
  Request r;
  r.m = p.m;
  r.n = p.n;
  r.k = p.k;
  r.a_type = precision_of(p.a);
  r.b_type = precision_of(p.b);
  r.c_type = precision_of(p.c);
  r.layout = {p.a_order == runtime::Order::row ? Order::row : Order::col,
              p.b_order == runtime::Order::row ? Order::row : Order::col};
  r.lda = p.lda;
  r.ldb = p.ldb;
  r.ldc = p.ldc;
  r.alpha = p.alpha;
  r.beta = p.beta;
  r.a = reinterpret_cast<uintptr_t>(o.a);
  r.b = reinterpret_cast<uintptr_t>(o.b);
  r.c = reinterpret_cast<uintptr_t>(o.c);
  return r;
}

GemmEx gemm_ex(int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
               cudaDataType_t a_type, int lda, const void* b, cudaDataType_t b_type, int ldb, const void* beta,
               void* c, cudaDataType_t c_type, int ldc, int compute_type) {
  const bool a_t = transposed(transa, "transa"), b_t = transposed(transb, "transb");
  if (!alpha) throw Error(ErrorKind::bad_input, "alpha is null", {"", 0, 0, "alpha"});
  if (!beta) throw Error(ErrorKind::bad_input, "beta is null", {"", 0, 0, "beta"});
  if (compute_type != kCompute32F && compute_type != kCompute32FPedantic && compute_type != kCompute32FFastTf32)
    throw Error(ErrorKind::unsupported,
                "computeType = " + std::to_string(compute_type) +
                    ": the kernels accumulate in fp32 (CUBLAS_COMPUTE_32F, _32F_PEDANTIC or _32F_FAST_TF32)",
                {"", 0, 0, "computeType"});
  GemmEx out;
  runtime::Problem& p = out.problem;
  // Row-major Cᵀ (n × m) = op(B)ᵀ (n × k) · op(A)ᵀ (k × m).
  p.m = n;
  p.n = m;
  p.k = k;
  p.a = type_of_data(b_type, "Btype");
  p.b = type_of_data(a_type, "Atype");
  p.c = type_of_data(c_type, "Ctype");
  const bool tf32 = compute_type == kCompute32FFastTf32;
  if (tf32 && p.a == runtime::Type::fp32) p.a = runtime::Type::tf32;
  if (tf32 && p.b == runtime::Type::fp32) p.b = runtime::Type::tf32;
  p.a_order = b_t ? runtime::Order::col : runtime::Order::row;
  p.b_order = a_t ? runtime::Order::col : runtime::Order::row;
  p.lda = ldb;
  p.ldb = lda;
  p.ldc = ldc;
  p.alpha = *static_cast<const float*>(alpha);
  p.beta = *static_cast<const float*>(beta);
  out.operands = {b, a, c};
  return out;
}

}  // namespace tunefuzz::dispatch
