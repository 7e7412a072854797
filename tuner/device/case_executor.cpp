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
// Outputs up to this many elements are run twice to check the bits repeat.
constexpr int64_t kDeterminismElements = int64_t{1} << 24;

bool all_zero(const fuzz::HostMatrix& out) {
  for (int64_t i = 0; i < out.rows(); ++i)
    for (int64_t j = 0; j < out.cols(); ++j)
      if (out.get(i, j) != 0.0) return false;
  return true;
}

}  // namespace

namespace {
// Alignment in bytes of an address `offset_bytes` past a 256-byte aligned allocation.
int64_t alignment_after(int64_t offset_bytes) {
  return offset_bytes == 0 ? 256 : std::min<int64_t>(256, offset_bytes & -offset_bytes);
}
}  // namespace

GemmShape shape_of(const fuzz::CaseRecord& r, int input_bytes, int output_bytes) {
  GemmShape s;
  s.a_alignment = alignment_after(r.a_offset * input_bytes);
  s.b_alignment = alignment_after(r.b_offset * input_bytes);
  s.c_alignment = alignment_after(r.c_offset * output_bytes);
  s.m = r.m;
  s.n = r.n;
  s.k = r.k;
  s.lda = r.lda();
  s.ldb = r.ldb();
  s.layout = r.layout;
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
  s.varies_splits = candidate.kernel_template->parameter("SPLIT_K") != nullptr;
  s.varies_grid = candidate.kernel_template->parameter("PERSISTENT") != nullptr;
  s.layouts = candidate.kernel_template->layouts;
  return s;
}

CaseExecutor::CaseExecutor(const Candidate& candidate, const GemmRunner& runner, CUstream stream)
    : candidate_(candidate), runner_(runner), stream_(stream) {}

