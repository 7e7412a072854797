// Runs one fuzz case on the CUDA device and judges it: CUDA's CaseDevice (buffers kept from case to case, the
// loaded candidate's runner, a stream) under the backend-neutral run_case of tuner/device/fuzzing.hpp. A
// fault that poisons the context is rethrown as-is: the caller must give up this process.
#pragma once

#include <optional>
#include <string>

#include "tuner/device/fuzzing.hpp"
#include "runtime/cuda/runner.hpp"

namespace tunefuzz::device {

class CudaCaseDevice final : public RuntimeCaseDevice<DeviceBuffer, CudaError> {
 public:
  CudaCaseDevice(const GemmRunner& runner, CUstream stream) : runner_(runner), stream_(stream) {}
  std::optional<std::string> refusal(const GemmShape& shape) const override { return runner_.refusal(shape); }
  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const override {
    return runner_.workspace_bytes(shape, overrides);
  }
  std::optional<std::string> launch(const CaseLaunch& launch) override;

 private:
  const GemmRunner& runner_;
  CUstream stream_;
};

class CaseExecutor {
 public:
  CaseExecutor(const Candidate& candidate, const GemmRunner& runner, CUstream stream)
      : candidate_(candidate), device_(runner, stream) {}
  CaseOutcome run(const fuzz::CaseRecord& record) {
    return run_case(device_, candidate_, record, check_determinism_);
  }
  /// Run every passing case a second time and require the same bits (on by default).
  void check_determinism(bool check) { check_determinism_ = check; }

 private:
  bool check_determinism_ = true;
  Candidate candidate_;
  CudaCaseDevice device_;
};

}  // namespace tunefuzz::device
