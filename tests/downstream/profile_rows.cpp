// Profiles a table's winners beside cuBLAS: each named row of this card's table runs once through the runtime
// and once through cublasGemmEx (fp8 rows: the runtime alone; cuBLASLt is not called here) between
// cudaProfilerStart and cudaProfilerStop, after a warm-up of both, on the time job's kind of inputs (uniform in
// [-1, 1) rounded to each operand's type). Under `ncu --profile-from-start off` exactly those kernels are
// profiled (scripts/device/camp.sh, step profile:...). It needs a GPU and never runs in CI.
// Usage: profile_rows TABLE_FILE PROBLEM...   (no PROBLEM: every row of this card)
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <tunefuzz/runtime.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "rows.hpp"

namespace rt = tunefuzz::runtime;
using downstream::cuda;
using downstream::cuda_type;

namespace {

/// The time job's baseline: cuBLAS with fp32 compute (pedantic for fp32 inputs, TF32 for tf32 ones).
bool cublas_gemm(cublasHandle_t h, const rt::Problem& p, const rt::Operands& o, cudaStream_t stream) {
  if (p.a == rt::Type::fp8e4m3 || p.a == rt::Type::fp8e5m2) return false;
  cublasSetStream(h, stream);
  cublasSetMathMode(h, p.a == rt::Type::fp32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH);
  const auto op = [](rt::Order order) { return order == rt::Order::row ? CUBLAS_OP_N : CUBLAS_OP_T; };
  const cublasComputeType_t compute =
      p.a == rt::Type::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
      : p.a == rt::Type::fp32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
  return cublasGemmEx(h, op(p.b_order), op(p.a_order), static_cast<int>(p.n), static_cast<int>(p.m),
                      static_cast<int>(p.k), &p.alpha, o.b, cuda_type(p.b), static_cast<int>(p.ldb), o.a,
                      cuda_type(p.a), static_cast<int>(p.lda), &p.beta, o.c, cuda_type(p.c),
                      static_cast<int>(p.ldc), compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
}

void fill_uniform(void* device, int64_t count, rt::Type type, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<unsigned char> bytes;
  bytes.reserve(static_cast<size_t>(count) * downstream::bytes_of(type));
  for (int64_t i = 0; i < count; ++i) downstream::store(uniform(rng), type, bytes);
  cuda(cudaMemcpy(device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: profile_rows TABLE_FILE [PROBLEM...]\n");
    return 2;
  }
  try {
    cudaDeviceProp props{};
    cuda(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    const rt::Table table = rt::Table::from_file(argv[1]);
    const std::vector<std::string> names(argv + 2, argv + argc);
    const rt::Handle handle(table);
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    cudaStream_t stream;
    cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
    int profiled = 0;
    for (const rt::TunedRow& row : table.rows) {
      if (row.card != props.name) continue;
      if (!names.empty() && std::find(names.begin(), names.end(), row.problem) == names.end()) continue;
      const rt::Problem p = downstream::problem_of(row);
      rt::Operands o;
      void *a = nullptr, *b = nullptr, *c = nullptr;
      cuda(cudaMalloc(&a, p.m * p.k * downstream::bytes_of(p.a)), "cudaMalloc");
      cuda(cudaMalloc(&b, p.k * p.n * downstream::bytes_of(p.b)), "cudaMalloc");
      cuda(cudaMalloc(&c, p.m * p.n * downstream::bytes_of(p.c)), "cudaMalloc");
      fill_uniform(a, p.m * p.k, p.a, 1);
      fill_uniform(b, p.k * p.n, p.b, 2);
      fill_uniform(c, p.m * p.n, p.c, 3);
      o.a = a, o.b = b, o.c = c;
      bool baseline = false;
      for (int w = 0; w < 3; ++w) {
        handle.gemm(p, o, stream);
        baseline = cublas_gemm(cublas, p, o, stream);
      }
      cuda(cudaStreamSynchronize(stream), "warm-up");
      cuda(cudaProfilerStart(), "cudaProfilerStart");
      handle.gemm(p, o, stream);
      cuda(cudaStreamSynchronize(stream), "profiled runtime call");
      if (baseline) cublas_gemm(cublas, p, o, stream);
      cuda(cudaStreamSynchronize(stream), "profiled cuBLAS call");
      cuda(cudaProfilerStop(), "cudaProfilerStop");
      std::printf("- {problem: %s, kernel: '%s', cublas: %s}\n", row.problem.c_str(),
                  handle.choose(p, o).kernel.c_str(), baseline ? "true" : "false");
      ++profiled;
      cudaFree(a), cudaFree(b), cudaFree(c);
    }
    cublasDestroy(cublas);
    if (profiled == 0) {
      std::fprintf(stderr, "profile_rows: no row of %s for %s matches\n", argv[1], props.name);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profile_rows: %s\n", e.what());
    return 1;
  }
}
