// The oracle's arithmetic: a double reference with Eigen, the per-element error bound, the element-wise
// check (exact or bounded) and the projected (Freivalds) check for shapes too large for a full reference.
// Every element is judged by one rule set (judge_*), so both checks classify failures the same way.
#include "fuzz/oracle.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <thread>
#include <unordered_set>
#include <utility>

#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "tuner/common/error.hpp"

namespace tunefuzz::fuzz {

namespace {

constexpr size_t kMaxExamples = 8;
// Stream for the sampled element positions, apart from the Gaussian projection vectors.
constexpr uint64_t kSampleStream = 0xd1b54a32d192ed03ull;
// Multiply-adds a projected check spends recomputing saturated output elements exactly (0.25 s on the
// development machine, optimised build).
constexpr int64_t kSaturatedMacs = int64_t{1} << 24;

void require(bool condition, const std::string& message) {
  if (!condition) throw Error(ErrorKind::internal, "oracle: " + message);
}

std::string shape(const HostMatrix& matrix) {
  return std::to_string(matrix.rows()) + "x" + std::to_string(matrix.cols());
}

/// Rows [begin, begin + count) of `matrix` as doubles (exact: every element type widens exactly).
Eigen::MatrixXd to_eigen(const HostMatrix& matrix, int64_t begin, int64_t count) {
  Eigen::MatrixXd out(count, matrix.cols());
  std::vector<double> values(static_cast<size_t>(matrix.cols()));
  for (int64_t row = 0; row < count; ++row) {
    matrix.get_row(begin + row, values.data());
    for (int64_t col = 0; col < matrix.cols(); ++col) out(row, col) = values[static_cast<size_t>(col)];
  }
  return out;
}

Eigen::MatrixXd to_eigen(const HostMatrix& matrix) {
  return to_eigen(matrix, 0, matrix.rows());
}

void validate(const GemmOperands& operands) {
  require(operands.a != nullptr && operands.b != nullptr, "A and B are required");
  require(operands.a->cols() == operands.b->rows(),
          "A is " + shape(*operands.a) + " but B is " + shape(*operands.b));
  if (operands.beta == 0) return;
  require(operands.c_in != nullptr, "C is required when beta != 0");
  require(operands.c_in->rows() == operands.a->rows() && operands.c_in->cols() == operands.b->cols(),
          "C is " + shape(*operands.c_in) + " but A·B is " + std::to_string(operands.a->rows()) + "x" +
              std::to_string(operands.b->cols()));
}

// ---- judging one element ------------------------------------------------------------------------------

enum class Outcome { pass, wrong, non_finite, unwritten };

/// A non-finite value where the reference is finite.
Outcome judge_non_finite_output(double out, bool poisoned_with_nan) {
  return std::isnan(out) && poisoned_with_nan ? Outcome::unwritten : Outcome::non_finite;
}

/// The reference is NaN or ±Inf: the output must be NaN, or the same infinity.
Outcome judge_non_finite_reference(double out, double reference) {
  const bool same = std::isnan(reference) ? std::isnan(out) : out == reference;
  if (same) return Outcome::pass;
  return std::isfinite(out) ? Outcome::wrong : Outcome::non_finite;
}

/// Exact mode: bit equality with the reference rounded once to the output type, saturating where it does
/// (round_to_output; −0 equals +0).
Outcome judge_exact(double out, double reference, Precision output, bool poisoned_with_nan) {
  const double goal = saturate(output, reference);
  // `out` is a value of the output type, so one equal to a finite goal means the goal rounds to itself.
  if (out == goal && std::isfinite(goal)) return Outcome::pass;
  if (!std::isfinite(goal)) return judge_non_finite_reference(out, goal);
  if (out == round_to_output(output, goal)) return Outcome::pass;  // an overflow to ±Inf included
  if (std::isnan(out)) return judge_non_finite_output(out, poisoned_with_nan);
  return std::isinf(out) ? Outcome::non_finite : Outcome::wrong;
}

/// Bounded mode: |out − ref| ≤ bound, ref clamped where the output saturates (error_bound bounds the distance
/// to that). An infinite output passes only where a value within the bound of the reference overflows to
/// that infinity in the output type (never in a saturating one).
Outcome judge_bounded(double out, double reference, double bound, Precision output, bool poisoned_with_nan) {
  const double goal = saturate(output, reference);
  if (!std::isfinite(goal)) return judge_non_finite_reference(out, goal);
  if (std::isnan(out)) return judge_non_finite_output(out, poisoned_with_nan);
  if (std::isinf(out)) {
    return !output_saturates(output) && round_to(output, goal + std::copysign(bound, out)) == out
               ? Outcome::pass
               : Outcome::non_finite;
  }
  return std::fabs(out - goal) <= bound ? Outcome::pass : Outcome::wrong;
}

// ---- collecting a verdict -----------------------------------------------------------------------------

/// Accumulates outcomes into a Verdict: counts, the first examples in row-major order, the failure mask.
class VerdictBuilder {
 public:
  VerdictBuilder(int64_t rows, int64_t cols) : rows_(rows), cols_(cols) {}