CaseOutcome CaseExecutor::run(const fuzz::CaseRecord& record) {
  CaseOutcome outcome;
  const TypePair types = candidate_.types;
  const int input_bytes = size_of(types.input), output_bytes = size_of(types.output);
  const GemmShape shape = shape_of(record, input_bytes, output_bytes);
  if (auto why = runner_.refusal(shape)) {
    outcome.refused = true;
    outcome.failure_class = fuzz::FailureClass::not_supported;
    outcome.message = *why;
    return outcome;
  }
  const fuzz::CaseOperands ops = fuzz::materialise(record, types.input, types.output);
  // What the kernel reads: the operands themselves, or their transposes when stored column-major.
  const auto image = [](const fuzz::HostMatrix& logical, Order order, int64_t ld) {
    return order == Order::row ? logical : fuzz::transposed(logical, ld);
  };
  const fuzz::HostMatrix a_image = image(ops.a, record.layout.a, record.lda());
  const fuzz::HostMatrix b_image = image(ops.b, record.layout.b, record.ldb());

  // Operands start `offset` elements into their allocations (misaligned base pointers when odd).
  const size_t a_skip = static_cast<size_t>(record.a_offset * input_bytes);
  const size_t b_skip = static_cast<size_t>(record.b_offset * input_bytes);
  a_.reserve(a_skip + a_image.size_bytes());
  b_.reserve(b_skip + b_image.size_bytes());
  a_.upload(a_image.bytes(), a_image.size_bytes(), a_skip);
  b_.upload(b_image.bytes(), b_image.size_bytes(), b_skip);
  // C sits between two canary bands (the first one widened by C's offset); its row padding (ldc > n) holds
  // what materialise put there (NaN).
  const size_t c_bytes = ops.c.size_bytes();
  const size_t front = kCanaryBytes + static_cast<size_t>(record.c_offset * output_bytes);
  const std::vector<unsigned char> band(front, kCanary);
  c_.reserve(front + c_bytes + kCanaryBytes);
  c_.upload(band.data(), front);
  c_.upload(ops.c.bytes(), c_bytes, front);
  c_.upload(band.data(), kCanaryBytes, front + c_bytes);
  const LaunchOverrides overrides{record.splits, record.grid};
  const int64_t workspace = runner_.workspace_bytes(shape, overrides);
  if (workspace > 0) workspace_.reserve(static_cast<size_t>(workspace));
  // Scratch starts as NaN (all-ones bytes), so a kernel that reads workspace it never wrote shows up.
  const auto poison_workspace = [&] {
    if (workspace > 0)
      check(cuMemsetD8Async(workspace_.get(), 0xFF, static_cast<size_t>(workspace), stream_),
            "cuMemsetD8Async(workspace)");
  };

  DeviceGemm gemm;
  gemm.a = a_.get() + a_skip;
  gemm.b = b_.get() + b_skip;
  gemm.c = c_.get() + front;
  gemm.shape = shape;
  gemm.alpha = static_cast<float>(record.alpha);
  gemm.beta = static_cast<float>(record.beta);
  gemm.overrides = overrides;
  try {
    poison_workspace();
    runner_.run(gemm, workspace_.get(), stream_);
    check(cuStreamSynchronize(stream_), "cuStreamSynchronize after the kernel");
  } catch (const CudaError& e) {
    if (e.poisons_context()) throw;
    outcome.failure_class = fuzz::FailureClass::launch_error;
    outcome.message = e.what();
    return outcome;
  }

  std::vector<unsigned char> before(front), after(kCanaryBytes);
  c_.download(before.data(), front);
  c_.download(after.data(), kCanaryBytes, front + c_bytes);
  for (size_t i = 0; i < front; ++i)
    if (before[i] != kCanary) {
      outcome.failure_class = fuzz::FailureClass::out_of_bounds_write;
      outcome.message =
          "wrote outside C into a canary band (" + std::to_string(front - i) + " bytes before C)";
      return outcome;
    }
  for (size_t i = 0; i < kCanaryBytes; ++i)
    if (after[i] != kCanary) {
      outcome.failure_class = fuzz::FailureClass::out_of_bounds_write;
      outcome.message = "wrote outside C into a canary band (" + std::to_string(i) + " bytes past its end)";
      return outcome;
    }
  fuzz::HostMatrix out(types.output, record.m, record.n, record.ldc());
  c_.download(out.bytes(), c_bytes, front);
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
    // The same launch on the same inputs must give the same bits (no races, no order-dependent reductions).
    if (check_determinism_ && record.m * record.n <= kDeterminismElements) {
      c_.upload(ops.c.bytes(), c_bytes, front);
      poison_workspace();
      runner_.run(gemm, workspace_.get(), stream_);
      check(cuStreamSynchronize(stream_), "cuStreamSynchronize after the second run");
      fuzz::HostMatrix again(types.output, record.m, record.n, record.ldc());
      c_.download(again.bytes(), c_bytes, front);
      if (std::memcmp(again.bytes(), out.bytes(), c_bytes) != 0) {
        int64_t differing = 0;
        for (int64_t i = 0; i < record.m; ++i)
          for (int64_t j = 0; j < record.n; ++j) {
            const double x = out.get(i, j), y = again.get(i, j);
            differing += !(x == y || (std::isnan(x) && std::isnan(y)));
          }
        outcome.failure_class = fuzz::FailureClass::nondeterministic;
        outcome.message = "a second run of the same launch changed " + std::to_string(differing) + " of " +
                          std::to_string(record.m * record.n) + " elements";
        return outcome;
      }
    }
    outcome.passed = true;
    return outcome;
  }
  const Point& p = candidate_.point;
  outcome.failure_class = fuzz::FailureClass::incorrect;
  outcome.subtype =
      fuzz::to_string(fuzz::classify_incorrect(verdict, record.m, record.n, p["BM"], p["BN"], all_zero(out)));
  outcome.message = (exact ? "exact: " : "bounded: ") + verdict.summary();
  return outcome;
}

}  // namespace tunefuzz::device
