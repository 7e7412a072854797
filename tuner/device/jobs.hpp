// The jobs a worker process runs on the device (see tuner/worker/protocol.hpp for their messages).
#pragma once

#include <functional>

#include "tuner/worker/protocol.hpp"

namespace tunefuzz::device {

/// Fuzzes one candidate with RapidCheck. A fault that poisons the context ends the process: the job writes
/// a `crash` result for the case at hand through `write_partial` and exits with code 4.
FuzzResult run_fuzz_job(const FuzzJob& job, const std::function<void(const FuzzResult&)>& write_partial);

/// Verifies and times every candidate of the job and cuBLAS on one problem. The result so far is written
/// through `write_partial` after each entry; a fault that poisons the context ends the process (code 4).
TimeResult run_time_job(const TimeJob& job, const std::function<void(const TimeResult&)>& write_partial);

/// Frees what run_time_job keeps for the next round of the problem it timed last (its inputs on the host and
/// the device, the checks' projections, cuBLAS's handle): a serving worker that goes on to other jobs, which
/// may need the memory for a huge case, lets it go first.
void release_timing_setup();

/// Runs one case (job.runs launches in pairs): judged by the oracle, and each pair must agree bit for bit
/// (else the failure class is `nondeterministic`).
CaseResult run_case_job(const CaseJob& job);

/// Exit code of a worker whose CUDA context was poisoned mid-job.
constexpr int kExitContextPoisoned = 4;

}  // namespace tunefuzz::device