  /// One judged element (col = −1: a row projection, which fails no element of the mask).
  void add(Outcome outcome, const ElementError& error) {
    ++verdict_.checked;
    if (outcome == Outcome::pass) return;
    if (outcome == Outcome::wrong) ++verdict_.wrong;
    if (outcome == Outcome::non_finite) ++verdict_.non_finite;
    if (outcome == Outcome::unwritten) ++verdict_.unwritten;
    keep_example(error);
    if (error.col >= 0) {
      if (mask_.empty()) mask_.assign(static_cast<size_t>(rows_ * cols_), false);
      mask_[static_cast<size_t>(error.row * cols_ + error.col)] = true;
    }
  }

  /// One element that passed: counted, nothing else to keep.
  void add_pass() { ++verdict_.checked; }

  void add_ratio(double ratio) { verdict_.worst_ratio = std::max(verdict_.worst_ratio, ratio); }

  Verdict finish() {
    verdict_.pass = verdict_.wrong == 0 && verdict_.non_finite == 0 && verdict_.unwritten == 0;
    if (!verdict_.pass) {
      if (mask_.empty()) mask_.assign(static_cast<size_t>(rows_ * cols_), false);
      verdict_.failed_mask = std::move(mask_);
    }
    return std::move(verdict_);
  }

 private:
  void keep_example(const ElementError& error) {
    auto& examples = verdict_.examples;
    auto before = [](const ElementError& x, const ElementError& y) {
      return std::pair(x.row, x.col) < std::pair(y.row, y.col);
    };
    if (examples.size() == kMaxExamples && !before(error, examples.back())) return;
    examples.insert(std::upper_bound(examples.begin(), examples.end(), error, before), error);
    if (examples.size() > kMaxExamples) examples.pop_back();
  }

  int64_t rows_, cols_;
  Verdict verdict_;
  std::vector<bool> mask_;
};

/// One element judged in exact mode (judge_exact) into `builder`: a wrong one with an infinite ratio, and its
/// goal (the reference rounded once) in the example.
void add_exact(VerdictBuilder& builder, int64_t row, int64_t col, double value, double expected,
               Precision output, bool poisoned_with_nan) {
  const Outcome outcome = judge_exact(value, expected, output, poisoned_with_nan);
  if (outcome == Outcome::pass) {
    builder.add_pass();
    return;
  }
  if (outcome == Outcome::wrong) builder.add_ratio(std::numeric_limits<double>::infinity());
  builder.add(outcome, {row, col, value, round_to_output(output, expected), 0.0});
}

// ---- projected check helpers --------------------------------------------------------------------------

/// One element of alpha·A·B + beta·C in double with a compensated (Neumaier) sum, and its magnitude.
struct ExactElement {
  double value = 0, magnitude = 0;
};

/// A Neumaier sum of products, with the products that are not finite (±Inf, NaN) summed apart: the
/// compensation of an infinite term is Inf - Inf = NaN, which would turn a sum that is ±Inf (one infinite
/// product among finite ones: what the kernel computes) into NaN.
struct CompensatedSum {
  double sum = 0, compensation = 0, non_finite = 0, magnitude = 0;
  bool any_non_finite = false;

  void add(double product) {
    magnitude += std::fabs(product);
    if (!std::isfinite(product)) {
      non_finite += product;  // +Inf + -Inf and NaN give NaN, as in the kernel
      any_non_finite = true;
      return;
    }
    const double next = sum + product;
    compensation += std::fabs(sum) >= std::fabs(product) ? (sum - next) + product : (product - next) + sum;
    sum = next;
  }

