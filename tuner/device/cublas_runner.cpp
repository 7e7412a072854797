#include <climits>

#include "tuner/device/runner.hpp"

namespace tunefuzz::device {

namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::launch, std::string(what) + ": " + cublasGetStatusName(status) + " (" +
                                       cublasGetStatusString(status) + ")");
}

cudaDataType data_type(Precision p) {
  switch (p) {
    case Precision::fp16:
      return CUDA_R_16F;
    case Precision::bf16:
      return CUDA_R_16BF;
    case Precision::fp32:
      return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

// fp16/bf16 inputs: fp32 accumulation, on tensor cores where cuBLAS likes. fp32 inputs: pedantic fp32, so
// that the baseline is a true fp32 GEMM on CUDA cores, never TF32 or a BF16x9 emulation on tensor cores.
cublasComputeType_t compute_type(Precision input) {
  return input == Precision::fp32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
}

}  // namespace

CublasRunner::CublasRunner(TypePair types, CUstream stream) : types_(types) {
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  check_cublas(cublasSetStream(handle_, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
}

CublasRunner::~CublasRunner() {
  if (handle_) cublasDestroy(handle_);
}

std::string CublasRunner::name() const {
  return "cublas";
}

std::string CublasRunner::version() const {
  int version = 0;
  cublasGetVersion(handle_, &version);
  return "cuBLAS " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

std::optional<std::string> CublasRunner::refusal(const GemmShape& s) const {
  const bool supported = types_.output == Precision::fp32 || types_.output == types_.input;
  if (!supported)
    return std::string("cublasGemmEx has no ") + to_string(types_.input) + " -> " + to_string(types_.output) +
           " GEMM";
  if (s.m > INT_MAX || s.n > INT_MAX || s.k > INT_MAX || s.lda > INT_MAX || s.ldb > INT_MAX ||
      s.ldc > INT_MAX)
    return std::string("sizes beyond 2^31 - 1");
  return std::nullopt;
}

void CublasRunner::run(const DeviceGemm& g, CUdeviceptr, CUstream stream) const {
  check_cublas(cublasSetStream(handle_, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  const float alpha = g.alpha, beta = g.beta;
  const auto& s = g.shape;
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands and M with N.
  const auto order = [](Order o) { return o == Order::row ? CUBLAS_OP_N : CUBLAS_OP_T; };
  check_cublas(
      cublasGemmEx(handle_, order(s.layout.b), order(s.layout.a), static_cast<int>(s.n),
                   static_cast<int>(s.m), static_cast<int>(s.k), &alpha, reinterpret_cast<const void*>(g.b),
                   data_type(types_.input), static_cast<int>(s.ldb), reinterpret_cast<const void*>(g.a),
                   data_type(types_.input), static_cast<int>(s.lda), &beta, reinterpret_cast<void*>(g.c),
                   data_type(types_.output), static_cast<int>(s.ldc), compute_type(types_.input),
                   CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

}  // namespace tunefuzz::device
