// One problem's inputs on the device and the measurements a time job makes with them: a screen (a few
// timed launches), a verified full timing (one run on fresh C checked against the inputs, then warm-up and
// many timed launches), and a re-timing in turns (A B ... A B ...). The inputs are a function of the job's
// seed, so every round of a problem, each in its own worker process, measures on the same matrices.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/matrix.hpp"
#include "fuzz/oracle.hpp"
#include "runtime/cuda/runner.hpp"
#include "tuner/device/timer.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz::device {

class PhaseClock;

class TimeBench {
 public:
  /// Makes the job's inputs (A and B uniform in [-1, 1), C too when beta != 0) and uploads them. What it
  /// holds depends only on the job's problem, seed, warm-up and repeats (timing_setup_key).
  TimeBench(const TimeJob& job, int64_t l2_bytes, CUstream stream);

  /// A few timed launches (one warm-up): entry status `screened`, or `failed` with the launch error.
  void screen(const GemmRunner& runner, int64_t repeats, TimedEntry& entry);
  /// One launch, waited for: whether it ran (else `entry` is `failed` with the launch error). A screen taken
  /// in turns warms each candidate so, so that a launch that fails or kills the context names its candidate.
  bool warm_up(const GemmRunner& runner, TimedEntry& entry);
  /// Screens taken in turns: `repeats` rounds in which every runner, warmed up already, launches once; each
  /// entry `screened` with its statistics.
  void screen_in_turns(const std::vector<const GemmRunner*>& runners, int64_t repeats,
                       const std::vector<TimedEntry*>& entries);
  /// What a run outside the bound means: a candidate is out (`incorrect`, not timed); the baseline sets the
  /// pace without competing (cuBLAS rounding alpha·AB before adding beta·C can land a few ulps outside an
  /// fp32-accumulation bound), so it is timed anyway and its entry keeps the check's summary.
  enum class OnMismatch { reject, time_anyway };
  /// One run on fresh C checked against the inputs (`incorrect` when it fails, with the oracle's summary):
  /// whether it may be timed. Tiles name the exact samples' boundaries. Where it can be exact (exact_applies
  /// to the kernel's arithmetic over K, and exact_scalars to the problem's alpha and beta), a second run on
  /// integer inputs in [-2, 2] follows, each sampled element asked for the exact value rounded once: on
  /// uniform values the allowance for the accumulation grows with K beyond the values themselves (an
  /// all-zero output is within it for 256×256×262144), on integers it is nil.
  bool verify(const GemmRunner& runner, const fuzz::ArithmeticModel& model, int64_t tile_m, int64_t tile_n,
              TimedEntry& entry, OnMismatch on_mismatch = OnMismatch::reject);
  /// What every check of the problem reuses, made ahead of the first so that its cost can be told apart:
  /// the inputs' projections (prepare_projections), and where a kernel of `model` can be checked exactly,
  /// the integer operands, on the device too, with theirs (prepare_integers).
  void prepare_projections();
  void prepare_integers(const fuzz::ArithmeticModel& model);
  /// `warmup` and `repeats` timed launches: status `timed`, or `failed` with the launch error.
  void time(const GemmRunner& runner, TimedEntry& entry);
  /// `repeats` rounds in which every runner launches once in turn; the statistics per runner.
  std::vector<TimingStats> interleave(const std::vector<const GemmRunner*>& runners, int64_t repeats,
                                      int warmup = 1);
  /// A device-to-device copy of the problem's least traffic (A and B read, C written and read when beta != 0).
  MemoryTraffic copy_floor(int64_t warmup, int64_t repeats);

  const GemmShape& shape() const { return shape_; }
  /// The round's clock: verify charges its launches and downloads to `verify_run`, and the projections and
  /// integer operands it makes at a problem's first check to `projections` and `integers`, each phase it
  /// leaves going back to the one it was called in. Null: nothing is charged.
  void set_clock(PhaseClock* clock) { clock_ = clock; }

 private:
  void reserve_workspace(const GemmRunner& runner);
  /// C as a run starts from: the host's C uploaded when beta != 0, else NaN.
  void reset_c(const fuzz::HostMatrix& c, DeviceBuffer& c_dev);
  /// A failure the context survives marks the entry `failed`; a poisoning fault propagates.
  bool guarded(TimedEntry& entry, const std::function<void()>& step);
  void time_into(const GemmRunner& runner, int64_t warmup, int64_t repeats, TimedEntry& entry);
  /// A timing's statistics in `entry` (median, minimum, maximum, TFLOP/s).
  void record(const TimingStats& stats, TimedEntry& entry) const;
  /// Runs `runner` once on `gemm` (C as reset_c leaves it) and downloads C into out_; false when it failed.
  bool run_once(const GemmRunner& runner, const DeviceGemm& gemm, TimedEntry& entry);
  /// A failed check: `incorrect` (false) under reject, else the summary kept and true.
  static bool judged(const fuzz::Verdict& verdict, const std::string& what, TimedEntry& entry,
                     OnMismatch on_mismatch);

  /// The problem's operands as integers in [-2, 2], for the exact check; made at its first use.
  struct Integers {
    fuzz::HostMatrix a, b, c;
    DeviceBuffer a_dev, b_dev, c_dev;
    DeviceGemm gemm;
    std::optional<fuzz::ProjectedCheck> projection;
  };
  Integers& integers();
  /// Whether verify checks a kernel of `model` exactly on the integer operands.
  bool exact_possible(const fuzz::ArithmeticModel& model) const;

  TimeJob job_;  ///< a copy: a serving worker keeps the bench for the next round of the same problem
  CUstream stream_;
  Timer timer_;
  GemmShape shape_;
  fuzz::HostMatrix a_, b_, c_;
  fuzz::HostMatrix
      out_;  ///< C downloaded for a check, allocated at the first (fresh pages fault on every copy)
  DeviceBuffer a_dev_, b_dev_, c_dev_, workspace_;
  DeviceGemm gemm_;
  std::optional<fuzz::ProjectedCheck> projection_;  ///< the inputs' projections, made at the first check
  std::unique_ptr<Integers> integers_;
  double flops_ = 0;
  PhaseClock* clock_ = nullptr;
};

}  // namespace tunefuzz::device