  /// alpha·(the sum) + beta·C(row, col), and its magnitude.
  ExactElement element(const GemmOperands& operands, int64_t row, int64_t col) const {
    const double total = any_non_finite ? non_finite + sum : sum + compensation;
    ExactElement out{operands.alpha * total, std::fabs(operands.alpha) * magnitude};
    if (operands.beta != 0) {
      const double c = operands.c_in->get(row, col);
      out.value += operands.beta * c;
      out.magnitude += std::fabs(operands.beta) * std::fabs(c);
    }
    return out;
  }
};

ExactElement exact_element(const GemmOperands& operands, int64_t row, int64_t col) {
  CompensatedSum sum;
  for (int64_t p = 0; p < operands.a->cols(); ++p)
    sum.add(operands.a->get(row, p) * operands.b->get(p, col));  // each product exact in double
  return sum.element(operands, row, col);
}

/// Lines on both sides of every tile boundary below `extent`, and the last line.
std::vector<int64_t> boundary_lines(int64_t extent, int64_t tile) {
  std::vector<int64_t> lines;
  if (tile > 0) {
    for (int64_t edge = tile; edge < extent; edge += tile) {
      lines.push_back(edge - 1);
      lines.push_back(edge);
    }
  }
  lines.push_back(extent - 1);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  return lines;
}

/// Elements to recompute exactly, as row-major keys row·n + col, sorted. The structured ones (every element
/// of the boundary rows and columns, the last row and column among them) come first, thinned evenly along
/// those lines to three quarters of the budget when they exceed it; random elements fill the rest.
std::vector<int64_t> choose_samples(int64_t m, int64_t n, int64_t samples, int64_t tile_rows,
                                    int64_t tile_cols, uint64_t seed) {
  std::vector<int64_t> keys;
  if (samples <= 0) return keys;
  if (samples >= m * n) {
    keys.resize(static_cast<size_t>(m * n));
    for (size_t key = 0; key < keys.size(); ++key) keys[key] = static_cast<int64_t>(key);
    return keys;
  }
  const std::vector<int64_t> rows = boundary_lines(m, tile_rows);
  const std::vector<int64_t> cols = boundary_lines(n, tile_cols);
  std::vector<int64_t> other_rows;  // rows not already covered whole, for the column lines
  for (int64_t row = 0, next = 0; row < m; ++row) {
    if (next < static_cast<int64_t>(rows.size()) && rows[next] == row) {
      ++next;
    } else {
      other_rows.push_back(row);
    }
  }
  const int64_t in_rows = static_cast<int64_t>(rows.size()) * n;
  const int64_t structured = in_rows + static_cast<int64_t>(cols.size() * other_rows.size());
  auto structured_key = [&](int64_t index) {
    if (index < in_rows) return rows[index / n] * n + index % n;
    const int64_t rest = index - in_rows;
    const int64_t height = static_cast<int64_t>(other_rows.size());
    return other_rows[rest % height] * n + cols[rest / height];
  };

  std::unordered_set<int64_t> chosen;
  const int64_t structured_budget = structured <= samples ? structured : samples - samples / 4;
  for (int64_t pick = 0; pick < structured_budget; ++pick) {
    chosen.insert(structured_key(pick * structured / structured_budget));
  }
  chosen.insert((m - 1) * n + (n - 1));  // the last element, always

  std::mt19937_64 engine(seed ^ kSampleStream);
  boost::random::uniform_int_distribution<int64_t> any_element(0, m * n - 1);
  const int64_t target = std::max<int64_t>(samples, static_cast<int64_t>(chosen.size()));
  for (int64_t attempt = 0; static_cast<int64_t>(chosen.size()) < target && attempt < 20 * samples;
       ++attempt) {
    chosen.insert(any_element(engine));
  }
  keys.assign(chosen.begin(), chosen.end());
  std::sort(keys.begin(), keys.end());
  return keys;
}

/// Every element finite: rows decoded a whole row at a time, slices of them on the host's threads (the time
/// job's operands hold 10^8 elements).
bool all_finite(const HostMatrix& matrix) {
  const int64_t rows = matrix.rows();
  const int64_t slices = std::clamp<int64_t>(rows / 64, 1, host_threads());
  std::atomic<bool> finite{true};
  const auto slice = [&](int64_t s) {
    std::vector<double> row(static_cast<size_t>(matrix.cols()));
    for (int64_t r = rows * s / slices; r < rows * (s + 1) / slices && finite.load(); ++r) {
      matrix.get_row(r, row.data());
      if (!std::all_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); })) finite = false;
    }
  };
  std::vector<std::thread> pool;
  for (int64_t s = 1; s < slices; ++s) pool.emplace_back(slice, s);
  slice(0);
  for (auto& thread : pool) thread.join();
  return finite.load();
}

/// Rows per block when streaming a matrix with `width` columns through Eigen (about 32 MiB of doubles).
int64_t block_rows(int64_t width) {
  return std::max<int64_t>(1, (int64_t{1} << 22) / std::max<int64_t>(1, width));
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

}  // namespace

// ---- public API ---------------------------------------------------------------------------------------

namespace {
std::atomic<unsigned> host_threads_set{0};
}  // namespace

unsigned host_threads() {
  const unsigned set = host_threads_set.load();
  return set > 0 ? set : std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 16);
}

void set_host_threads(unsigned threads) {
  host_threads_set.store(threads);
}

