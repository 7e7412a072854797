// The oracle: is a kernel's C = alpha·A·B + beta·C right? Three checks, strongest first:
//  - exact: inputs whose products and partial sums are exact in the fp32 accumulator; the kernel must
//    equal the double reference rounded once to the output type, bit for bit;
//  - bounded: per element |out − ref| ≤ γ·(|alpha|·(|A||B|)ij + |beta|·|Cij|) + u_out·|ref|, with γ from K
//    and the accumulator precision (docs/architecture.md derives it); the worst error/bound ratio is kept;
//  - Freivalds: for shapes too large for a full reference, random projections out·r against
//    alpha·A(B·r) + beta·C·r, with a tolerance from |A|(|B||r|), plus sampled elements computed exactly.
// fp8 outputs saturate (round_to_output): the reference is clamped to ±largest finite before it is compared.
// Element classes a verdict separates: wrong values, NaN/Inf where the reference is finite, and elements
// still holding the NaN poison the output was pre-filled with (unwritten).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "fuzz/case.hpp"
#include "fuzz/matrix.hpp"
#include "tuner/common/precision.hpp"

namespace tunefuzz::fuzz {

/// The GEMM being checked: C_out (m×n) = alpha · A (m×k) · B (k×n) + beta · C_in.
struct GemmOperands {
  const HostMatrix* a = nullptr;
  const HostMatrix* b = nullptr;
  const HostMatrix* c_in = nullptr;  ///< not read when beta == 0
  double alpha = 1.0, beta = 0.0;
};

/// The reference in double on the exact low-precision input values, and the magnitude
/// |alpha|·(|A||B|) + |beta|·|C| that scales the error bound of each element.
struct Reference {
  Eigen::MatrixXd value;
  Eigen::MatrixXd magnitude;
};

/// Threads the host-side judging of one case (the projected check's scan, triage) may use: the number
/// set_host_threads gave, else the machine's, at most 16. A worker process that shares its host with other
/// workers is given its share (FuzzJob::host_threads), so that a campaign over several GPUs does not run
/// sixteen threads per worker on cores that other workers need.
unsigned host_threads();
void set_host_threads(unsigned threads);  ///< 0: back to the default

/// What a reference is for. `exact`: the case is judged exactly (exact_applies), so the magnitude, a second
/// product as large as the reference's that only the bounded check reads, is left empty. (Forming A·B in
/// float for such cases, exact there too, measured slower: scripts/judge_probe.cpp.)
enum class ReferenceUse { bounded, exact };
Reference compute_reference(const GemmOperands& operands, ReferenceUse use = ReferenceUse::bounded);

/// Precisions of the arithmetic, for the bound.
struct ArithmeticModel {
  Precision accumulator = Precision::fp32;
  Precision output = Precision::bf16;
  int64_t k = 0;
  /// A narrower first stage (0: none): the kernel sums each run of `group` products with unit roundoff
  /// `group_unit_roundoff` and adds the runs in the accumulator. Hopper's fp8 wgmma keeps about 14
  /// significant bits inside the tensor core (2^-14), so gemm_wgmma_fp8 promotes every K tile to fp32.
  int64_t group = 0;
  double group_unit_roundoff = 0;
};

/// The relative error the accumulation may add, as a multiple of the magnitude: c·(k + 2)·u_acc, or with a
/// group stage c·(min(group, k) + 2)·u_group + c·(⌈k/group⌉ + 2)·u_acc, with c = 2 covering tensor cores that
/// truncate instead of rounding.
double accumulation_factor(const ArithmeticModel& model);

/// Bound on |out − ref| for one element: accumulation_factor·magnitude + u_out·|ref| + the smallest normal of
/// the output type (absorbs underflow). Where the output saturates (fp8), a bound on |out − clamp(ref)|
/// instead, clamp to ±largest finite: (1 + u_out)·spread + u_out·|clamp(ref)| + the smallest normal, where
/// spread is how far clamp moves within accumulation_factor·magnitude of ref (0 for an infinite ref).
double error_bound(const ArithmeticModel& model, double reference, double magnitude);

/// Whether the exact check applies to a case of `distribution` under `model`: the distribution is one of
/// the exact ones (integers whose products are at most 9 in magnitude) and every partial sum the model forms
/// (a group's, then the accumulator's over k) is an integer its precision holds exactly.
bool exact_applies(Distribution distribution, const ArithmeticModel& model);

/// Whether alpha·s + beta·c is exact in the accumulator for every integer s with |s| ≤ largest_sum and every
/// integer c with |c| ≤ largest_c, whatever the order of the operations: alpha and beta finite, and the
/// largest such value over the lowest bit alpha and beta set held by the accumulator's significand. Then a
/// correct kernel's output on integer operands is the exact value rounded once (exact_applies covering the
/// sums). alpha = 0.1 is not; 1, 2, -1 and 0.5 are, up to sums of about 2^24 / 2^(their bits).
bool exact_scalars(double alpha, double beta, double largest_sum, double largest_c, Precision accumulator);

struct ElementError {
  int64_t row = 0, col = 0;
  double value = 0, expected = 0, bound = 0;
};

struct Verdict {
  bool pass = true;
  int64_t checked = 0;     ///< elements compared
  int64_t wrong = 0;       ///< finite but outside the bound (exact mode: not bit-equal)
  int64_t non_finite = 0;  ///< NaN/Inf where the reference is finite
  int64_t unwritten = 0;   ///< still NaN when the reference is finite and C was pre-filled with NaN
  double worst_ratio = 0;  ///< max |out − ref| / bound over finite elements (exact mode: 0 or inf)
  std::vector<ElementError> examples;  ///< the first few failures, row-major order
  /// Per element: true where the element failed (empty when it passed). Row-major m×n.
  std::vector<bool> failed_mask;

