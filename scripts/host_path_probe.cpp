// What the runtime's warm call spends in its own host code, before the driver: the launch geometry each
// launcher evaluates per call (gemm_mma's twice: once for the scratch size, once to launch), the refusal rule
// (evaluated once per distinct problem, when the handle decides) and the point lookups the launchers make.
// No GPU needed. Not part of the build; with a configured build tree in BUILD (e.g. build-gpu):
//   g++ -O2 -std=c++20 -I. -Iruntime/include -I/usr/local/cuda/include scripts/host_path_probe.cpp \
//     -Wl,--start-group $(find BUILD -name '*.a' -not -path '*_deps*' | grep -v test) -Wl,--end-group \
//     -lyaml-cpp -lcrypto -o host_path_probe
// Prints microseconds per evaluation for one gemm_wgmma and one gemm_mma winner of results/h200.yaml.
#include <chrono>
#include <cstdio>

#include "runtime/templates/kernel_template.hpp"

using namespace tunefuzz;

int main() {
  const char* ids[] = {
      "gemm_wgmma/bf16-bf16/BM=128,BN=256,BK=64,STAGES=4,CONSUMERS=2,GROUP_M=8,CLUSTER_M=2,CLUSTER_N=1,"
      "SPLIT_K=1,PERSISTENT=1,PACK=0,A_REGS=0",
      "gemm_mma/bf16-bf16/BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3,VEC=8,GROUP_M=8,SWIZZLE=1,PACK=0,SPLIT_K=1,"
      "PERSISTENT=0"};
  for (const char* id : ids) {
    const Candidate c = parse_candidate_id(id);
    GemmShape s;
    s.m = 192, s.n = 192, s.k = 320, s.lda = 320, s.ldb = 192, s.ldc = 192;
    s.a_alignment = s.b_alignment = s.c_alignment = 256;
    constexpr int kRepeats = 200000;
    int64_t sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRepeats; ++i) {
      s.m = 192 + (i & 1);
      const LaunchGeometry g = c.kernel_template->geometry(c.point, s);
      sink += g.grid_x + g.workspace_bytes;
    }
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRepeats; ++i) sink += c.point["PERSISTENT"] + c.point["SPLIT_K"] + c.point["PACK"];
    const auto t2 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRepeats; ++i) {
      s.m = 192 + (i & 1);
      sink += c.kernel_template->refusal(c.point, s).has_value();
    }
    const auto t3 = std::chrono::steady_clock::now();
    const auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / kRepeats; };
    std::printf("%s\n  geometry %.3f us, three point lookups %.3f us, refusal %.3f us (checksum %lld)\n", id,
                us(t0, t1), us(t1, t2), us(t2, t3), static_cast<long long>(sink));
  }
}