namespace {

/// exact_element for many elements at once, bit for bit: each element still sums its products in order of p,
/// but the loop over p runs outside the loop over elements, so one step reads the row p of B where all the
/// elements' columns lie instead of a column of B per element (K = 262144 over N = 256: 3.2 s one by one on
/// the development machine, a cache line fetched per product). Slices of the elements go to the host's
/// threads; an element's arithmetic does not depend on the slicing.
std::vector<ExactElement> exact_elements(const GemmOperands& operands,
                                         const std::vector<std::pair<int64_t, int64_t>>& at) {
  std::vector<ExactElement> out(at.size());
  const int64_t k = operands.a->cols();
  const int64_t count = static_cast<int64_t>(at.size());
  const int64_t slices = std::clamp<int64_t>(count / 16, 1, host_threads());
  const auto slice = [&](int64_t s) {
    const int64_t begin = count * s / slices, end = count * (s + 1) / slices;
    const auto width = static_cast<size_t>(end - begin);
    std::vector<CompensatedSum> sums(width);
    for (int64_t p = 0; p < k; ++p) {
      for (size_t e = 0; e < width; ++e) {
        const auto& [row, col] = at[static_cast<size_t>(begin) + e];
        sums[e].add(operands.a->get(row, p) * operands.b->get(p, col));  // each product exact in double
      }
    }
    for (size_t e = 0; e < width; ++e) {
      const auto& [row, col] = at[static_cast<size_t>(begin) + e];
      out[static_cast<size_t>(begin) + e] = sums[e].element(operands, row, col);
    }
  };
  std::vector<std::thread> pool;
  for (int64_t s = 1; s < slices; ++s) pool.emplace_back(slice, s);
  slice(0);
  for (auto& thread : pool) thread.join();
  return out;
}

}  // namespace

Reference compute_reference(const GemmOperands& operands, ReferenceUse use) {
  validate(operands);
  // The value and the magnitude are separate products: each made on a thread of its own, the same either way.
  Eigen::MatrixXd a, b, c;
  side_by_side({[&] { a = to_eigen(*operands.a); }, [&] { b = to_eigen(*operands.b); },
                [&] {
                  if (operands.beta != 0) c = to_eigen(*operands.c_in);  // beta == 0: C is not read (NaN)
                }},
               host_threads());
  Reference reference;
  if (use == ReferenceUse::exact) {
    // Integer operands (exact_applies): every order of the sums gives the same doubles, so blocks of rows
    // go to the host's threads, the value alone (no magnitude) to compute.
    const int64_t m = a.rows();
    const int64_t blocks = std::clamp<int64_t>(m / 16, 1, host_threads());
    reference.value.resize(m, b.cols());
    std::vector<std::function<void()>> jobs;
    for (int64_t block = 0; block < blocks; ++block)
      jobs.push_back([&, first = m * block / blocks, last = m * (block + 1) / blocks] {
        reference.value.middleRows(first, last - first).noalias() =
            operands.alpha * (a.middleRows(first, last - first) * b);
        if (operands.beta != 0)
          reference.value.middleRows(first, last - first) +=
              operands.beta * c.middleRows(first, last - first);
      });
    side_by_side(jobs, host_threads());
    return reference;
  }
  side_by_side({[&] {
                  reference.value.noalias() = operands.alpha * (a * b);
                  if (operands.beta != 0) reference.value += operands.beta * c;
                },
                [&] {
                  if (use != ReferenceUse::bounded) return;
                  reference.magnitude.noalias() = std::fabs(operands.alpha) * (a.cwiseAbs() * b.cwiseAbs());
                  if (operands.beta != 0) reference.magnitude += std::fabs(operands.beta) * c.cwiseAbs();
                }},
               host_threads());
  return reference;
}

double accumulation_factor(const ArithmeticModel& model) {
  const double u_acc = unit_roundoff(model.accumulator);
  if (model.group <= 0) return 2.0 * static_cast<double>(model.k + 2) * u_acc;
  const int64_t runs = (model.k + model.group - 1) / model.group;
  return 2.0 * static_cast<double>(std::min(model.group, model.k) + 2) * model.group_unit_roundoff +
         2.0 * static_cast<double>(runs + 2) * u_acc;
}

bool exact_applies(Distribution distribution, const ArithmeticModel& model) {
  if (!is_exact(distribution)) return false;
  const auto holds = [](int64_t terms, double unit_roundoff) {
    return kLargestExactProduct * static_cast<double>(terms) <= 1.0 / unit_roundoff;  // integers to 2^p
  };
  if (model.group > 0 && !holds(std::min(model.group, model.k), model.group_unit_roundoff)) return false;
  return holds(model.k, unit_roundoff(model.accumulator));
}

