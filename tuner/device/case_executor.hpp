// Runs one fuzz case on the device and judges it: materialise the record, upload into buffers whose output is
// pre-filled with NaN (beta == 0) and fenced by canary bands, fill the scratch workspace with NaN, launch,
// download, check the canaries and the row padding of C, then ask the oracle, then run it again and require
// the same bits. A fault that poisons the context is rethrown as-is: the caller must give up this process.
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
  /// Run every passing case a second time and require the same bits (on by default).
  void check_determinism(bool check) { check_determinism_ = check; }

 private:
  bool check_determinism_ = true;
  Candidate candidate_;
  const GemmRunner& runner_;
  CUstream stream_;
  DeviceBuffer a_, b_, c_, workspace_;
};

/// The generator's view of a candidate: the alignment units it requires and its tile edges.
fuzz::CaseSpace case_space_for(const Candidate& candidate, int64_t sm_count);

/// The problem shape a record describes (row-major), with the base alignment its offsets leave.
GemmShape shape_of(const fuzz::CaseRecord& record, int input_bytes, int output_bytes);

}  // namespace tunefuzz::device
