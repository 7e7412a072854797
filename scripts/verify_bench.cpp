// The time stage's output check (fuzz::ProjectedCheck, as TimeBench::verify makes and runs it) on one
// correct M×8192 output per output type, bf16 and fp8 e4m3, with fp8 e4m3 operands: values uniform in
// [-1, 1) (the first check) and integers in [-2, 2] (the exact check). A·B is computed here in float from
// operands exact in it, then stored in the output type (fp8 saturating at ±448). Prints the seconds of the
// check's set-up (projections of A and B) and of two checks with different sample seeds. Not part of the
// build:
//   g++ -O2 -std=c++20 -I. -Iruntime/include -I/usr/include/eigen3 scripts/verify_bench.cpp
//       build/fuzz/libtunefuzz_fuzz.a build/tuner/libtunefuzz_config.a build/tuner/libtunefuzz_common.a
//       -lrapidcheck -lyaml-cpp -lcrypto -lpthread -o verify_bench
// Usage: verify_bench [K [M]]   (default 8192 and 1024: an M×8192 output over a B of K×8192 bytes; the
// check's scan grows with M, the recomputation of saturated fp8 elements with K, as B leaves the caches)
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"
using namespace tunefuzz;

int main(int argc, char** argv) {
  const int64_t k = argc > 1 ? std::atoll(argv[1]) : 8192, m = argc > 2 ? std::atoll(argv[2]) : 1024,
                n = 8192;
  for (Precision outp : {Precision::bf16, Precision::fp8e4m3}) {
    for (int ints = 0; ints < 2; ++ints) {
      fuzz::HostMatrix a(Precision::fp8e4m3, m, k, k), b(Precision::fp8e4m3, k, n, n), c(outp, m, n, n),
          out(outp, m, n, n);
      if (ints) {
        fuzz::fill_integers(a, 1, 2, -2, 2);
        fuzz::fill_integers(b, 2, 2, -2, 2);
      } else {
        fuzz::fill_uniform(a, 1, 2);
        fuzz::fill_uniform(b, 2, 2);
      }
      Eigen::MatrixXf ea(m, k), eb(k, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) ea(i, p) = a.get(i, p);
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) eb(p, j) = b.get(p, j);
      Eigen::MatrixXf ec = ea * eb;
      const double largest = outp == Precision::fp8e4m3 ? 448.0 : 1e30;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          out.set(i, j, std::max(-largest, std::min(largest, (double)ec(i, j))));
      fuzz::ArithmeticModel model;
      model.output = outp;
      model.k = k;
      model.group = 128;
      model.group_unit_roundoff = 0x1p-14;
      auto t0 = std::chrono::steady_clock::now();
      fuzz::ProjectedCheck check(fuzz::GemmOperands{&a, &b, &c, 1.0, 0.0}, 2, 17);
      auto t1 = std::chrono::steady_clock::now();
      fuzz::Verdict v = check.check(out, model, 512, 128, 128, 17, ints == 1);
      auto t2 = std::chrono::steady_clock::now();
      fuzz::Verdict v2 = check.check(out, model, 512, 128, 128, 18, ints == 1);
      auto t3 = std::chrono::steady_clock::now();
      std::printf("%s ints=%d: construct %.2f s, check %.2f s, again %.2f s, pass %d %s\n", to_string(outp),
                  ints, std::chrono::duration<double>(t1 - t0).count(),
                  std::chrono::duration<double>(t2 - t1).count(),
                  std::chrono::duration<double>(t3 - t2).count(), (int)v.pass,
                  v.pass ? "" : v.summary().substr(0, 120).c_str());
    }
  }
}