bool exact_scalars(double alpha, double beta, double largest_sum, double largest_c, Precision accumulator) {
  if (!std::isfinite(alpha) || !std::isfinite(beta)) return false;
  // The value of x's lowest set bit (x finite and not 0): its significand scaled up to an integer.
  const auto lowest_bit = [](double x) {
    int exponent = 0;
    double significand = std::frexp(std::fabs(x), &exponent);
    while (significand != std::floor(significand)) {
      significand *= 2;
      --exponent;
    }
    return std::ldexp(1.0, exponent);
  };
  double lowest = 1;  // s and c are integers
  for (const double x : {alpha, beta})
    if (x != 0) lowest = std::min(lowest, lowest_bit(x));
  const double largest = std::fabs(alpha) * largest_sum + std::fabs(beta) * largest_c;
  return largest / lowest <= 1.0 / unit_roundoff(accumulator);
}

double error_bound(const ArithmeticModel& model, double reference, double magnitude) {
  const double accumulation = accumulation_factor(model) * magnitude;
  const double u_out = unit_roundoff(model.output), tiny = smallest_normal(model.output);
  if (!output_saturates(model.output)) return accumulation + u_out * std::fabs(reference) + tiny;
  // The kernel stores round(clamp(y)) for its fp32 result y, |y − ref| ≤ accumulation. Clamping is monotone
  // and 1-Lipschitz, so clamp(y) lies within `spread` of clamp(ref) (0 when ref is beyond the largest finite
  // value by more than that), and rounding adds at most u_out·|clamp(y)| + tiny.
  if (std::isinf(reference)) return 0;  // y is that infinity, stored as ±largest finite
  const double goal = saturate(model.output, reference);
  const double spread = std::max(saturate(model.output, reference + accumulation) - goal,
                                 goal - saturate(model.output, reference - accumulation));
  return (1 + u_out) * spread + u_out * std::fabs(goal) + tiny;
}

std::string Verdict::summary() const {
  std::string line;
  if (pass) {
    line = "pass: " + std::to_string(checked) + " checked";
  } else {
    line = "FAIL: wrong " + std::to_string(wrong) + ", non_finite " + std::to_string(non_finite) +
           ", unwritten " + std::to_string(unwritten) + " of " + std::to_string(checked) + " checked";
  }
  line += " (worst " + number(worst_ratio) + "× bound)";
  const size_t shown = std::min<size_t>(examples.size(), 3);
  for (size_t index = 0; index < shown; ++index) {
    const ElementError& error = examples[index];
    line += index == 0 ? ": " : "; ";
    if (error.col < 0) {
      line += "row " + std::to_string(error.row) + " projected " + number(error.value) + " vs " +
              number(error.expected) + " (tolerance " + number(error.bound) + ")";
    } else {
      line += "at (" + std::to_string(error.row) + ", " + std::to_string(error.col) + ") " +
              number(error.value) + " vs " + number(error.expected) + " (bound " + number(error.bound) + ")";
    }
  }
  const int64_t failures = wrong + non_finite + unwritten;
  if (failures > static_cast<int64_t>(shown)) line += "; ...";
  return line;
}

Verdict check_full(const HostMatrix& out, const Reference& reference, const ArithmeticModel& model,
                   bool exact, bool poisoned_with_nan) {
  const int64_t m = out.rows(), n = out.cols();
  require(reference.value.rows() == m && reference.value.cols() == n &&
              (exact || (reference.magnitude.rows() == m && reference.magnitude.cols() == n)),
          "output is " + shape(out) + " but the reference is " + std::to_string(reference.value.rows()) +
              "x" + std::to_string(reference.value.cols()));
  VerdictBuilder builder(m, n);
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t col = 0; col < n; ++col) {
      const double value = out.get(row, col);
      const double expected = reference.value(row, col);
      // Most elements pass: what a failure reports (the rounded goal) is made only for the others.
      if (exact) {
        add_exact(builder, row, col, value, expected, model.output, poisoned_with_nan);
      } else {
        const double bound = error_bound(model, expected, reference.magnitude(row, col));
        const Outcome outcome = judge_bounded(value, expected, bound, model.output, poisoned_with_nan);
        const double goal = saturate(model.output, expected);
        if (std::isfinite(value) && std::isfinite(expected))
          builder.add_ratio(std::fabs(value - goal) / bound);
        if (outcome == Outcome::pass)
          builder.add_pass();
        else
          builder.add(outcome, {row, col, value, goal, bound});
      }
    }
  }
  return builder.finish();
}

