// The fuzz job on the CUDA device: load the candidate, then the backend-neutral RapidCheck property of
// tuner/device/fuzzing.hpp over CUDA's CaseDevice.
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/device/case_executor.hpp"
#include "tuner/device/jobs.hpp"

namespace tunefuzz::device {

FuzzResult run_fuzz_job(const FuzzJob& job, const std::function<void(const FuzzResult&)>& write_partial) {
  release_timing_setup();  // a serving worker that timed before: those buffers may be gigabytes
  PhaseClock::Seconds setup;
  PhaseClock clock(&setup, "context");
  const DeviceInfo device = query_device();
  Context context;
  Stream stream;
  clock.to("load");
  const Candidate candidate = parse_candidate_id(job.candidate);
  const auto runner = load_candidate(candidate, read_whole_file(job.image));
  clock.to(nullptr);
  CudaCaseDevice case_device(*runner, stream.get());
  FuzzResult result = fuzz_candidate(job, candidate, device.limits.sm_count, case_device, write_partial);
  result.phase_seconds.insert(setup.begin(), setup.end());
  return result;
}

}  // namespace tunefuzz::device
