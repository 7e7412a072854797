// The case job: replay cases on one candidate, as `fuzz replay` does (one case), or on several, as the
// sanitizer replays do (in one process under compute-sanitizer). The executor runs each launch twice and
// requires the same bits.
#include <fstream>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/device/case_executor.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/device/progress_log.hpp"

namespace tunefuzz::device {

CaseResult run_case_job(const CaseJob& job) {
  release_timing_setup();  // a serving worker that timed before: those buffers may be gigabytes
  Context context;
  Stream stream;
  ProgressLog progress(job.progress);
  CaseResult result;
  result.passed = true;
  for (const CaseSet& set : job.sets) {
    const Candidate candidate = parse_candidate_id(set.candidate);
    const auto runner = load_candidate(candidate, read_whole_file(set.image));
    CaseExecutor executor(candidate, *runner, stream.get());
    for (const fuzz::CaseRecord& record : set.records) {
      progress.write("case " + fuzz::to_string(record));
      // Each executor run launches twice.
      for (int64_t run = 0; run < std::max<int64_t>(1, job.runs / 2); ++run) {
        const CaseOutcome outcome = executor.run(record);
        if (outcome.passed) continue;
        if (outcome.refused) {  // a size this candidate does not take: the next case
          result.refused = true;
          result.message = outcome.message;
          break;
        }
        result.passed = false;
        result.failure_class = fuzz::to_string(outcome.failure_class);
        result.subtype = outcome.subtype;
        result.message = job.sets.size() > 1 ? set.candidate + ": " + outcome.message : outcome.message;
        return result;
      }
    }
  }
  return result;
}

}  // namespace tunefuzz::device
