// The jobs a worker process runs on an AMD GPU through the HIP runtime (the CUDA ones:
// tuner/device/jobs.hpp), declared without HIP's headers so the worker can name them in every build. Only the
// probe and fuzzing are written for HIP: timing needs a baseline in the same process (cuBLAS on NVIDIA; there
// is no rocBLAS or hipBLAS one here) and replaying a case (the case job) is CUDA only, so the worker refuses
// those for AMD code objects. Compiled here, never run on an AMD GPU (see README).
#pragma once

#include <exception>
#include <functional>

#include "tuner/worker/protocol.hpp"

namespace tunefuzz::device::hip {

/// HIP device 0 as the probe job reports it; Error{no_device} when there is no usable AMD GPU.
DeviceInfo probe();

/// Fuzzes one candidate compiled by hiprtc (job.image: an AMDGPU code object) on HIP device 0, with the same
/// RapidCheck property and judging as the CUDA fuzz job (device::fuzz_candidate). Throws Error{no_device}
/// when there is no usable AMD GPU; a fault that poisons the device ends the process as there (code 4).
FuzzResult run_fuzz_job(const FuzzJob& job, const std::function<void(const FuzzResult&)>& write_partial);

/// True for a HIP error after which this process cannot use the device again.
bool poisons_context(const std::exception& error);

}  // namespace tunefuzz::device::hip
