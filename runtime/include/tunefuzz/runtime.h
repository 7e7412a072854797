/* tunefuzz's runtime as a C API shaped like cublasGemmEx: the same arguments in the same order, column-major
 * convention, so code written for cuBLAS switches with one line (cublasGemmEx -> tunefuzzGemmEx, with a
 * tunefuzzHandle_t for the cublasHandle_t). Transposes take CUBLAS_OP_N / CUBLAS_OP_T (or TUNEFUZZ_OP_N /
 * TUNEFUZZ_OP_T, the same values), types are cudaDataType_t, alpha and beta point to host floats. A handle
 * is thread-safe; unlike cuBLAS's, its stream is an argument of each call (tunefuzzGemmExOnStream), and
 * tunefuzzGemmEx uses the one tunefuzzSetStream set. C89-compatible; the C++ API is <tunefuzz/runtime.hpp>. */
#ifndef TUNEFUZZ_RUNTIME_H
#define TUNEFUZZ_RUNTIME_H

#include <library_types.h> /* cudaDataType_t, from the CUDA toolkit */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tunefuzzContext* tunefuzzHandle_t;
typedef struct CUstream_st* tunefuzzStream_t; /* a CUstream or cudaStream_t */

typedef enum {
  TUNEFUZZ_STATUS_SUCCESS = 0,
  TUNEFUZZ_STATUS_NOT_INITIALIZED = 1, /* a null handle */
  TUNEFUZZ_STATUS_INVALID_VALUE = 2,   /* a bad argument: nothing was launched */
  TUNEFUZZ_STATUS_NOT_SUPPORTED = 3,   /* no kernel serves the problem, or a type pair no kernel computes */
  TUNEFUZZ_STATUS_NO_DEVICE = 4,       /* no usable GPU */
  TUNEFUZZ_STATUS_EXECUTION_FAILED = 5 /* a compile, load or launch failed */
} tunefuzzStatus_t;

/* The values of cublasOperation_t's CUBLAS_OP_N and CUBLAS_OP_T. */
enum { TUNEFUZZ_OP_N = 0, TUNEFUZZ_OP_T = 1 };

/* A handle for CUDA device `device` over the table in `table_file` (a table written by `tune run`). */
tunefuzzStatus_t tunefuzzCreate(tunefuzzHandle_t* handle, const char* table_file, int device);
tunefuzzStatus_t tunefuzzDestroy(tunefuzzHandle_t handle);
tunefuzzStatus_t tunefuzzSetStream(tunefuzzHandle_t handle, tunefuzzStream_t stream);

/* C = alpha op(A) op(B) + beta C, column-major, as cublasGemmEx. computeType is a cublasComputeType_t:
 * CUBLAS_COMPUTE_32F (68) or CUBLAS_COMPUTE_32F_PEDANTIC (69), or CUBLAS_COMPUTE_32F_FAST_TF32 (77) with fp32
 * A and B, which reads them as tf32. algo is accepted and ignored: the table chooses the kernel. */
tunefuzzStatus_t tunefuzzGemmEx(tunefuzzHandle_t handle, int transa, int transb, int m, int n, int k,
                                const void* alpha, const void* A, cudaDataType_t Atype, int lda, const void* B,
                                cudaDataType_t Btype, int ldb, const void* beta, void* C, cudaDataType_t Ctype,
                                int ldc, int computeType, int algo);
/* The same on `stream`, for handles shared by threads on their own streams. */
tunefuzzStatus_t tunefuzzGemmExOnStream(tunefuzzHandle_t handle, tunefuzzStream_t stream, int transa,
                                        int transb, int m, int n, int k, const void* alpha, const void* A,
                                        cudaDataType_t Atype, int lda, const void* B, cudaDataType_t Btype,
                                        int ldb, const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                                        int computeType, int algo);

/* Why the last call on this thread failed (empty after a success); valid until the thread's next call. */
const char* tunefuzzGetLastErrorMessage(void);
const char* tunefuzzGetStatusString(tunefuzzStatus_t status);

#ifdef __cplusplus
}
#endif

#endif /* TUNEFUZZ_RUNTIME_H */
