// Split-K's second pass in isolation (issue 16: results/reduce-lanes-h200-15f42fe/,
// results/reduce-probe-h200-ad3b621/). Three passes: `single`, one thread per quad of C walking the splits
// in order (tf::reduce_splits launched with one thread per quad, so that it reads one lane back from the
// launch: the pass up to ad3b621, the reference C); `shipped`, tf::reduce_splits launched as
// split_k_reduce_geometry launches it (a group of threads per quad for small outputs, tf_reduce_lanes of
// templates/tile_map.h); and `grouped`, the pass 15f42fe tried (a
// group of `lanes` threads per quad, lane j adding splits j, j + lanes, ... four loads in flight, then a
// butterfly of shuffles), at every group size from 1 to 32 that the split count allows. Each timed launch
// follows what a GEMM leaves: L2 cleaned as the time job cleans it (a memset over twice its size, then
// tuner/device/l2_clean_ptx.hpp's read-back), then a kernel that writes every split's partial, so the
// reduce reads them from L2 as it does after the GEMM. Median of 51 launches (REDUCE_PROBE_REPEATS) in
// microseconds, the GB/s of the partials read, and whether each pass's C equals the single one's (bit for
// bit, or within the bound of another addition order).
//
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -I. -Itemplates scripts/reduce_probe.cu -o reduce_probe -lcuda
//        (where no driver is installed: -L/usr/local/cuda/lib64/stubs before -lcuda)
// Run:   ./reduce_probe [M N SPLITS ...]   (default: the shapes of the records above)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "split_k.h"
#include "tuner/device/l2_clean_ptx.hpp"

