#include "runtime/dispatch/dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/templates/gemm_mma.hpp"

namespace tunefuzz::dispatch {

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& message) {
  throw Error(ErrorKind::bad_input, message, {"", 0, 0, field});
}

/// A leading dimension must reach across its stored row, and be at least 1 (BLAS's max(1, rows)).
void check_leading(const char* name, int64_t ld, int64_t row, const char* row_name) {
  if (ld < std::max<int64_t>(row, 1))
    bad(name, std::string(name) + " = " + std::to_string(ld) + " is shorter than the stored row it spans (" +
                  row_name + " = " + std::to_string(row) + "; it must be at least max(1, " + row_name + "))");
}

void check_pointer(const char* name, uintptr_t address, bool used, Precision type) {
  if (!used) return;
  if (address == 0) bad(name, std::string(name) + " is null but the GEMM reads or writes it");
  if (address % static_cast<uintptr_t>(size_of(type)) != 0)
    bad(name, std::string(name) + " is not aligned to its " + std::to_string(size_of(type)) + "-byte " +
                  to_string(type) + " elements");
}

int64_t alignment_of(uintptr_t address) {
  int64_t alignment = 256;
  while (alignment > 1 && address % static_cast<uintptr_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

double gap(int64_t a, int64_t b) {
  return std::abs(std::log(static_cast<double>(std::max<int64_t>(a, 1))) -
                  std::log(static_cast<double>(std::max<int64_t>(b, 1))));
}

double distance(const Row& row, const GemmShape& shape) {
  return gap(shape.m, row.m) + gap(shape.n, row.n) + gap(shape.k, row.k);
}

/// The rows passing `accept`, nearest first (stable: the first row on ties).
template <class Accept>
std::vector<const Row*> nearest(const std::vector<Row>& rows, const GemmShape& shape, Accept accept) {
  std::vector<const Row*> out;
  for (const Row& row : rows)
    if (accept(row)) out.push_back(&row);
  std::stable_sort(out.begin(), out.end(),
                   [&](const Row* x, const Row* y) { return distance(*x, shape) < distance(*y, shape); });
  return out;
}

}  // namespace

void check(const Request& r) {
  if (r.m < 0) bad("m", "m = " + std::to_string(r.m) + " is negative");
  if (r.n < 0) bad("n", "n = " + std::to_string(r.n) + " is negative");
  if (r.k < 0) bad("k", "k = " + std::to_string(r.k) + " is negative");
  const bool a_row = r.layout.a == Order::row, b_row = r.layout.b == Order::row;
  check_leading("lda", r.lda, a_row ? r.k : r.m, a_row ? "k, A being row-major" : "m, A being column-major");
  check_leading("ldb", r.ldb, b_row ? r.n : r.k, b_row ? "n, B being row-major" : "k, B being column-major");
  check_leading("ldc", r.ldc, r.n, "n, C being row-major");
  if (r.a_type != r.b_type)
    throw Error(ErrorKind::unsupported,
                std::string("A is ") + to_string(r.a_type) + " and B " + to_string(r.b_type) +
                    ": the kernels take A and B of one type",
                {"", 0, 0, "types"});
  if (!is_output_type(r.a_type, r.c_type))
    throw Error(ErrorKind::unsupported,
                std::string("no kernel writes C as ") + to_string(r.c_type) + " from " + to_string(r.a_type) +
                    " inputs (C may be fp16, bf16 or fp32, fp32 only for tf32, or the inputs' own fp8 type)",
                {"", 0, 0, "types"});
  const bool writes_c = r.m > 0 && r.n > 0, reads_ab = writes_c && r.k > 0;
  check_pointer("A", r.a, reads_ab, r.a_type);
  check_pointer("B", r.b, reads_ab, r.b_type);
  check_pointer("C", r.c, writes_c, r.c_type);
}

GemmShape shape_of(const Request& r) {
  GemmShape s;
  s.m = r.m;
  s.n = r.n;
  s.k = r.k;
  s.lda = r.lda;
  s.ldb = r.ldb;
  s.ldc = r.ldc;
  s.layout = r.layout;
  s.a_alignment = alignment_of(r.a);
  s.b_alignment = alignment_of(r.b);
  s.c_alignment = alignment_of(r.c);
  return s;
}

TypePair types_of(const Request& r) {
  return {r.a_type, r.c_type};
}

Row make_row(std::string card, std::string arch, std::string problem, int64_t m, int64_t n, int64_t k,
             const std::string& precision, const std::string& output, const std::string& layout,
             const std::string& candidate_id) {
  const std::string where = card + ": " + problem;
  const auto input = parse_precision(precision), out = parse_precision(output);
  if (!input || !out) bad(where + ".precision", "unknown element type '" + precision + "' or '" + output + "'");
  const auto order = parse_layout(layout);
  if (!order) bad(where + ".layout", "unknown layout '" + layout + "' (RR, RC, CR or CC)");
  Candidate candidate;
  try {
    candidate = parse_candidate_id(candidate_id);
  } catch (const Error& e) {
    bad(where + ".winner.id", e.message());
  }
  if (candidate.mutant != 0 || candidate.perturb != 0)
    bad(where + ".winner.id", "'" + candidate_id + "' carries an injected bug or schedule perturbation");
  if (candidate.types != TypePair{*input, *out})
    bad(where + ".winner.id", "'" + candidate_id + "' computes other types than the row's " + precision +
                                  " -> " + output);
  return Row{std::move(card), std::move(arch), std::move(problem), m, n, k, {*input, *out}, *order, candidate, {}};
}

const char* to_string(Step step) {
  switch (step) {
    case Step::quick_return: return "quick_return";
    case Step::exact: return "exact";
    case Step::nearest_shape: return "nearest_shape";
    case Step::same_arch: return "same_arch";
    case Step::safe_default: return "safe_default";
    case Step::fallback: return "fallback";
  }
  return "unknown";
}

std::vector<Ranked> ranked_candidates(const std::vector<Row>& rows, const std::string& card,
                                      const std::string& arch, const GemmShape& shape, TypePair types) {
  std::vector<Ranked> out;
  std::set<std::string> seen;
  const auto add = [&](Step step, const Candidate& candidate, const Row* row) {
    if (seen.insert(candidate.id()).second) out.push_back({step, candidate, row});
  };
  const auto same = [&](const Row& row) { return row.types == types && row.layout == shape.layout; };
  for (const Row& row : rows)
    if (row.card == card && same(row) && row.m == shape.m && row.n == shape.n && row.k == shape.k)
      add(Step::exact, row.candidate, &row);
  for (const Row* row : nearest(rows, shape, [&](const Row& r) { return r.card == card && same(r); }))
    add(Step::nearest_shape, row->candidate, row);
  for (const Row* row : nearest(rows, shape, [&](const Row& r) { return r.arch == arch && same(r); }))
    add(Step::same_arch, row->candidate, row);
  // Untuned: each template that computes the type pair at its default point, gemm_mma first, then the same
  // point packing its operands (PACK=1 serves any K, leading dimension and base address), so that a type
  // pair the table never saw still gets a kernel whenever one of the templates can compute it at all.
  std::vector<const KernelTemplate*> templates = {&gemm_mma_template()};
  for (const KernelTemplate* t : all_templates())
    if (t != templates.front()) templates.push_back(t);
  for (const bool packed : {false, true})
    for (const KernelTemplate* t : templates) {
      const auto& supported = t->supported_types;
      if (std::find(supported.begin(), supported.end(), types) == supported.end()) continue;
      Point point = t->default_point();
      if (packed) {
        if (!t->parameter("PACK") || point["PACK"] == 1) continue;
        std::vector<std::pair<std::string, int64_t>> values = point.values();
        for (auto& [name, value] : values)
          if (name == "PACK") value = 1;
        point = Point(std::move(values));
      }
      add(Step::safe_default, Candidate{t, point, types}, nullptr);
    }
  return out;
}

std::optional<std::string> refusal_on(const Candidate& candidate, const DeviceInfo& device,
                                      const GemmShape& shape) {
  const KernelTemplate& t = *candidate.kernel_template;
  if (!t.archs.empty() && std::find(t.archs.begin(), t.archs.end(), device.arch) == t.archs.end())
    return t.name + " does not run on " + device.arch;
  for (const Constraint& constraint : t.constraints)
    if (!constraint.holds(candidate.point, device.limits))
      return "does not fit " + device.name + " (" + constraint.name + ": " + constraint.reason + ")";
  return t.refusal(candidate.point, shape);
}

Decision decide(const std::vector<Row>& rows, const Target& target, const Request& request) {
  Decision decision;
  if (request.m == 0 || request.n == 0) return decision;  // quick return: C is untouched
  const GemmShape shape = shape_of(request);
  const TypePair types = types_of(request);
  for (const Ranked& ranked : ranked_candidates(rows, target.device.name, target.device.arch, shape, types)) {
    if (ranked.row && !ranked.row->unusable.empty()) {
      decision.passed_over.push_back(ranked.candidate.id() + ": " + ranked.row->unusable);
      continue;
    }
    if (auto why = refusal_on(ranked.candidate, target.device, shape)) {
      decision.passed_over.push_back(ranked.candidate.id() + ": " + *why);
      continue;
    }
    decision.step = ranked.step;
    decision.candidate = ranked.candidate;
    decision.row = ranked.row;
    return decision;
  }
  std::string why = "no kernel serves " + std::to_string(request.m) + "x" + std::to_string(request.n) + "x" +
                    std::to_string(request.k) + " " + to_string(types.input) + " -> " +
                    to_string(types.output) + " " + to_string(shape.layout) + " on " + target.device.name;
  if (target.fallback_refusal) {
    const auto refused = target.fallback_refusal(shape, types, request.beta);
    if (!refused) {
      decision.step = Step::fallback;
      return decision;
    }
    decision.passed_over.push_back(target.fallback_name + ": " + *refused);
  } else {
    why += " (no fallback: " + target.no_fallback + ")";
  }
  for (const std::string& passed : decision.passed_over) why += "\n  " + passed;
  if (decision.passed_over.empty()) why += "\n  the table has no candidate for these types";
  throw Error(ErrorKind::unsupported, why);
}

}  // namespace tunefuzz::dispatch
