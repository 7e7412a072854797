// The fuzz case record: a few numbers from which a whole GEMM test case (shape, strides, scalars, matrix
// contents) is materialised deterministically. Generators produce and shrink records, never matrices, so
// shrinking a failure costs nothing in memory and a record replays the same case anywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tuner/common/precision.hpp"

namespace tunefuzz::fuzz {

/// How matrix elements are drawn.
enum class Distribution {
  small_int,    ///< integers in [-2, 2]: every partial sum is exact, so the result must match bit for bit
  ones,         ///< all ones: every output of alpha·A·B equals alpha·K
  sequential,   ///< A(i, p) = i mod 7 - 3, B(p, j) = j mod 5 - 2: row and column mix-ups show up
  normal,       ///< standard normal, rounded to the input type: checked against a derived error bound
  alternating,  ///< ±(1..3) with the sign flipping along K: heavy cancellation, exact
  large,     ///< integers in [-64, 64]: partial sums overflow an fp16 accumulator at K ≥ 16 (bounded check)
  denormal,  ///< normal values, half of them scaled into the input type's subnormal range (bounded check)
  sparse_nonfinite,  ///< small integers with about 1 in 500 elements NaN, +Inf or -Inf: positions must match
  identity,  ///< A is the (rectangular) identity, B and C small integers: C's rows are B's, so index bugs
             ///< show
};

const char* to_string(Distribution distribution);
bool parse_distribution(const std::string& text, Distribution& out);

/// True when the distribution draws integers whose products are at most kLargestExactProduct in magnitude,
/// so every partial sum is exact in an accumulator holding 9·K (fp32: K < 2^20) and the exact oracle
/// applies (fuzz::exact_applies).
bool is_exact(Distribution distribution);
inline constexpr double kLargestExactProduct = 9;  ///< alternating: ±3 · ±3; the other exact ones stay below

/// One GEMM test case. Leading dimensions are the minimum (the stored row length: K for row-major A, M for
/// column-major A, N or K for B, N for C) plus the padding.
struct CaseRecord {
  int64_t m = 1, n = 1, k = 1;
  Layout layout;                                  ///< storage orders of A and B
  int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;  ///< extra elements per row beyond the minimum
  /// Elements between an aligned allocation and the operand's first element: misaligned base pointers.
  int64_t a_offset = 0, b_offset = 0, c_offset = 0;
  double alpha = 1.0, beta = 0.0;
  /// Launch overrides (0 = the candidate's own): K splits, and the CTA count of a persistent grid.
  int64_t splits = 0, grid = 0;
  Distribution distribution = Distribution::small_int;
  uint64_t seed = 0;  ///< seeds the element values

  int64_t lda() const { return (layout.a == Order::row ? k : m) + lda_pad; }
  int64_t ldb() const { return (layout.b == Order::row ? n : k) + ldb_pad; }
  int64_t ldc() const { return n + ldc_pad; }

  friend bool operator==(const CaseRecord&, const CaseRecord&) = default;
};

/// One line, e.g. `m=17 n=8 k=4099 lda_pad=0 ldb_pad=8 ldc_pad=0 alpha=1 beta=0 dist=small_int seed=42`, with
/// ` a_offset=N` (and b, c, then splits and grid) appended only when non-zero, and ` layout=CR` only when not
/// RR.
std::string to_string(const CaseRecord& record);

/// The inverse of to_string, for a record written after a word (`case m=17 n=8 ...` in a worker's progress
/// file); nullopt when the line holds no readable record.
std::optional<CaseRecord> parse_case_line(std::string_view line);

}  // namespace tunefuzz::fuzz
