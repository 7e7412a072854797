// The case job: replay one case on one candidate, as `fuzz replay` does (optionally under compute-sanitizer).
// The executor runs each launch twice and requires the same bits.
#include <fstream>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/device/case_executor.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/device/progress_log.hpp"

namespace tunefuzz::device {

CaseResult run_case_job(const CaseJob& job) {
  Context context;
  Stream stream;
  const Candidate candidate = parse_candidate_id(job.candidate);
  const auto runner = load_candidate(candidate, read_whole_file(job.image));
  CaseExecutor executor(candidate, *runner, stream.get());
  ProgressLog(job.progress).write("case " + fuzz::to_string(job.record));
  CaseResult result;
  for (int64_t run = 0; run < std::max<int64_t>(1, job.runs / 2);
       ++run) {  // each executor run launches twice
    const CaseOutcome outcome = executor.run(job.record);
    result.refused = outcome.refused;
    result.passed = outcome.passed;
    if (outcome.passed) continue;
    result.failure_class = fuzz::to_string(outcome.failure_class);
    result.subtype = outcome.subtype;
    result.message = outcome.message;
    break;
  }
  return result;
}

}  // namespace tunefuzz::device
