#include "tuner/device/case_executor.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"

namespace tunefuzz::device {

namespace {

constexpr size_t kCanaryBytes = 4096;
constexpr unsigned char kCanary = 0xA7;
// Beyond this many multiply-adds the full double reference is replaced by Freivalds projections.
constexpr int64_t kFullReferenceMacs = int64_t{1} << 28;

bool all_zero(const fuzz::HostMatrix& out) {
  for (int64_t i = 0; i < out.rows(); ++i)
    for (int64_t j = 0; j < out.cols(); ++j)
      if (out.get(i, j) != 0.0) return false;
  return true;
}

}  // namespace

GemmShape shape_of(const fuzz::CaseRecord& r) {
  GemmShape s;
  s.m = r.m;
  s.n = r.n;
  s.k = r.k;
  s.lda = r.lda();
  s.ldb = r.ldb();
  s.ldc = r.ldc();
  return s;
}

fuzz::CaseSpace case_space_for(const Candidate& candidate, int64_t sm_count) {
  const Point& p = candidate.point;
  fuzz::CaseSpace s;
  const int64_t unit = candidate.kernel_template->parameter("PACK") && p["PACK"] ? 1 : p["VEC"];
  s.k_unit = unit;
  s.n_unit = unit;
  s.tile_m = p["BM"];
  s.tile_n = p["BN"];
  s.tile_k = p["BK"];
  s.stages = p["STAGES"];
  s.sm_count = sm_count;
  return s;
}

CaseExecutor::CaseExecutor(const Candidate& candidate, const GemmRunner& runner, CUstream stream)
    : candidate_(candidate), runner_(runner), stream_(stream) {}

CaseOutcome CaseExecutor::run(const fuzz::CaseRecord& record) {
  CaseOutcome outcome;
  const GemmShape shape = shape_of(record);
  if (auto why = runner_.refusal(shape)) {
    outcome.refused = true;
    outcome.failure_class = fuzz::FailureClass::not_supported;
    outcome.message = *why;
    return outcome;
  }
  const TypePair types = candidate_.types;
  const fuzz::CaseOperands ops = fuzz::materialise(record, types.input, types.output);

  a_.reserve(ops.a.size_bytes());
  b_.reserve(ops.b.size_bytes());
  a_.upload(ops.a.bytes(), ops.a.size_bytes());
  b_.upload(ops.b.bytes(), ops.b.size_bytes());
  // C sits between two canary bands; its row padding (ldc > n) holds what materialise put there (NaN).
  const size_t c_bytes = ops.c.size_bytes();
  const std::vector<unsigned char> band(kCanaryBytes, kCanary);
  c_.reserve(c_bytes + 2 * kCanaryBytes);
  c_.upload(band.data(), kCanaryBytes);
  c_.upload(ops.c.bytes(), c_bytes, kCanaryBytes);
  c_.upload(band.data(), kCanaryBytes, kCanaryBytes + c_bytes);
  const int64_t workspace = runner_.workspace_bytes(shape);
  if (workspace > 0) workspace_.reserve(static_cast<size_t>(workspace));

  DeviceGemm gemm;
  gemm.a = a_.get();
  gemm.b = b_.get();
  gemm.c = c_.get() + kCanaryBytes;
  gemm.shape = shape;
  gemm.alpha = static_cast<float>(record.alpha);
  gemm.beta = static_cast<float>(record.beta);
  try {
    runner_.run(gemm, workspace_.get(), stream_);
    check(cuStreamSynchronize(stream_), "cuStreamSynchronize after the kernel");
  } catch (const CudaError& e) {
    if (e.poisons_context()) throw;
    outcome.failure_class = fuzz::FailureClass::launch_error;
    outcome.message = e.what();
    return outcome;
  }

  std::vector<unsigned char> before(kCanaryBytes), after(kCanaryBytes);
  c_.download(before.data(), kCanaryBytes);
  c_.download(after.data(), kCanaryBytes, kCanaryBytes + c_bytes);
  for (size_t i = 0; i < kCanaryBytes; ++i)
    if (before[i] != kCanary || after[i] != kCanary) {
      outcome.failure_class = fuzz::FailureClass::out_of_bounds_write;
      outcome.message = "wrote outside C into a canary band (" +
                        (before[i] != kCanary ? std::to_string(kCanaryBytes - i) + " bytes before C"
                                              : std::to_string(i) + " bytes past its end") + ")";
      return outcome;
    }
  fuzz::HostMatrix out(types.output, record.m, record.n, record.ldc());
  c_.download(out.bytes(), c_bytes, kCanaryBytes);
  if (keep_output_) last_output_.assign(reinterpret_cast<const unsigned char*>(out.bytes()),
                                        reinterpret_cast<const unsigned char*>(out.bytes()) + c_bytes);
  const size_t element = static_cast<size_t>(size_of(types.output));
  const size_t row_bytes = static_cast<size_t>(record.ldc()) * element;
  const size_t used_bytes = static_cast<size_t>(record.n) * element;
  for (int64_t row = 0; row < record.m && record.ldc_pad > 0; ++row) {
    const size_t offset = static_cast<size_t>(row) * row_bytes + used_bytes;
    if (std::memcmp(out.bytes() + offset, ops.c.bytes() + offset, row_bytes - used_bytes) != 0) {
      outcome.failure_class = fuzz::FailureClass::out_of_bounds_write;
      outcome.message = "wrote into the row padding of C (row " + std::to_string(row) + ")";
      return outcome;
    }
  }

  fuzz::GemmOperands operands{&ops.a, &ops.b, &ops.c, record.alpha, record.beta};
  const fuzz::ArithmeticModel model{Precision::fp32, types.output, record.k};
  fuzz::Verdict verdict;
  bool exact = false;
  if (record.m * record.n * record.k <= kFullReferenceMacs) {
    const fuzz::Reference reference = fuzz::compute_reference(operands);
    exact = fuzz::is_exact(record.distribution) && record.k < (int64_t{1} << 20);
    verdict = fuzz::check_full(out, reference, model, exact, record.beta == 0.0);
  } else {
    // Too large for a full reference: projections plus exact samples on tile boundaries and the edges.
    const fuzz::ProjectedCheck projection(operands, model, 2, record.seed);
    verdict = projection.check(out, 2048, candidate_.point["BM"], candidate_.point["BN"], record.seed);
  }
  if (verdict.pass) {
    outcome.passed = true;
    return outcome;
  }
  const Point& p = candidate_.point;
  outcome.failure_class = fuzz::FailureClass::incorrect;
  outcome.subtype = fuzz::to_string(fuzz::classify_incorrect(verdict, record.m, record.n, p["BM"], p["BN"], all_zero(out)));
  outcome.message = (exact ? "exact: " : "bounded: ") + verdict.summary();
  return outcome;
}

}  // namespace tunefuzz::device
