// What the fuzz worker's host side spends per case, without a GPU: the fuzz generator's cases for one
// gemm_wgmma-like case space (128×256×64 tiles, 4 stages, bf16 in and out, every layout, a persistent grid),
// materialised (the worker's `make`), then judged as the worker does for cases up to 2^28 multiply-adds
// (`judge`) in two ways: with the bounded reference always (with its magnitude), and with the reference the
// worker makes now (fuzz::ReferenceUse: no magnitude for a case judged exactly). The output judged is the
// reference itself, rounded to bf16, so the exact cases pass and the rest are bounded; the two references'
// values must be equal and the verdicts the same. Not part of the build; with a
// build tree in BUILD (e.g. build-gpu), from the repository root:
//   g++ -O2 -std=c++20 -I. -I/usr/include/eigen3 scripts/judge_probe.cpp BUILD/fuzz/libtunefuzz_fuzz.a \
//     BUILD/tuner/libtunefuzz_common.a /usr/lib/x86_64-linux-gnu/librapidcheck.a \
//     -lyaml-cpp -lcrypto -lpthread -o judge_probe
//   ./judge_probe [CASES] [SEED] [THREADS]
// Prints milliseconds per case for make and for both ways of judging, the share of exact cases, and a digest
// of every operand byte (the same cases must give the same bytes from one build to the next).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "fuzz/generators.hpp"
#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"

using namespace tunefuzz;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 300;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 7;
  if (argc > 3) fuzz::set_host_threads(static_cast<unsigned>(std::atoi(argv[3])));
  fuzz::CaseSpace space;
  space.k_unit = space.n_unit = 8;
  space.tile_m = 128;
  space.tile_n = 256;
  space.tile_k = 64;
  space.stages = 4;
  space.varies_grid = true;
  space.layouts = {Layout{}, Layout{Order::row, Order::col}, Layout{Order::col, Order::row},
                   Layout{Order::col, Order::col}};
  const rc::Gen<fuzz::CaseRecord> gen = fuzz::gen_case(space);
  rc::Random random(seed);
  double make_s = 0, with_s = 0, without_s = 0, check_s = 0;
  int judged = 0, exact_cases = 0, failed = 0;
  // FNV-1a over every materialised byte: the same cases must give the same bytes.
  uint64_t digest = 1469598103934665603ull;
  const auto fold = [&digest](const fuzz::HostMatrix& m) {
    for (size_t i = 0; i < m.size_bytes(); ++i)
      digest = (digest ^ static_cast<uint8_t>(m.bytes()[i])) * 1099511628211ull;
  };
  for (int i = 0; i < cases; ++i) {
    const fuzz::CaseRecord record = gen(random.split(), 100).value();
    if (record.m * record.n * record.k > (int64_t{1} << 28) || record.m == 0 || record.n == 0) continue;
    auto t0 = Clock::now();
    const fuzz::CaseOperands ops = fuzz::materialise(record, Precision::bf16, Precision::bf16);
    make_s += std::chrono::duration<double>(Clock::now() - t0).count();
    for (const fuzz::HostMatrix* m : {&ops.a, &ops.b, &ops.c}) fold(*m);
    const fuzz::GemmOperands operands{&ops.a, &ops.b, &ops.c, record.alpha, record.beta};
    const fuzz::ArithmeticModel model{Precision::fp32, Precision::bf16, record.k};
    const bool exact = fuzz::exact_applies(record.distribution, model);
    fuzz::HostMatrix out(Precision::bf16, record.m, record.n, record.ldc());
    t0 = Clock::now();
    const fuzz::Reference full = fuzz::compute_reference(operands);
    with_s += std::chrono::duration<double>(Clock::now() - t0).count();
    for (int64_t r = 0; r < record.m; ++r)
      for (int64_t c = 0; c < record.n; ++c) out.set(r, c, full.value(r, c));
    t0 = Clock::now();
    const bool pass_with = fuzz::check_full(out, full, model, exact, record.beta == 0.0).pass;
    check_s += std::chrono::duration<double>(Clock::now() - t0).count();
    with_s += std::chrono::duration<double>(Clock::now() - t0).count();
    t0 = Clock::now();
    const fuzz::Reference lean =
        fuzz::compute_reference(operands, exact ? fuzz::ReferenceUse::exact : fuzz::ReferenceUse::bounded);
    const bool pass_without = fuzz::check_full(out, lean, model, exact, record.beta == 0.0).pass;
    without_s += std::chrono::duration<double>(Clock::now() - t0).count();
    // Its values are the bounded reference's, element for element (NaN where it has NaN: sparse_nonfinite).
    for (int64_t r = 0; r < record.m; ++r)
      for (int64_t c = 0; c < record.n; ++c) {
        const double x = lean.value(r, c), y = full.value(r, c);
        if (!(x == y || (std::isnan(x) && std::isnan(y)))) {
          ++failed;
          r = record.m;
          break;
        }
      }
    failed += pass_with != pass_without;
    ++judged;
    exact_cases += exact;
  }
  std::printf(
      "%d cases judged in full (of %d drawn), %d exact; make %.2f ms/case; judge with the magnitude "
      "%.2f ms/case (of which the check %.2f), without it for exact cases %.2f ms/case (%.2fx); "
      "references or verdicts that differ: %d; operand bytes digest %016llx\n",
      judged, cases, exact_cases, 1e3 * make_s / judged, 1e3 * with_s / judged, 1e3 * check_s / judged,
      1e3 * without_s / judged, with_s / without_s, failed, static_cast<unsigned long long>(digest));
  return failed == 0 ? 0 : 1;
}
