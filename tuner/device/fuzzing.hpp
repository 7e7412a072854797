// Fuzzing a loaded candidate, whatever GPU runtime launches it: one case run and judged (run_case) through a
// backend's CaseDevice (CUDA: tuner/device/case_executor.hpp; HIP: tuner/device/hip/case_device.hpp), and the
// fuzz job's RapidCheck property over generated cases (fuzz_candidate). Nothing here calls a GPU runtime, so
// the judging is written once for every backend and host tests drive it through a device of their own.
//
// Judging one case: materialise the record, upload into buffers whose output is pre-filled with NaN
// (beta == 0) and fenced by canary bands, fill the scratch workspace with NaN, launch, download, check the
// canaries and the row padding of C, then ask the oracle, then run it again and require the same bits. A
// fault that poisons the device is rethrown as-is: the caller must give up this process.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "fuzz/case.hpp"
#include "fuzz/generators.hpp"
#include "fuzz/oracle.hpp"
#include "fuzz/triage.hpp"
#include "runtime/templates/kernel_template.hpp"
#include "tuner/campaign/case_space.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz::device {

struct CaseOutcome {
  bool refused = false;  ///< the candidate declined the case (not a failure; the generator should avoid it)
  bool passed = false;
  fuzz::FailureClass failure_class = fuzz::FailureClass::incorrect;
  std::string subtype;
  std::string message;
};

/// The arithmetic the oracle bounds a candidate's output with: fp32 accumulation, or the narrower stage its
/// template declares (KernelTemplate::accumulation).
fuzz::ArithmeticModel arithmetic_model(const Candidate& candidate, Precision output, int64_t k);

/// The device buffers of one case. Each starts 256-byte aligned; operands sit at an offset into theirs.
enum class CaseBuffer { a, b, c, workspace };

/// One launch of the candidate on the case's buffers: A, B and C start these many bytes into theirs.
struct CaseLaunch {
  size_t a_offset = 0, b_offset = 0, c_offset = 0;
  int64_t workspace_bytes = 0;  ///< scratch the launch needs, at the start of the workspace buffer
  GemmShape shape;
  float alpha = 1.0f, beta = 0.0f;
  LaunchOverrides overrides;
};

/// A backend's side of a fuzz case: the loaded candidate, its buffers (kept from case to case), copies and
/// the launch. Copies are synchronous; `launch` returns only when the kernel has finished.
class CaseDevice {
 public:
  virtual ~CaseDevice() = default;
  /// Why the candidate declines this shape, or nullopt.
  virtual std::optional<std::string> refusal(const GemmShape& shape) const = 0;
  /// Scratch bytes a launch of this shape (and these overrides) needs.
  virtual int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const = 0;
  /// Makes `buffer` hold at least `bytes` (its contents are lost when it grows).
  virtual void reserve(CaseBuffer buffer, size_t bytes) = 0;
  virtual void upload(CaseBuffer buffer, const void* host, size_t bytes, size_t offset) = 0;
  virtual void download(CaseBuffer buffer, void* host, size_t bytes, size_t offset) = 0;
  /// Fills the launch's workspace with NaN (all-ones bytes), launches and waits for the kernel. Returns the
  /// error of a launch that failed and left the device usable; throws one that did not (see `poisons`).
  virtual std::optional<std::string> launch(const CaseLaunch& launch) = 0;
  /// True for an error (thrown by any call above) after which this process cannot use the device again.
  virtual bool poisons(const std::exception& error) const = 0;
  /// Whether the launcher takes LaunchOverrides (a split count, a persistent grid) where the template has
  /// them; a device whose launchers do not (HIP's) is fuzzed without them.
  virtual bool takes_overrides() const { return true; }
};

