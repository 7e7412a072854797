// The case job: replay one case on one candidate, as `fuzz replay` does (optionally under compute-sanitizer),
// and check that a second run gives the same bits.
#include <fstream>

#include "tuner/backend/kernel_cache.hpp"
#include "tuner/device/case_executor.hpp"
#include "tuner/device/jobs.hpp"

namespace tunefuzz::device {

CaseResult run_case_job(const CaseJob& job) {
  Context context;
  Stream stream;
  const Candidate candidate = parse_candidate_id(job.candidate);
  const auto runner = load_candidate(candidate, read_whole_file(job.image));
  CaseExecutor executor(candidate, *runner, stream.get());
  executor.keep_outputs(true);
  std::ofstream progress(job.progress, std::ios::app);
  progress << "case " << fuzz::to_string(job.record) << std::endl;
  CaseResult result;
  const CaseOutcome first = executor.run(job.record);
  result.refused = first.refused;
  result.passed = first.passed;
  if (!first.passed) {
    result.failure_class = fuzz::to_string(first.failure_class);
    result.subtype = first.subtype;
    result.message = first.message;
    return result;
  }
  const std::vector<unsigned char> reference = executor.last_output();
  for (int64_t run = 1; run < job.runs; ++run) {
    const CaseOutcome again = executor.run(job.record);
    if (!again.passed || executor.last_output() != reference) {
      result.passed = false;
      result.failure_class = fuzz::to_string(fuzz::FailureClass::nondeterministic);
      result.message = "run " + std::to_string(run + 1) + " of the same case gave different bits" +
                       (again.passed ? std::string() : ": " + again.message);
      return result;
    }
  }
  return result;
}

}  // namespace tunefuzz::device
