// Runs one fuzz case on the device and judges it: materialise the record, upload into buffers whose output is
// pre-filled with NaN (beta == 0) and fenced by canary bands, launch, download, check the canaries and the
// row padding of C, then ask the oracle. A fault that poisons the context is rethrown as-is: the caller
// must give up this process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fuzz/case.hpp"
#include "fuzz/generators.hpp"
#include "fuzz/triage.hpp"
#include "tuner/device/runner.hpp"

namespace tunefuzz::device {

struct CaseOutcome {
  bool refused = false;  ///< the candidate declined the case (not a failure; the generator should avoid it)
  bool passed = false;
  fuzz::FailureClass failure_class = fuzz::FailureClass::incorrect;
  std::string subtype;
  std::string message;
};

class CaseExecutor {
 public:
  CaseExecutor(const Candidate& candidate, const GemmRunner& runner, CUstream stream);
  CaseOutcome run(const fuzz::CaseRecord& record);
  /// Keep a copy of each run's output (for determinism checks).
  void keep_outputs(bool keep) { keep_output_ = keep; }
  /// The bytes of C (with its row padding) after the last run that got that far (with keep_outputs).
  const std::vector<unsigned char>& last_output() const { return last_output_; }

 private:
  bool keep_output_ = false;
  std::vector<unsigned char> last_output_;
  Candidate candidate_;
  const GemmRunner& runner_;
  CUstream stream_;
  DeviceBuffer a_, b_, c_, workspace_;
};

/// The generator's view of a candidate: the alignment units it requires and its tile edges.
fuzz::CaseSpace case_space_for(const Candidate& candidate, int64_t sm_count);

/// The problem shape a record describes (row-major, default base alignment).
GemmShape shape_of(const fuzz::CaseRecord& record);

}  // namespace tunefuzz::device
