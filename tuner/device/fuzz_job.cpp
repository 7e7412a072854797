// The fuzz job: one RapidCheck property over generated case records. The first failure fixes the failure
// class; while RapidCheck shrinks, a smaller case that fails differently counts as passing, so the shrunk
// case keeps the class of the original failure.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <rapidcheck.h>

#include "tuner/backend/kernel_cache.hpp"
#include "tuner/device/case_executor.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/device/progress_log.hpp"

namespace tunefuzz::device {

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

FuzzResult run_fuzz_job(const FuzzJob& job, const std::function<void(const FuzzResult&)>& write_partial) {
  const DeviceInfo device = query_device();
  Context context;
  Stream stream;
  const Candidate candidate = parse_candidate_id(job.candidate);
  const auto runner = load_candidate(candidate, read_whole_file(job.image));
  fuzz::CaseSpace space = case_space_for(candidate, device.limits.sm_count);
  space.huge_weight = job.huge_weight;
  CaseExecutor executor(candidate, *runner, stream.get());
  ProgressLog progress(job.progress);

  FuzzResult result;
  std::optional<FuzzFailure> failure;  // set at the first failure, updated by every shrink step taken
  int64_t cases = 0;
  const auto property = [&]() {
    const fuzz::CaseRecord record = *fuzz::gen_case(space);
    if (!failure) {
      ++cases;
      RC_TAG(join(fuzz::case_tags(record, space)));
    }
    progress.write((failure ? "shrink " : "case ") + fuzz::to_string(record));
    CaseOutcome outcome;
    try {
      outcome = executor.run(record);
    } catch (const CudaError& e) {
      if (!e.poisons_context()) throw;
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
  rc::detail::FailureResult failed;
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
  } else if (outcome.match(failed)) {
    if (!failure)
      throw Error(ErrorKind::internal, "RapidCheck failed without a recorded failure: " + failed.description);
    failure->reproduce = reproduce_string(failed.reproduce);
    result.failure = failure;
  } else if (outcome.match(gave_up)) {
    throw Error(ErrorKind::internal, "fuzzing gave up (too many refused cases): " + gave_up.description);
  } else if (outcome.match(error)) {
    throw Error(ErrorKind::internal, "RapidCheck error: " + error.description);
  }
  return result;
}

}  // namespace tunefuzz::device
