// The host side of a time job's checks, without a GPU: A (m×k) and B (k×n) in bf16 filled as the time job
// fills them (uniform in [-1, 1), THREADS threads), the projections of the inputs (fuzz::ProjectedCheck), and
// one check of an m×n output (filled the same way, so the verdict fails: the cost of a check does not depend
// on it). Not part of the build; with a build tree in BUILD (e.g. build-gpu), from the repository root:
//   g++ -O2 -std=c++20 -I. -I/usr/include/eigen3 scripts/check_probe.cpp BUILD/fuzz/libtunefuzz_fuzz.a \
//     BUILD/tuner/libtunefuzz_common.a -lyaml-cpp -lcrypto -lpthread -o check_probe
//   ./check_probe M N K [THREADS]
// Prints seconds for the fill, the projections, the output's allocation and the check.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"
using namespace tunefuzz;
using Clock = std::chrono::steady_clock;
static double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
int main(int argc, char** argv) {
  int64_t m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
  unsigned threads = argc > 4 ? atoi(argv[4]) : 2;
  fuzz::set_host_threads(threads);
  auto t0 = Clock::now();
  fuzz::HostMatrix a(Precision::bf16, m, k, k), b(Precision::bf16, k, n, n), c(Precision::bf16, m, n, n);
  fuzz::fill_uniform(a, 1, threads);
  fuzz::fill_uniform(b, 2, threads);
  double fill = since(t0);
  t0 = Clock::now();
  fuzz::ProjectedCheck pc(fuzz::GemmOperands{&a, &b, &c, 1.0, 0.0}, 2, 17);
  double proj = since(t0);
  t0 = Clock::now();
  fuzz::HostMatrix out(Precision::bf16, m, n, n);
  double alloc = since(t0);
  fuzz::fill_uniform(out, 5, threads);
  t0 = Clock::now();
  fuzz::ArithmeticModel model{};
  auto v = pc.check(out, model, 512, 128, 256, 17);
  double chk = since(t0);
  std::printf("%lldx%lldx%lld fill %.3f s, projection %.3f s, check %.3f s alloc %.3f (pass %d)\n",
              (long long)m, (long long)n, (long long)k, fill, proj, chk, alloc, (int)v.pass);
}