/// What the CaseDevice of every GPU runtime shares: its four buffers, over the runtime's DeviceBuffer
/// (reserve, upload and download at an offset), and the split of the runtime's errors (RuntimeError, with
/// poisons_context()) into launch errors and a lost device.
template <class Buffer, class RuntimeError>
class RuntimeCaseDevice : public CaseDevice {
 public:
  void reserve(CaseBuffer which, size_t bytes) override { buffer(which).reserve(bytes); }
  void upload(CaseBuffer which, const void* host, size_t bytes, size_t offset) override {
    buffer(which).upload(host, bytes, offset);
  }
  void download(CaseBuffer which, void* host, size_t bytes, size_t offset) override {
    buffer(which).download(host, bytes, offset);
  }
  bool poisons(const std::exception& error) const override {
    const auto* runtime = dynamic_cast<const RuntimeError*>(&error);
    return runtime && runtime->poisons_context();
  }

 protected:
  Buffer& buffer(CaseBuffer which) { return buffers_[static_cast<size_t>(which)]; }
  /// Runs `launch_and_wait`; a RuntimeError it throws that leaves the device usable becomes the message
  /// returned, one that does not propagates.
  template <class Launch>
  static std::optional<std::string> launch_error(Launch&& launch_and_wait) {
    try {
      launch_and_wait();
    } catch (const RuntimeError& e) {
      if (e.poisons_context()) throw;
      return std::string(e.what());
    }
    return std::nullopt;
  }

 private:
  std::array<Buffer, 4> buffers_;  ///< by CaseBuffer
};

/// Wall time by phase: `to(name)` ends the running phase (adding its seconds to its name) and starts `name`
/// (`to(nullptr)`: none); the phase running when the clock is destroyed is added then, so early returns are
/// counted too. A clock over no map (nullptr) does nothing.
class PhaseClock {
 public:
  using Seconds = std::map<std::string, double>;
  explicit PhaseClock(Seconds* into, const char* first = nullptr) : into_(into) {
    if (first) to(first);
  }
  ~PhaseClock() { to(nullptr); }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  void to(const char* phase) {
    if (!into_) return;
    const auto now = std::chrono::steady_clock::now();
    if (running_) (*into_)[running_] += std::chrono::duration<double>(now - since_).count();
    running_ = phase;
    since_ = now;
  }
  const char* running() const { return running_; }  ///< the phase being charged, or null

 private:
  Seconds* into_;
  const char* running_ = nullptr;
  std::chrono::steady_clock::time_point since_;
};

/// Runs `record` on `candidate` through `device` and judges it; with `check_determinism`, a passing case is
/// launched a second time and must give the same bits. Errors that poison the device propagate.
/// `on_kernel(true)` is called before each launch and `on_kernel(false)` when it has finished, so a
/// coordinator can tell a kernel that never returns from slow host work (see kKernelLine).
/// `phases`, when given, gains the case's seconds by phase: make (the operands), upload, kernel (each launch
/// and its wait), download (with the canary and padding checks), judge (the oracle).
CaseOutcome run_case(CaseDevice& device, const Candidate& candidate, const fuzz::CaseRecord& record,
                     bool check_determinism = true, const std::function<void(bool)>& on_kernel = {},
                     PhaseClock::Seconds* phases = nullptr);

/// The word a fuzz job's progress line starts with while a kernel is running (`kernel m=... n=...`); the
/// next line (`judge ...` or the next case) means it returned. WorkerOutcome's kernel deadline reads it.
inline constexpr const char* kKernelLine = "kernel";

/// The fuzz job on a candidate loaded into `device` (of a GPU with `sm_count` multiprocessors): one
/// RapidCheck property over generated case records, judged by run_case. The first failure fixes the failure
/// class; while RapidCheck shrinks, a smaller case that fails differently counts as passing, so the shrunk
/// case keeps the class of the original failure. An error that poisons the device ends the process: a
/// `crash` result for the case at hand goes through `write_partial`, then it exits with kExitContextPoisoned.
FuzzResult fuzz_candidate(const FuzzJob& job, const Candidate& candidate, int64_t sm_count,
                          CaseDevice& device, const std::function<void(const FuzzResult&)>& write_partial);

}  // namespace tunefuzz::device
