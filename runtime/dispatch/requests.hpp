// The runtime's public arguments as the dispatch reads them: a Problem and its Operands (C++ API), or the
// arguments of a cublasGemmEx call (C API, column-major), turned into one Request. The column-major GEMM
// C = op(A)·op(B) (m × n, ldc) is, read row-major, Cᵀ = op(B)ᵀ·op(A)ᵀ (n × m): cuBLAS's B becomes our A
// (row-major when it is not transposed, column-major when it is), its A our B, and m and n swap.
#pragma once

#include <library_types.h>

#include "runtime/dispatch/dispatch.hpp"
#include "tunefuzz/runtime.hpp"

namespace tunefuzz::dispatch {

Precision precision_of(runtime::Type type);
runtime::Type type_of(Precision precision);

Request request_of(const runtime::Problem& problem, const runtime::Operands& operands);

/// A cublasGemmEx call as a Problem and Operands. Throws Error{bad_input} for a transpose other than N, T or
/// C (C is T for real types) or a null alpha or beta, Error{unsupported} for a data type or compute type
/// the kernels do not take (CUBLAS_COMPUTE_32F_FAST_TF32 with fp32 A and B reads them as tf32). Sizes and
/// leading dimensions are checked later, by check(), like every request's.
struct GemmEx {
  runtime::Problem problem;
  runtime::Operands operands;
};
GemmEx gemm_ex(int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
               cudaDataType_t a_type, int lda, const void* b, cudaDataType_t b_type, int ldb, const void* beta,
               void* c, cudaDataType_t c_type, int ldc, int compute_type);

}  // namespace tunefuzz::dispatch
