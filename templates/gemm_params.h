// Kernel arguments of the GEMM templates, one struct passed by value, shared by the kernels and the host
// launcher so both sides agree on its layout. Leading dimensions are in elements; C (m×n, ldc) is row-major:
// C = alpha · A (m×k, lda) · B (k×n, ldb) + beta · C. With beta == 0, C is written, never read.
#ifndef TUNEFUZZ_GEMM_PARAMS_H
#define TUNEFUZZ_GEMM_PARAMS_H

#include "tunefuzz_rtc.h"

struct TfGemmParams {
  const void* a;
  const void* b;
  void* c;
  tf_i64 m, n, k;
  tf_i64 lda, ldb, ldc;
  float alpha, beta;
  // Split-K: with splits > 1 each split writes its fp32 partial tile to workspace (splits × m × ldw, split
  // major) and tf_reduce sums them in a fixed order and applies alpha and beta. With splits == 1, unused.
  float* workspace;
  tf_i64 ldw;
  tf_i64 splits;
};

// Arguments of the padding copy that stages a misaligned operand into an aligned scratch buffer:
// dst (dst_rows × dst_cols, ld dst_cols) = src (rows × cols, ld src_ld), zero outside src.
struct TfPackParams {
  const void* src;
  void* dst;
  tf_i64 rows, cols, src_ld;
  tf_i64 dst_rows, dst_cols;
};

#endif  // TUNEFUZZ_GEMM_PARAMS_H