#define CHECK(x)                                                                        \
  do {                                                                                  \
    auto e_ = (x); /* cudaError_t or CUresult: 0 is success in both */                  \
    if (static_cast<int>(e_) != 0) {                                                    \
      std::fprintf(stderr, "%s failed: %d (%s:%d)\n", #x, int(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace {

// The shipped pass, storing fp32 C (row-major, ldc = n) so that only the reduction differs between variants.
__global__ void shipped(const TfGemmParams p, float* c) {
  tf::reduce_splits(p, tf_ceil_div(p.n, 4), [&](tf_i64 row, tf_i64 col, float v0, float v1) {
    if (col < p.n) c[row * p.n + col] = v0;
    if (col + 1 < p.n) c[row * p.n + col + 1] = v1;
  });
}

// 15f42fe's grouped pass, with the group size passed in.
__global__ void grouped(const TfGemmParams p, float* c, int lanes) {
  const tf_i64 quads_per_row = tf_ceil_div(p.n, 4), quads = p.m * quads_per_row;
  const tf_i64 threads = static_cast<tf_i64>(gridDim.x) * blockDim.x;
  const unsigned warp_lane = threadIdx.x & 31u;
  const unsigned mask =
      lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (warp_lane & ~static_cast<unsigned>(lanes - 1));
  const tf_i64 lane = warp_lane & static_cast<unsigned>(lanes - 1);
  const tf_i64 split_floats = p.m * p.ldw, groups = threads / lanes;
  for (tf_i64 q = (blockIdx.x * static_cast<tf_i64>(blockDim.x) + threadIdx.x) / lanes; q < quads;
       q += groups) {
    const tf_i64 row = q / quads_per_row, col = (q % quads_per_row) * 4;
    const float* w = p.workspace + row * p.ldw + col;
    const auto part = [&](tf_i64 s) { return *reinterpret_cast<const float4*>(w + s * split_floats); };
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    const auto add = [&](const float4 v) {
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    };
    tf_i64 s = lane;
    for (; s + 3 * lanes < p.splits; s += 4 * lanes) {
      const float4 v0 = part(s), v1 = part(s + lanes), v2 = part(s + 2 * lanes), v3 = part(s + 3 * lanes);
      add(v0);
      add(v1);
      add(v2);
      add(v3);
    }
    for (; s < p.splits; s += lanes) add(part(s));
    for (int d = 1; d < lanes; d *= 2) {
      sum.x += __shfl_xor_sync(mask, sum.x, d, lanes);
      sum.y += __shfl_xor_sync(mask, sum.y, d, lanes);
      sum.z += __shfl_xor_sync(mask, sum.z, d, lanes);
      sum.w += __shfl_xor_sync(mask, sum.w, d, lanes);
    }
    if (lane == 0) {
      const float v[4] = {sum.x, sum.y, sum.z, sum.w};
      for (int i = 0; i < 4 && col + i < p.n; ++i) c[row * p.n + col + i] = v[i];
    }
  }
}

// Every split's partial, as a GEMM's units would store them (values that do not sum to round numbers).
__global__ void write_partials(float* w, size_t floats) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < floats;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    w[i] = static_cast<float>((i * 2654435761u) % 1000003u) * 1e-6f - 0.5f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long long> shapes = {128, 128, 128, 64, 64,  128, 128, 128,  64, 256, 256,  16,   256, 256,
                                   64,  512, 512, 8,  512, 512, 16,  4096, 40, 2,   4096, 4096, 4};
  if (argc > 1) {
    shapes.clear();
    for (int i = 1; i < argc; ++i) shapes.push_back(std::atoll(argv[i]));
  }
  if (shapes.size() % 3 != 0) {
    std::fprintf(stderr, "usage: reduce_probe [M N SPLITS ...]\n");
    return 2;
  }
  // REDUCE_PROBE_REPEATS=1 launches each variant once (under ncu).
  const int repeats =
      std::getenv("REDUCE_PROBE_REPEATS") ? std::max(1, std::atoi(std::getenv("REDUCE_PROBE_REPEATS"))) : 51;
  cudaDeviceProp props{};
  CHECK(cudaGetDeviceProperties(&props, 0));
  const size_t flush_bytes = 2 * static_cast<size_t>(props.l2CacheSize);
  void* flush = nullptr;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaFree(nullptr));  // the runtime's context, current for the driver calls below
  CUmodule clean_module;
  CUfunction clean;
  CHECK(cuModuleLoadData(&clean_module, tunefuzz::device::kL2CleanPtx));
  CHECK(cuModuleGetFunction(&clean, clean_module, tunefuzz::device::kL2CleanEntry));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::printf("card: %s\n", props.name);
  std::printf("%6s %6s %6s %8s %6s %10s %9s %s\n", "M", "N", "splits", "variant", "lanes", "median_us",
              "GB/s", "C");
  for (size_t s = 0; s < shapes.size(); s += 3) {
    TfGemmParams p{};
    p.m = shapes[s];
    p.n = shapes[s + 1];
    p.splits = shapes[s + 2];
    p.ldw = (p.n + 3) / 4 * 4;
    const size_t floats = static_cast<size_t>(p.splits * p.m * p.ldw);
    float *c_ref = nullptr, *c = nullptr;
    CHECK(cudaMalloc(&p.workspace, floats * sizeof(float)));
    CHECK(cudaMalloc(&c_ref, p.m * p.n * sizeof(float)));
    CHECK(cudaMalloc(&c, p.m * p.n * sizeof(float)));
    const long long quads = p.m * ((p.n + 3) / 4);
    std::vector<float> ref(p.m * p.n), got(p.m * p.n);
    // -1: the single pass (the reference), 0: the shipped one, then the grouped one at each group size.
    for (int lanes = -1; lanes <= 32; lanes = lanes < 1 ? lanes + 1 : lanes * 2) {
      if (lanes > p.splits) break;
      const int width =
          lanes == 0 ? tf_reduce_lanes(p.splits, quads, TF_REDUCE_BUSY_THREADS) : std::max(lanes, 1);
      const long long grid = std::clamp<long long>((quads * width + 255) / 256, 1, 65535);
      std::vector<float> us;
      for (int r = 0; r < repeats; ++r) {
        // The time job's flush (tuner/device/timer.cpp): a memset over twice L2, then read back clean.
        CHECK(cudaMemset(flush, r, flush_bytes));
        CUdeviceptr data = reinterpret_cast<CUdeviceptr>(flush);
        unsigned long long words = flush_bytes / 16;
        void* args[] = {&data, &words};
        CHECK(cuLaunchKernel(clean, tunefuzz::device::kL2CleanBlocksPerSm * props.multiProcessorCount, 1, 1,
                             tunefuzz::device::kL2CleanThreads, 1, 1, 0, nullptr, args, nullptr));
        write_partials<<<props.multiProcessorCount * 8, 256>>>(p.workspace, floats);
        CHECK(cudaEventRecord(start));
        if (lanes < 0)  // one thread per quad: with 256 quads or more the kernel reads one lane back from it
          shipped<<<grid, TF_REDUCE_THREADS>>>(p, c_ref);
        else if (lanes == 0)
          shipped<<<grid, TF_REDUCE_THREADS>>>(p, c);
        else
          grouped<<<grid, 256>>>(p, c, lanes);
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaGetLastError());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        us.push_back(ms * 1e3f);
      }
      const size_t mid = us.size() / 2;
      std::nth_element(us.begin(), us.begin() + mid, us.end());
      const char* verdict = "reference";
      if (lanes < 0) {
        CHECK(cudaMemcpy(ref.data(), c_ref, ref.size() * sizeof(float), cudaMemcpyDeviceToHost));
      } else {
        CHECK(cudaMemcpy(got.data(), c, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
        // Another order of adding `splits` partials of magnitude at most 0.5 moves a sum by at most
        // splits^2 / 2 units of fp32 rounding (2^-24 each).
        const float bound = 0x1p-24f * p.splits * p.splits * 0.5f;
        bool exact = true, close = true;
        for (size_t i = 0; i < ref.size(); ++i) {
          exact = exact && got[i] == ref[i];
          close = close && std::fabs(got[i] - ref[i]) <= bound;
        }
        verdict = exact ? "exact" : close ? "close" : "WRONG";
      }
      std::printf("%6lld %6lld %6lld %8s %6d %10.2f %9.1f %s\n", static_cast<long long>(p.m),
                  static_cast<long long>(p.n), static_cast<long long>(p.splits),
                  lanes < 0    ? "single"
                  : lanes == 0 ? "shipped"
                               : "grouped",
                  width, us[mid], floats * 4.0 / (us[mid] * 1e3), verdict);
    }
    CHECK(cudaFree(p.workspace));
    CHECK(cudaFree(c_ref));
    CHECK(cudaFree(c));
  }
  return 0;
}
