// The probe and the fuzz job on an AMD GPU: load the hiprtc code object, then the backend-neutral RapidCheck
// property of tuner/device/fuzzing.hpp over HIP's CaseDevice.
#include "tuner/device/hip/jobs.hpp"

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/device/hip/case_device.hpp"

namespace tunefuzz::device::hip {

DeviceInfo probe() {
  return query_device(0);
}

FuzzResult run_fuzz_job(const FuzzJob& job, const std::function<void(const FuzzResult&)>& write_partial) {
  const DeviceInfo device = query_device(0);
  const Device current(0);
  const Stream stream;
  const Candidate candidate = parse_candidate_id(job.candidate);
  const auto runner = load_candidate(candidate, read_whole_file(job.image));
  HipCaseDevice case_device(*runner, stream.get());
  return fuzz_candidate(job, candidate, device.limits.sm_count, case_device, write_partial);
}

bool poisons_context(const std::exception& error) {
  const auto* hip = dynamic_cast<const HipError*>(&error);
  return hip && hip->poisons_context();
}

}  // namespace tunefuzz::device::hip
