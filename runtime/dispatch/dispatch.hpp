// What one GEMM runs, decided on the host: its arguments checked (nothing is launched for a bad one), its
// quick return, then the table's candidates in the order of the documented lookup rule (exact row of this
// card, nearest shapes of this card, nearest shapes of this arch, gemm_mma's default point), each asked
// whether it runs on this GPU and accepts the problem; the first that does is the choice, and each one passed
// over is kept with its reason. When none accepts, the platform's fallback (cuBLAS) if it has one and takes
// the problem, else Error{unsupported} listing why each refused. No GPU: the runtime's handle runs the answer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz::dispatch {

/// A GEMM as the runtime's API states it: A and B types apart (so a mixed pair is refused, not misread), and
/// device addresses (their alignment is part of what a kernel accepts).
struct Request {
  int64_t m = 0, n = 0, k = 0;
  Precision a_type = Precision::bf16, b_type = Precision::bf16, c_type = Precision::bf16;
  Layout layout;
  int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1, beta = 0;
  uintptr_t a = 0, b = 0, c = 0;
};

/// Throws Error{bad_input} naming the argument for negative sizes, a leading dimension shorter than its
/// stored row (and under 1), a null operand that the GEMM reads or writes, or an address not aligned to its
/// element; Error{unsupported} for A and B of different types or a C type no kernel writes for them.
void check(const Request& request);

/// The kernels' view of a checked request: sizes, leading dimensions, layout and base alignments (the
/// largest power of two dividing each address, at most 256).
GemmShape shape_of(const Request& request);
TypePair types_of(const Request& request);

/// A tuned winner as the dispatch reads it.
struct Row {
  std::string card, arch, problem;
  int64_t m = 0, n = 0, k = 0;
  TypePair types;
  Layout layout;
  Candidate candidate;
  std::string unusable;  ///< why its winner cannot run here (its template changed since tuning); empty: it can
};

/// Throws Error{bad_input} naming the field when the row's types, layout or candidate id do not parse or the
/// candidate's template does not compute its types.
Row make_row(std::string card, std::string arch, std::string problem, int64_t m, int64_t n, int64_t k,
             const std::string& precision, const std::string& output, const std::string& layout,
             const std::string& candidate_id);

enum class Step { quick_return, exact, nearest_shape, same_arch, safe_default, fallback };
const char* to_string(Step step);

/// A candidate of the rule and where it came from, in the order the rule asks them.
struct Ranked {
  Step step;
  Candidate candidate;
  const Row* row = nullptr;  ///< null for safe_default
};

/// Every candidate the rule would ask for a problem of this shape and types on `card` (`arch`), first
/// first, each candidate once (at its earliest step).
std::vector<Ranked> ranked_candidates(const std::vector<Row>& rows, const std::string& card,
                                      const std::string& arch, const GemmShape& shape, TypePair types);

/// What the problem gets.
struct Decision {
  Step step = Step::quick_return;
  std::optional<Candidate> candidate;  ///< set unless quick_return or fallback
  const Row* row = nullptr;
  std::vector<std::string> passed_over;  ///< "candidate id: reason", in the rule's order
};

/// The GPU the decision is for, and its fallback's refusal (nullopt: it takes the problem); no fallback
/// function when the platform has none.
struct Target {
  DeviceInfo device;
  std::function<std::optional<std::string>(const GemmShape&, TypePair, float beta)> fallback_refusal;
  std::string fallback_name = "cuBLAS";
  std::string no_fallback = "this platform has no fallback library";  ///< said when fallback_refusal is empty
};

/// The rule, for a request that passed check(): a row marked unusable is passed over with its reason. Throws
/// Error{unsupported} when nothing serves it.
Decision decide(const std::vector<Row>& rows, const Target& target, const Request& request);

/// Why `candidate` cannot run `shape` on `device`, or nullopt: its template's GPUs, each constraint against
/// the device's limits, then the template's refusal.
std::optional<std::string> refusal_on(const Candidate& candidate, const DeviceInfo& device,
                                      const GemmShape& shape);

}  // namespace tunefuzz::dispatch