namespace {

// matrix·r and |matrix|·r_abs, row by row over the host's threads: (rows, r's columns) each.
void project_rows(const HostMatrix& matrix, const Eigen::MatrixXd& r, const Eigen::MatrixXd& r_abs,
                  Eigen::MatrixXd& sums, Eigen::MatrixXd& abs_sums) {
  const int64_t rows = matrix.rows(), cols = matrix.cols(), rounds = r.cols();
  sums.setZero(rows, rounds);
  abs_sums.setZero(rows, rounds);
  const int64_t step = block_rows(cols);
  const int64_t blocks = (rows + step - 1) / step;
  std::atomic<int64_t> next{0};
  const auto work = [&] {
    std::vector<double> values(static_cast<size_t>(cols));
    for (int64_t block = next++; block < blocks; block = next++)
      for (int64_t row = block * step; row < std::min(rows, (block + 1) * step); ++row) {
        matrix.get_row(row, values.data());
        for (int64_t round = 0; round < rounds; ++round) {
          double sum = 0, abs_sum = 0;
          for (int64_t col = 0; col < cols; ++col) {
            const double value = values[static_cast<size_t>(col)];
            sum += value * r(col, round);
            abs_sum += std::fabs(value) * r_abs(col, round);
          }
          sums(row, round) = sum;
          abs_sums(row, round) = abs_sum;
        }
      }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<int64_t>(host_threads(), blocks); ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
}

}  // namespace

ProjectedCheck::ProjectedCheck(const GemmOperands& operands, int rounds, uint64_t seed)
    : operands_(operands), rounds_(std::max(rounds, 0)) {
  validate(operands);
  const int64_t n = operands.b->cols();
  const bool with_c = operands.beta != 0;
  finite_operands_ = std::isfinite(operands.alpha) && std::isfinite(operands.beta) &&
                     all_finite(*operands.a) && all_finite(*operands.b) &&
                     (!with_c || all_finite(*operands.c_in));
  if (rounds_ == 0) return;
  std::mt19937_64 engine(seed);
  boost::random::normal_distribution<double> gaussian(0.0, 1.0);
  r_.resize(n, rounds_);  // (n, rounds)
  for (int64_t col = 0; col < n; ++col) {
    for (int round = 0; round < rounds_; ++round) r_(col, round) = gaussian(engine);
  }
  r_abs_ = r_.cwiseAbs();
  r_abs_sum_ = r_abs_.colwise().sum();

  // Each product goes row by row, every row decoded once into a buffer its thread reuses and summed in one
  // sweep, column by column, and written by that thread alone: the same bits whatever the number of threads.
  // (Converting row blocks into Eigen matrices first wrote them with a stride: 38 ns an element on one core
  // against the sweep's few, and the time job makes two projections of every problem's operands.)
  Eigen::MatrixXd br, br_abs;  // B·r and |B||r|: (k, rounds)
  project_rows(*operands.b, r_, r_abs_, br, br_abs);
  // alpha·A(B·r) + beta·C·r and its magnitude, per row and round: (m, rounds)
  project_rows(*operands.a, br, br_abs, expected_, magnitude_);
  expected_ *= operands.alpha;
  magnitude_ *= std::fabs(operands.alpha);
  if (with_c) {
    Eigen::MatrixXd cr, cr_abs;
    project_rows(*operands.c_in, r_, r_abs_, cr, cr_abs);
    expected_ += operands.beta * cr;
    magnitude_ += std::fabs(operands.beta) * cr_abs;
  }
}

Verdict ProjectedCheck::check(const HostMatrix& out, const ArithmeticModel& model, int64_t samples,
                              int64_t tile_rows, int64_t tile_cols, uint64_t seed, bool exact) const {
  const GemmOperands& operands = operands_;
  const int64_t m = operands.a->rows(), k = operands.a->cols(), n = operands.b->cols();
  require(out.rows() == m && out.cols() == n,
          "output is " + shape(out) + " but A·B is " + std::to_string(m) + "x" + std::to_string(n));
  VerdictBuilder builder(m, n);

  // 1. One pass over the output, split into row blocks across cores (huge outputs hold 2^31 elements): which
  //    rows hold a non-finite value, and with rounds the projections out·r and |out||r| and, where the output
  //    type saturates, how many elements of each row sit at ±largest finite. Each row is decoded once into a
  //    buffer the thread reuses and summed in one sweep, column by column (a 32 MiB block of doubles for
  //    Eigen's products cost twice as long: it was written with a stride and then read twice).
  std::vector<char> row_finite(static_cast<size_t>(m), 1);  // char, not bool: threads write neighbours
  Eigen::MatrixXd got(m, rounds_), got_abs(m, rounds_);
  const bool saturates = rounds_ > 0 && output_saturates(model.output);
  const double largest = largest_finite(model.output);
  const auto at_largest = [&](double value) { return saturates && std::fabs(value) == largest; };
  std::vector<int64_t> row_saturated(saturates ? static_cast<size_t>(m) : 0, 0);
  const int64_t step = block_rows(n);
  const int64_t blocks = (m + step - 1) / step;
  std::atomic<int64_t> next_block{0};
  const auto scan = [&] {
    std::vector<double> values(static_cast<size_t>(n));
    std::vector<double> sums(static_cast<size_t>(rounds_)), abs_sums(static_cast<size_t>(rounds_));
    for (int64_t block = next_block++; block < blocks; block = next_block++) {
      const int64_t begin = block * step, count = std::min(step, m - begin);
      for (int64_t row = begin; row < begin + count; ++row) {
        out.get_row(row, values.data());
        bool finite = true;
        int64_t saturated_count = 0;
        std::fill(sums.begin(), sums.end(), 0.0);
        std::fill(abs_sums.begin(), abs_sums.end(), 0.0);
        for (int64_t col = 0; col < n; ++col) {
          const double value = values[static_cast<size_t>(col)];
          finite = finite && std::isfinite(value);
          saturated_count += at_largest(value);
          const double magnitude = std::fabs(value);
          for (int round = 0; round < rounds_; ++round) {
            sums[static_cast<size_t>(round)] += value * r_(col, round);
            abs_sums[static_cast<size_t>(round)] += magnitude * r_abs_(col, round);
          }
        }
        row_finite[static_cast<size_t>(row)] = finite;
        if (saturates) row_saturated[static_cast<size_t>(row)] = saturated_count;
        for (int round = 0; round < rounds_; ++round) {
          got(row, round) = sums[static_cast<size_t>(round)];
          got_abs(row, round) = abs_sums[static_cast<size_t>(round)];
        }
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = host_threads();
  for (unsigned t = 1; t < std::min<int64_t>(threads, blocks); ++t) pool.emplace_back(scan);
  scan();
  for (auto& thread : pool) thread.join();

  // 2. Non-finite outputs, judged one by one in row order; their rows cannot be projected. With finite
  //    operands the reference is finite, so only a few (the examples) are recomputed; otherwise every one is.
  int64_t non_finite_seen = 0;
  for (int64_t row = 0; row < m; ++row) {
    if (row_finite[static_cast<size_t>(row)]) continue;
    for (int64_t col = 0; col < n; ++col) {
      const double value = out.get(row, col);
      if (std::isfinite(value)) continue;
      double expected = 0;  // finite for sure when the operands are (and clamped where the output saturates)
      if (!finite_operands_ || non_finite_seen < static_cast<int64_t>(kMaxExamples)) {
        expected = saturate(model.output, exact_element(operands, row, col).value);
      }
      ++non_finite_seen;
      builder.add(finite_operands_ ? judge_non_finite_output(value, false)
                                   : judge_non_finite_reference(value, expected),
                  {row, col, value, expected, 0.0});
    }
  }

  // One finite element judged against its element bound (exact mode: its exact value rounded once), given
  // its exact value.
  const auto judge = [&](int64_t row, int64_t col, double value, const ExactElement& element) {
    if (exact) {
      add_exact(builder, row, col, value, element.value, model.output, false);
      return;
    }
    const double bound = error_bound(model, element.value, element.magnitude);
    const double goal = saturate(model.output, element.value);
    if (std::isfinite(element.value)) builder.add_ratio(std::fabs(value - goal) / bound);
    builder.add(judge_bounded(value, element.value, bound, model.output, false),
                {row, col, value, goal, bound});
  };

  // 3. Elements at ±largest finite of a saturating output type, whose value may have been clamped, which
  //    out·r cannot allow for: each is judged on its own, and its row's projection takes its exact value
  //    instead (correction: Σ (exact − out)·r_j). They cost k multiply-adds each: at most kSaturatedMacs are
  //    spent, on rows spread evenly over the output; a row left over is not projected. The rows are chosen
  //    first and their elements recomputed together (exact_elements: K outermost, over the host's threads),
  //    since one element at a time read B a column at a time: 2.2–2.8 s a check with a 64 MiB fp8 B beyond
  //    the caches, 0.21–0.28 s now (results/verify-bench-dev.txt).
  std::vector<char> row_projected(static_cast<size_t>(m), 1);
  Eigen::MatrixXd correction;
  if (saturates) {
    correction.setZero(m, rounds_);
    double total = 0;  // saturated elements in finite rows
    for (int64_t row = 0; row < m; ++row)
      if (row_finite[static_cast<size_t>(row)])
        total += static_cast<double>(row_saturated[static_cast<size_t>(row)]);
    const double share =
        std::min(1.0, static_cast<double>(kSaturatedMacs) / (total * static_cast<double>(k)));
    double seen = 0, spent = 0;
    std::vector<std::pair<int64_t, int64_t>> clamped;  // the saturated elements of the rows projected
    for (int64_t row = 0; row < m; ++row) {
      const auto count = static_cast<double>(row_saturated[static_cast<size_t>(row)]);
      if (count == 0 || !row_finite[static_cast<size_t>(row)]) continue;
      seen += count;
      if (spent + count > share * seen) {
        row_projected[static_cast<size_t>(row)] = 0;
        continue;
      }
      spent += count;
      for (int64_t col = 0; col < n; ++col)
        if (at_largest(out.get(row, col))) clamped.emplace_back(row, col);
    }
    const std::vector<ExactElement> exact = exact_elements(operands, clamped);
    for (size_t i = 0; i < clamped.size(); ++i) {
      const auto& [row, col] = clamped[i];
      const double value = out.get(row, col);
      judge(row, col, value, exact[i]);
      for (int round = 0; round < rounds_; ++round)
        correction(row, round) += (exact[i].value - value) * r_(col, round);
    }
  }

  // 4. Sampled elements, recomputed exactly and judged against the element bound (those of step 3 once).
  //    Their exact values are kept: the finalists of one problem share most of their samples.
  std::vector<int64_t> keys;
  for (int64_t key : choose_samples(m, n, samples, tile_rows, tile_cols, seed)) {
    const int64_t row = key / n, col = key % n;
    const double value = out.get(row, col);
    if (!std::isfinite(value)) continue;  // judged above
    if (at_largest(value) && row_finite[static_cast<size_t>(row)] && row_projected[static_cast<size_t>(row)])
      continue;
    keys.push_back(key);
  }
  std::vector<std::pair<int64_t, int64_t>> missing;
  {
    const std::lock_guard lock(exact_mutex_);
    for (int64_t key : keys)
      if (!exact_cache_.count(key)) missing.emplace_back(key / n, key % n);
  }
  const std::vector<ExactElement> computed = exact_elements(operands, missing);
  std::vector<ExactElement> sampled(keys.size());
  {
    const std::lock_guard lock(exact_mutex_);
    for (size_t i = 0; i < missing.size(); ++i)
      exact_cache_[missing[i].first * n + missing[i].second] = {computed[i].value, computed[i].magnitude};
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto& [value, magnitude] = exact_cache_.at(keys[i]);
      sampled[i] = {value, magnitude};
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t row = keys[i] / n, col = keys[i] % n;
    judge(row, col, out.get(row, col), sampled[i]);
  }

  if (rounds_ == 0) return builder.finish();

  // 5. Projections, judged in row order: out·r (with step 3's corrections) against the cached
  //    alpha·A(B·r) + beta·C·r. Tolerance per row: the element bound summed with weights |r_j|, written with
  //    |out| in place of |ref| (hence the factor 1 + 2·u_out), plus the error of the double arithmetic
  //    itself.
  const double u_out = unit_roundoff(model.output);
  const double accumulation = exact ? 0.0 : accumulation_factor(model);  // exact: the output rounding alone
  const double arithmetic = 4.0 * static_cast<double>(k + n + 4) * 0x1p-53;  // double rounding of the sums
  for (int64_t row = 0; row < m; ++row) {
    if (!row_finite[static_cast<size_t>(row)] || !row_projected[static_cast<size_t>(row)]) continue;
    for (int round = 0; round < rounds_; ++round) {
      const double projected = saturates ? got(row, round) + correction(row, round) : got(row, round);
      const double expected = expected_(row, round);
      const double magnitude = magnitude_(row, round);
      const double tolerance = (1.0 + 2.0 * u_out) * (accumulation * magnitude + u_out * got_abs(row, round) +
                                                      smallest_normal(model.output) * r_abs_sum_(round)) +
                               arithmetic * (magnitude + got_abs(row, round));
      if (!std::isfinite(expected) || !std::isfinite(tolerance)) continue;  // nothing to compare against
      const double difference = std::fabs(projected - expected);
      builder.add_ratio(difference / tolerance);
      builder.add(difference <= tolerance ? Outcome::pass : Outcome::wrong,
                  {row, -1, projected, expected, tolerance});
    }
  }
  return builder.finish();
}

Verdict check_projected(const HostMatrix& out, const GemmOperands& operands, const ArithmeticModel& model,
                        int rounds, int64_t samples, int64_t tile_rows, int64_t tile_cols, uint64_t seed) {
  return ProjectedCheck(operands, rounds, seed).check(out, model, samples, tile_rows, tile_cols, seed);
}

}  // namespace tunefuzz::fuzz
