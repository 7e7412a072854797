// What the time job's L2 flush costs the launch it precedes (issue 16: decode rows at 0.8 of a copy).
//
// A memset over twice L2's size (the timer's flush up to timer version 1) leaves L2 full of dirty lines; the
// timed launch then writes them back while it reads its own operands. This probe times the same launches
// after four flushes: `memset`, `clean` (the memset, then a kernel of this file that reads the flush buffer,
// so L2 holds clean lines of it), `ptx` (the memset, then the timer's PTX kernel,
// tuner/device/l2_clean_ptx.hpp: the flush of timer version 2) and `none`; and the flushes themselves.
// Launches: a read-only stream over B (16-byte loads, the floor of a decode GEMM), the time job's copy floor
// (cuMemcpyDtoD of half the bytes), and cuBLAS bf16 GEMMs at M = 1 and 16 against the same B. Median of 41
// launches each, in microseconds, and GB/s on the bytes each must move.
//
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -I. scripts/flush_probe.cu -o flush_probe -lcublas -lcuda
// Run:   ./flush_probe [K N ...]   (default 8192 8192, 4096 14336, 4096 50257)
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tuner/device/l2_clean_ptx.hpp"

#define CHECK(x)                                                                        \
  do {                                                                                  \
    auto e_ = (x);                                                                      \
    if (e_ != 0) {                                                                      \
      std::fprintf(stderr, "%s failed: %d (%s:%d)\n", #x, int(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

__global__ void read_stream(const uint4* p, size_t n, unsigned* out) {
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) acc ^= p[i].x ^ p[i].y ^ p[i].z ^ p[i].w;
  if (acc == 0x9e3779b9u) *out = acc;  // never true for the zeroed buffers; keeps the loads
}

int main(int argc, char** argv) {
  std::vector<std::pair<long, long>> shapes;  // (K, N) of B
  for (int i = 1; i + 1 < argc; i += 2) shapes.push_back({std::atol(argv[i]), std::atol(argv[i + 1])});
  if (shapes.empty()) shapes = {{8192, 8192}, {4096, 14336}, {4096, 50257}};
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const size_t l2 = prop.l2CacheSize, flush_bytes = 2 * l2;
  std::printf("card %s, %d SMs, L2 %zu MB, flush buffer %zu MB\n", prop.name, prop.multiProcessorCount,
              l2 >> 20, flush_bytes >> 20);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  CHECK(cublasSetStream(h, s));
  void* flush;
  unsigned* sink;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&sink, 4));
  const int blocks = prop.multiProcessorCount * 4, threads = 512;
  auto read = [&](const void* p, size_t bytes) {
    read_stream<<<blocks, threads, 0, s>>>(static_cast<const uint4*>(p), bytes / 16, sink);
  };
  CUmodule module;
  CUfunction ptx_clean;
  CHECK(cuModuleLoadData(&module, tunefuzz::device::kL2CleanPtx));
  CHECK(cuModuleGetFunction(&ptx_clean, module, tunefuzz::device::kL2CleanEntry));
  const std::vector<std::string> modes = {"memset", "clean", "ptx", "none"};
  auto do_flush = [&](const std::string& mode, int i) {
    if (mode == "none") return;
    CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(flush), unsigned(i), flush_bytes / 4, s));
    if (mode == "clean") read(flush, flush_bytes);
    if (mode == "ptx") {
      CUdeviceptr data = reinterpret_cast<CUdeviceptr>(flush);
      unsigned long long words = flush_bytes / 16;
      void* args[] = {&data, &words};
      CHECK(cuLaunchKernel(ptx_clean, tunefuzz::device::kL2CleanBlocksPerSm * prop.multiProcessorCount, 1, 1,
                           tunefuzz::device::kL2CleanThreads, 1, 1, 0, s, args, nullptr));
    }
  };
  auto median_us = [&](const std::string& mode, const std::function<void()>& launch) {
    for (int i = 0; i < 3; ++i) launch();
    const int n = 41;
    std::vector<cudaEvent_t> a(n), b(n);
    for (int i = 0; i < n; ++i) {
      CHECK(cudaEventCreate(&a[i]));
      CHECK(cudaEventCreate(&b[i]));
      do_flush(mode, i);
      CHECK(cudaEventRecord(a[i], s));
      launch();
      CHECK(cudaEventRecord(b[i], s));
    }
    CHECK(cudaStreamSynchronize(s));
    std::vector<float> t(n);
    for (int i = 0; i < n; ++i) {
      CHECK(cudaEventElapsedTime(&t[i], a[i], b[i]));
      cudaEventDestroy(a[i]);
      cudaEventDestroy(b[i]);
    }
    std::sort(t.begin(), t.end());
    return 1000.0 * t[n / 2];
  };
  std::printf("\nthe flushes themselves (the one before each timed one: memset)\n");
  for (const std::string mode : {"memset", "clean", "ptx"}) {
    const double us = median_us("memset", [&] { do_flush(mode, 7); });
    std::printf("%-22s %-7s %10.2f\n", "flush", mode.c_str(), us);
  }
  for (const auto& shape : shapes) {
    const long k = shape.first, n = shape.second;
    const size_t b_bytes = size_t(k) * n * 2;
    void *B, *A, *C, *to;
    CHECK(cudaMalloc(&B, b_bytes));
    CHECK(cudaMalloc(&A, size_t(16) * k * 2));
    CHECK(cudaMalloc(&C, size_t(16) * n * 2));
    CHECK(cudaMemset(B, 0, b_bytes));
    CHECK(cudaMemset(A, 0, size_t(16) * k * 2));
    const size_t half = b_bytes / 2;
    CHECK(cudaMalloc(&to, half));
    std::printf("\nB = %ld x %ld bf16, %.1f MB\n", k, n, b_bytes / 1e6);
    std::printf("%-22s %-7s %10s %10s\n", "launch", "flush", "us", "GB/s");
    auto gemm = [&](int m) {
      const float alpha = 1, beta = 0;
      // Row-major C (m x n) = A (m x k) . B (k x n), as column-major C^T = B^T . A^T.
      CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), m, int(k), &alpha, B, CUDA_R_16BF, int(n), A,
                         CUDA_R_16BF, int(k), &beta, C, CUDA_R_16BF, int(n), CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT));
    };
    struct Launch {
      std::string name;
      double bytes;
      std::function<void()> run;
    };
    const std::vector<Launch> launches = {
        {"read B (16-byte loads)", double(b_bytes), [&] { read(B, b_bytes); }},
        {"copy B/2 (DtoD)", double(b_bytes),
         [&] { CHECK(cuMemcpyDtoDAsync(CUdeviceptr(to), CUdeviceptr(B), half, s)); }},
        {"cuBLAS M=1", double(b_bytes + 2 * k + 2 * n), [&] { gemm(1); }},
        {"cuBLAS M=16", double(b_bytes + 32 * k + 32 * n), [&] { gemm(16); }},
    };
    for (const auto& l : launches)
      for (const auto& mode : modes) {
        const double us = median_us(mode, l.run);
        std::printf("%-22s %-7s %10.2f %10.0f\n", l.name.c_str(), mode.c_str(), us, l.bytes / us / 1e3);
      }
    CHECK(cudaFree(B));
    CHECK(cudaFree(A));
    CHECK(cudaFree(C));
    CHECK(cudaFree(to));
  }
  return 0;
}
