// The C entry (tunefuzz/runtime.h): a handle over the C++ one, each call's arguments turned from cuBLAS's
// column-major convention into a Problem (runtime/dispatch/requests.hpp), every error caught at the boundary,
// turned into a status and kept, with its message, for this thread's tunefuzzGetLastErrorMessage.
#include "tunefuzz/runtime.h"

#include <atomic>
#include <string>

#include "runtime/dispatch/requests.hpp"
#include "tunefuzz/runtime.hpp"

struct tunefuzzContext {
  tunefuzz::runtime::Handle handle;
  std::atomic<tunefuzzStream_t> stream{nullptr};
};

namespace {

thread_local std::string last_error;

tunefuzzStatus_t status_of(tunefuzz::ErrorKind kind) {
  switch (kind) {
    case tunefuzz::ErrorKind::bad_input: return TUNEFUZZ_STATUS_INVALID_VALUE;
    case tunefuzz::ErrorKind::unsupported: return TUNEFUZZ_STATUS_NOT_SUPPORTED;
    case tunefuzz::ErrorKind::no_device: return TUNEFUZZ_STATUS_NO_DEVICE;
    default: return TUNEFUZZ_STATUS_EXECUTION_FAILED;
  }
}

/// Runs `body`, turning what it throws into a status and this thread's last message.
template <class Body>
tunefuzzStatus_t guarded(Body body) {
  try {
    last_error.clear();
    body();
    return TUNEFUZZ_STATUS_SUCCESS;
  } catch (const tunefuzz::Error& e) {
    last_error = e.what();
    return status_of(e.kind());
  } catch (const std::exception& e) {
    last_error = e.what();
    return TUNEFUZZ_STATUS_EXECUTION_FAILED;
  }
}

tunefuzzStatus_t no_handle() {
  last_error = "the handle is null (tunefuzzCreate makes one)";
  return TUNEFUZZ_STATUS_NOT_INITIALIZED;
}

}  // namespace

extern "C" {

tunefuzzStatus_t tunefuzzCreate(tunefuzzHandle_t* handle, const char* table_file, int device) {
  return guarded([&] {
    if (!handle) throw tunefuzz::Error(tunefuzz::ErrorKind::bad_input, "handle is null");
    if (!table_file) throw tunefuzz::Error(tunefuzz::ErrorKind::bad_input, "table_file is null");
    tunefuzz::runtime::Options options;
    options.device = device;
    *handle = new tunefuzzContext{
        tunefuzz::runtime::Handle(tunefuzz::runtime::Table::from_file(table_file), options), {}};
  });
}

tunefuzzStatus_t tunefuzzDestroy(tunefuzzHandle_t handle) {
  if (!handle) return no_handle();
  return guarded([&] { delete handle; });
}

tunefuzzStatus_t tunefuzzSetStream(tunefuzzHandle_t handle, tunefuzzStream_t stream) {
  if (!handle) return no_handle();
  handle->stream.store(stream);
  return TUNEFUZZ_STATUS_SUCCESS;
}

tunefuzzStatus_t tunefuzzGemmExOnStream(tunefuzzHandle_t handle, tunefuzzStream_t stream, int transa,
                                        int transb, int m, int n, int k, const void* alpha, const void* A,
                                        cudaDataType_t Atype, int lda, const void* B, cudaDataType_t Btype,
                                        int ldb, const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                                        int computeType, int /*algo: the table chooses*/) {
  if (!handle) return no_handle();
  return guarded([&] {
    const auto call = tunefuzz::dispatch::gemm_ex(transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                                                  beta, C, Ctype, ldc, computeType);
    handle->handle.gemm(call.problem, call.operands, stream);
  });
}

tunefuzzStatus_t tunefuzzGemmEx(tunefuzzHandle_t handle, int transa, int transb, int m, int n, int k,
                                const void* alpha, const void* A, cudaDataType_t Atype, int lda, const void* B,
                                cudaDataType_t Btype, int ldb, const void* beta, void* C, cudaDataType_t Ctype,
                                int ldc, int computeType, int algo) {
  if (!handle) return no_handle();
  return tunefuzzGemmExOnStream(handle, handle->stream.load(), transa, transb, m, n, k, alpha, A, Atype, lda, B,
                                Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

const char* tunefuzzGetLastErrorMessage(void) {
  return last_error.c_str();
}

const char* tunefuzzGetStatusString(tunefuzzStatus_t status) {
  switch (status) {
    case TUNEFUZZ_STATUS_SUCCESS: return "TUNEFUZZ_STATUS_SUCCESS";
    case TUNEFUZZ_STATUS_NOT_INITIALIZED: return "TUNEFUZZ_STATUS_NOT_INITIALIZED";
    case TUNEFUZZ_STATUS_INVALID_VALUE: return "TUNEFUZZ_STATUS_INVALID_VALUE";
    case TUNEFUZZ_STATUS_NOT_SUPPORTED: return "TUNEFUZZ_STATUS_NOT_SUPPORTED";
    case TUNEFUZZ_STATUS_NO_DEVICE: return "TUNEFUZZ_STATUS_NO_DEVICE";
    case TUNEFUZZ_STATUS_EXECUTION_FAILED: return "TUNEFUZZ_STATUS_EXECUTION_FAILED";
  }
  return "unknown tunefuzzStatus_t";
}

}  // extern "C"
