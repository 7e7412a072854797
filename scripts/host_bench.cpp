// The host half of a fuzz case, phase by phase: 100 cases drawn by fuzz::gen_case for a bf16 gemm_wgmma-like
// space (all four storage orders, splits and grids varied), each materialised, transposed where column-major,
// its reference computed and a correct output judged (check_full; huge cases skipped). Not part of the build:
//   g++ -O2 -std=c++20 -I. -Iruntime/include -I/usr/include/eigen3 scripts/host_bench.cpp
//   build/fuzz/libtunefuzz_fuzz.a \
//       build/tuner/libtunefuzz_config.a build/tuner/libtunefuzz_common.a -lrapidcheck -lyaml-cpp -lcrypto
//       -lpthread -o host_bench
// Usage: host_bench [CASES]   (prints seconds per phase, summed over the cases)
#include <rapidcheck.h>
#include <chrono>
#include <cstdio>
#include <map>
#include "fuzz/generators.hpp"
#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"
using namespace tunefuzz;
using Clock = std::chrono::steady_clock;
int main(int argc, char** argv) {
  fuzz::CaseSpace s;
  s.k_unit = 8;
  s.n_unit = 8;
  s.tile_m = 128;
  s.tile_n = 256;
  s.tile_k = 64;
  s.stages = 4;
  s.varies_splits = true;
  s.varies_grid = true;
  s.layouts = {Layout{Order::row, Order::row}, Layout{Order::row, Order::col}, Layout{Order::col, Order::row},
               Layout{Order::col, Order::col}};
  const auto gen = fuzz::gen_case(s);
  std::map<std::string, double> t;
  int n = argc > 1 ? atoi(argv[1]) : 100;
  double macs = 0;
  for (int i = 0; i < n; ++i) {
    const fuzz::CaseRecord r = gen(rc::Random(1000 + i), i % 100).value();
    auto t0 = Clock::now();
    const fuzz::CaseOperands ops = fuzz::materialise(r, Precision::bf16, Precision::bf16);
    auto t1 = Clock::now();
    std::optional<fuzz::HostMatrix> at, bt;
    if (r.layout.a == Order::col) at.emplace(fuzz::transposed(ops.a, r.lda()));
    if (r.layout.b == Order::col) bt.emplace(fuzz::transposed(ops.b, r.ldb()));
    auto t2 = Clock::now();
    fuzz::GemmOperands operands{&ops.a, &ops.b, &ops.c, r.alpha, r.beta};
    fuzz::ArithmeticModel model{Precision::fp32, Precision::bf16, r.k};
    const bool exact = fuzz::exact_applies(r.distribution, model);
    fuzz::HostMatrix out(Precision::bf16, r.m, r.n, r.ldc());
    if (r.m * r.n * r.k <= (int64_t{1} << 27)) {
      const fuzz::Reference ref =
          fuzz::compute_reference(operands, exact ? fuzz::ReferenceUse::exact : fuzz::ReferenceUse::bounded);
      auto t3 = Clock::now();
      for (int64_t a = 0; a < r.m; ++a)
        for (int64_t b = 0; b < r.n; ++b) out.set(a, b, ref.value(a, b));
      auto t4 = Clock::now();
      fuzz::check_full(out, ref, model, exact, r.beta == 0.0);
      auto t5 = Clock::now();
      t["reference"] += std::chrono::duration<double>(t3 - t2).count();
      t["check"] += std::chrono::duration<double>(t5 - t4).count();
    } else
      t["huge"] += 1;
    t["materialise"] += std::chrono::duration<double>(t1 - t0).count();
    t["transpose"] += std::chrono::duration<double>(t2 - t1).count();
    macs += double(r.m) * r.n * r.k;
  }
  for (auto& [k, v] : t) std::printf("%s %.3f\n", k.c_str(), v);
  std::printf("macs %.3g\n", macs);
}
