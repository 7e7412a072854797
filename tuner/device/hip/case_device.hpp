// HIP's side of a fuzz case, the counterpart of CudaCaseDevice (tuner/device/case_executor.hpp): buffers kept
// from case to case, a candidate loaded from its code object, a blocking stream, under the backend-neutral
// run_case of tuner/device/fuzzing.hpp, so an AMD GPU is judged exactly as an NVIDIA one. Compiled here,
// never run on an AMD GPU (see README).
#pragma once

#include "tuner/device/fuzzing.hpp"
#include "runtime/hip/gemm_simt_hip.hpp"

namespace tunefuzz::device::hip {

class HipCaseDevice final : public RuntimeCaseDevice<DeviceBuffer, HipError> {
 public:
  HipCaseDevice(const HipGemmRunner& runner, hipStream_t stream) : runner_(runner), stream_(stream) {}
  std::optional<std::string> refusal(const GemmShape& shape) const override { return runner_.refusal(shape); }
  /// The HIP launchers take no scratch: gemm_simt, the one template with a HIP launcher, needs none.
  int64_t workspace_bytes(const GemmShape&, const LaunchOverrides&) const override { return 0; }
  std::optional<std::string> launch(const CaseLaunch& launch) override;
  /// gemm_simt's HIP launcher splits no K (it refuses SPLIT_K > 1) and walks no persistent grid.
  bool takes_overrides() const override { return false; }

 private:
  const HipGemmRunner& runner_;
  hipStream_t stream_;
};

}  // namespace tunefuzz::device::hip