  /// One line for logs: `wrong 3/4096 (worst 412× bound) at (17, 0): 5 vs 4 ...`.
  std::string summary() const;
};

/// Compare `out` (m×n, the kernel's C) with the reference element by element.
/// `exact` requires bit equality with the reference rounded to the output type (the reference's magnitude may
/// then be empty); otherwise the bound applies.
/// `poisoned_with_nan`: C was pre-filled with NaN, so a NaN left where the reference is finite counts as
/// unwritten rather than non_finite.
Verdict check_full(const HostMatrix& out, const Reference& reference, const ArithmeticModel& model,
                   bool exact, bool poisoned_with_nan);

/// Freivalds-style probabilistic check for large shapes: `rounds` Gaussian vectors r, each comparing
/// out·r with alpha·A(B·r) + beta·C·r per row against a tolerance built from |A|(|B||r|); plus
/// `samples` elements (tile boundaries, last row and column, random) recomputed exactly in double.
/// `tile_rows`/`tile_cols` say where tile boundaries fall (0 = no tile structure to sample).
/// Samples: every element of the last row and column and of the rows and columns on both sides of each
/// tile boundary (thinned evenly along those lines to 3/4 of `samples` when they exceed it), then random
/// elements up to `samples`. Where the output saturates (fp8), an element at ±largest finite may be clamped,
/// which the projection cannot allow for: each is recomputed exactly and judged on its own, and its exact
/// value replaces it in its row's projection; at most 2^24 multiply-adds go to them per check, on rows spread
/// evenly over the output, and a row beyond that budget is not projected. Reporting: each row projection
/// (per round) that is off counts as one `wrong` with col = −1 in `examples` and no mark in `failed_mask`,
/// which marks failed elements only; `checked` counts sampled and saturated elements, non-finite outputs and
/// row projections. NaN outputs count as non_finite (no poisoning is assumed here).
Verdict check_projected(const HostMatrix& out, const GemmOperands& operands, const ArithmeticModel& model,
                        int rounds, int64_t samples, int64_t tile_rows, int64_t tile_cols, uint64_t seed);

/// check_projected in two steps: the projections of the inputs, alpha·A(B·r) + beta·C·r and their magnitudes,
/// computed once per problem; then each output checked against them at the cost of one pass over it. Timing
/// many candidates on one large problem verifies each of them this way.
class ProjectedCheck {
 public:
  ProjectedCheck(const GemmOperands& operands, int rounds, uint64_t seed);
  /// As check_projected, for a kernel whose arithmetic is `model`; `seed` also places the random samples.
  /// `exact` (operands for which exact_applies holds: every partial sum an exact integer in the accumulator)
  /// asks for what check_full's exact mode asks: each sampled element the exact value rounded once to the
  /// output type, and each row projection within the output rounding alone (no accumulation term).
  Verdict check(const HostMatrix& out, const ArithmeticModel& model, int64_t samples, int64_t tile_rows,
                int64_t tile_cols, uint64_t seed, bool exact = false) const;

 private:
  GemmOperands operands_;
  int rounds_;
  bool finite_operands_ = true;
  Eigen::MatrixXd r_, r_abs_;             ///< (n, rounds) Gaussian vectors and their magnitudes
  Eigen::RowVectorXd r_abs_sum_;          ///< Σ|r| per round
  Eigen::MatrixXd expected_, magnitude_;  ///< (m, rounds)
  /// Exact values and magnitudes of the sampled elements checked so far, by row·n + col.
  mutable std::mutex exact_mutex_;
  mutable std::unordered_map<int64_t, std::pair<double, double>> exact_cache_;
};

}  // namespace tunefuzz::fuzz
