#include "tuner/device/fuzzing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <rapidcheck.h>

#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/device/progress_log.hpp"

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

CaseOutcome failed(fuzz::FailureClass failure_class, std::string message) {
  CaseOutcome outcome;
  outcome.failure_class = failure_class;
  outcome.message = std::move(message);
  return outcome;
}

}  // namespace

fuzz::ArithmeticModel arithmetic_model(const Candidate& candidate, Precision output, int64_t k) {
  fuzz::ArithmeticModel model{Precision::fp32, output, k};
  if (candidate.kernel_template->accumulation) {
    const Accumulation narrow = candidate.kernel_template->accumulation(candidate.point);
    model.group = narrow.group;
    model.group_unit_roundoff = narrow.group_unit_roundoff;
  }
  return model;
}

CaseOutcome run_case(CaseDevice& device, const Candidate& candidate, const fuzz::CaseRecord& record,
                     bool check_determinism, const std::function<void(bool)>& on_kernel,
                     PhaseClock::Seconds* phases) {
  PhaseClock clock(phases, "make");
  // A launch bracketed by on_kernel(true) / on_kernel(false), even when it fails; the clock then moves on to
  // the download.
  const auto launch_kernel = [&](const CaseLaunch& l) {
    clock.to("kernel");
    if (on_kernel) on_kernel(true);
    std::optional<std::string> error = device.launch(l);
    if (on_kernel) on_kernel(false);
    clock.to("download");
    return error;
  };
  CaseOutcome outcome;
  const TypePair types = candidate.types;
  const int input_bytes = size_of(types.input), output_bytes = size_of(types.output);
  const GemmShape shape = shape_of(record, input_bytes, output_bytes);
  if (auto why = device.refusal(shape)) {
    outcome.refused = true;
    outcome.failure_class = fuzz::FailureClass::not_supported;
    outcome.message = *why;
    return outcome;
  }
  const fuzz::CaseOperands ops = fuzz::materialise(record, types.input, types.output);
  // What the kernel reads: the operands themselves, or their transposes when stored column-major.
  std::optional<fuzz::HostMatrix> a_t, b_t;
  const auto image = [](const fuzz::HostMatrix& logical, Order order, int64_t ld,
                        std::optional<fuzz::HostMatrix>& t) -> const fuzz::HostMatrix& {
    return order == Order::row ? logical : t.emplace(fuzz::transposed(logical, ld));
  };
  const fuzz::HostMatrix& a_image = image(ops.a, record.layout.a, record.lda(), a_t);
  const fuzz::HostMatrix& b_image = image(ops.b, record.layout.b, record.ldb(), b_t);

  // Operands start `offset` elements into their allocations (misaligned base pointers when odd).
  clock.to("upload");
  CaseLaunch launch;
  launch.a_offset = static_cast<size_t>(record.a_offset * input_bytes);
  launch.b_offset = static_cast<size_t>(record.b_offset * input_bytes);
  device.reserve(CaseBuffer::a, launch.a_offset + a_image.size_bytes());
  device.reserve(CaseBuffer::b, launch.b_offset + b_image.size_bytes());
  device.upload(CaseBuffer::a, a_image.bytes(), a_image.size_bytes(), launch.a_offset);
  device.upload(CaseBuffer::b, b_image.bytes(), b_image.size_bytes(), launch.b_offset);
  // C sits between two canary bands (the first one widened by C's offset); its row padding (ldc > n) holds
  // what materialise put there (NaN).
  const size_t c_bytes = ops.c.size_bytes();
  const size_t front = kCanaryBytes + static_cast<size_t>(record.c_offset * output_bytes);
  const std::vector<unsigned char> band(front, kCanary);
  device.reserve(CaseBuffer::c, front + c_bytes + kCanaryBytes);
  device.upload(CaseBuffer::c, band.data(), front, 0);
  device.upload(CaseBuffer::c, ops.c.bytes(), c_bytes, front);
  device.upload(CaseBuffer::c, band.data(), kCanaryBytes, front + c_bytes);
  launch.c_offset = front;
  launch.shape = shape;
  launch.alpha = static_cast<float>(record.alpha);
  launch.beta = static_cast<float>(record.beta);
  launch.overrides = LaunchOverrides{record.splits, record.grid};
  launch.workspace_bytes = device.workspace_bytes(shape, launch.overrides);
  if (launch.workspace_bytes > 0)
    device.reserve(CaseBuffer::workspace, static_cast<size_t>(launch.workspace_bytes));
  if (auto error = launch_kernel(launch)) return failed(fuzz::FailureClass::launch_error, *error);

  std::vector<unsigned char> before(front), after(kCanaryBytes);
  device.download(CaseBuffer::c, before.data(), front, 0);
  device.download(CaseBuffer::c, after.data(), kCanaryBytes, front + c_bytes);
  for (size_t i = 0; i < front; ++i)
    if (before[i] != kCanary)
      return failed(fuzz::FailureClass::out_of_bounds_write,
                    "wrote outside C into a canary band (" + std::to_string(front - i) + " bytes before C)");
  for (size_t i = 0; i < kCanaryBytes; ++i)
    if (after[i] != kCanary)
      return failed(fuzz::FailureClass::out_of_bounds_write,
                    "wrote outside C into a canary band (" + std::to_string(i) + " bytes past its end)");
  fuzz::HostMatrix out(types.output, record.m, record.n, record.ldc());
  device.download(CaseBuffer::c, out.bytes(), c_bytes, front);
  const size_t element = static_cast<size_t>(output_bytes);
  const size_t row_bytes = static_cast<size_t>(record.ldc()) * element;
  const size_t used_bytes = static_cast<size_t>(record.n) * element;
  for (int64_t row = 0; row < record.m && record.ldc_pad > 0; ++row) {
    const size_t offset = static_cast<size_t>(row) * row_bytes + used_bytes;
    if (std::memcmp(out.bytes() + offset, ops.c.bytes() + offset, row_bytes - used_bytes) != 0)
      return failed(fuzz::FailureClass::out_of_bounds_write,
                    "wrote into the row padding of C (row " + std::to_string(row) + ")");
  }

  clock.to("judge");
  fuzz::GemmOperands operands{&ops.a, &ops.b, &ops.c, record.alpha, record.beta};
  const fuzz::ArithmeticModel model = arithmetic_model(candidate, types.output, record.k);
  const OutputTile tile = stated_tile(*candidate.kernel_template, candidate.point);
  fuzz::Verdict verdict;
  const bool exact = fuzz::exact_applies(record.distribution, model);
  if (record.m * record.n * record.k <= kFullReferenceMacs) {
    const fuzz::Reference reference =
        fuzz::compute_reference(operands, exact ? fuzz::ReferenceUse::exact : fuzz::ReferenceUse::bounded);
    verdict = fuzz::check_full(out, reference, model, exact, record.beta == 0.0);
  } else {
    // Too large for a full reference: projections plus exact samples on tile boundaries and the edges, as
    // exact as the full check where the distribution allows it.
    const fuzz::ProjectedCheck projection(operands, 2, record.seed);
    verdict = projection.check(out, model, 2048, tile.rows, tile.cols, record.seed, exact);
  }
  if (!verdict.pass) {
    outcome.failure_class = fuzz::FailureClass::incorrect;
    outcome.subtype = fuzz::to_string(
        fuzz::classify_incorrect(verdict, record.m, record.n, tile.rows, tile.cols, all_zero(out)));
    outcome.message = (exact ? "exact: " : "bounded: ") + verdict.summary();
    return outcome;
  }
  // The same launch on the same inputs must give the same bits (no races, no order-dependent reductions).
  if (check_determinism && record.m * record.n <= kDeterminismElements) {
    clock.to("upload");
    device.upload(CaseBuffer::c, ops.c.bytes(), c_bytes, front);
    if (auto error = launch_kernel(launch))
      return failed(fuzz::FailureClass::launch_error, "the second run: " + *error);
    fuzz::HostMatrix again(types.output, record.m, record.n, record.ldc());
    device.download(CaseBuffer::c, again.bytes(), c_bytes, front);
    if (std::memcmp(again.bytes(), out.bytes(), c_bytes) != 0) {
      int64_t differing = 0;
      for (int64_t i = 0; i < record.m; ++i)
        for (int64_t j = 0; j < record.n; ++j) {
          const double x = out.get(i, j), y = again.get(i, j);
          differing += !(x == y || (std::isnan(x) && std::isnan(y)));
        }
      return failed(fuzz::FailureClass::nondeterministic,
                    "a second run of the same launch changed " + std::to_string(differing) + " of " +
                        std::to_string(record.m * record.n) + " elements");
    }
  }
  outcome.passed = true;
  return outcome;
}

namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

std::string reproduce_string(const rc::detail::Reproduce& reproduce) {
  rc::detail::Configuration config;
  config.reproduce["fuzz"] = reproduce;
  return rc::detail::configToString(config);
}

}  // namespace

FuzzResult fuzz_candidate(const FuzzJob& job, const Candidate& candidate, int64_t sm_count,
                          CaseDevice& device, const std::function<void(const FuzzResult&)>& write_partial) {
  FuzzResult result;
  PhaseClock::Seconds& phases = result.phase_seconds;
  PhaseClock space_clock(&phases, "space");
  fuzz::CaseSpace space = case_space_for(candidate, sm_count);
  if (!device.takes_overrides()) space.varies_splits = space.varies_grid = false;
  space_clock.to(nullptr);
  space.huge_weight = job.huge_weight;
  ProgressLog progress(job.progress);

  std::optional<FuzzFailure> failure;  // set at the first failure, updated by every shrink step taken
  int64_t cases = 0;
  // Shrinking tries some records more than once (a huge shape's shrinks round to the same record, seconds of
  // host work each): from the first failure on, each record's verdict is kept and a repeat is not rerun.
  std::map<std::string, CaseOutcome> tried;
  const auto run = [&](const fuzz::CaseRecord& record, const std::string& line) {
    progress.write((failure ? "shrink " : "case ") + line);
    return run_case(
        device, candidate, record, true,
        [&](bool running) { progress.write(std::string(running ? kKernelLine : "judge") + " " + line); },
        &phases);
  };
  const auto property = [&]() {
    const fuzz::CaseRecord record = *fuzz::gen_case(space);
    if (!failure) {
      ++cases;
      RC_TAG(join(fuzz::case_tags(record, space)));
    }
    const std::string line = fuzz::to_string(record);
    CaseOutcome outcome;
    try {
      const auto seen = tried.find(line);
      outcome = seen != tried.end() ? seen->second : run(record, line);
    } catch (const std::exception& e) {
      if (!device.poisons(e)) throw;
      // Nothing more can run in this process: report the case at hand (unshrunk) and leave.
      FuzzFailure crash;
      crash.failure_class = fuzz::FailureClass::crash;
      crash.message = e.what();
      crash.first_case = failure ? failure->first_case : record;
      crash.shrunk_case = record;
      crash.cases_until_failure = cases;
      result.cases_run = cases;
      result.failure = failure && failure->failure_class != fuzz::FailureClass::crash ? failure : crash;
      write_partial(result);
      std::_Exit(kExitContextPoisoned);
    }
    if (failure || !outcome.passed) tried.emplace(line, outcome);
    if (outcome.refused) RC_DISCARD(outcome.message);
    if (outcome.passed) return;
    if (failure && outcome.failure_class != failure->failure_class) return;  // shrinking keeps the class
    if (!failure) {
      failure = FuzzFailure{};
      failure->failure_class = outcome.failure_class;
      failure->first_case = record;
      failure->cases_until_failure = cases;
    } else {
      ++failure->shrink_steps;
    }
    failure->subtype = outcome.subtype;
    failure->message = outcome.message;
    failure->shrunk_case = record;
    // On record before shrinking goes on: a job killed while shrinking still reports the failure it found.
    result.cases_run = cases;
    result.failure = failure;
    write_partial(result);
    RC_FAIL(outcome.message);
  };

  rc::detail::TestParams params;
  params.seed = job.seed;
  params.maxSuccess = static_cast<int>(job.cases);
  params.maxSize = 100;
  params.maxDiscardRatio = 10;
  rc::detail::TestMetadata metadata;
  metadata.id = "fuzz";
  metadata.description = job.candidate;
  const rc::detail::TestResult outcome = rc::detail::checkTestable(property, metadata, params);

  result.cases_run = cases;
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failed_result;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  const auto count_tags = [&](const rc::detail::Distribution& distribution) {
    for (const auto& [tags, count] : distribution)
      for (const auto& joined : tags) {
        std::istringstream words(
            joined.size() >= 2 && joined.front() == '"' ? joined.substr(1, joined.size() - 2) : joined);
        std::string tag;
        while (words >> tag) result.coverage[tag] += count;
      }
  };
  if (outcome.match(success)) {
    result.passed = true;
    count_tags(success.distribution);
  } else if (outcome.match(failed_result)) {
    if (!failure)
      throw Error(ErrorKind::internal,
                  "RapidCheck failed without a recorded failure: " + failed_result.description);
    failure->reproduce = reproduce_string(failed_result.reproduce);
    result.failure = failure;
  } else if (outcome.match(gave_up)) {
    throw Error(ErrorKind::internal, "fuzzing gave up (too many refused cases): " + gave_up.description);
  } else if (outcome.match(error)) {
    throw Error(ErrorKind::internal, "RapidCheck error: " + error.description);
  }
  return result;
}

}  // namespace tunefuzz::device
