// Timing on the device the way the figures are reported: warm-up launches first, then each timed launch
// between two CUDA events with the L2 cache flushed before it, so every repeat starts cold; the median of the
// repeats is the figure. The flush is a memset over twice L2's size and then a kernel that reads what it
// wrote (l2_clean_ptx.hpp), so that the timed launch starts with nothing in L2 to write back.
#pragma once

#include <functional>
#include <vector>

#include "runtime/cuda/cuda.hpp"

namespace tunefuzz::device {

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> samples_ms;
  /// (max - min) / median: how noisy the repeats were.
  double spread() const { return median_ms > 0 ? (max_ms - min_ms) / median_ms : 0; }
};

class Timer {
 public:
  /// `l2_bytes`: the device's L2 size; the flush buffer is twice that. The flush is kTimerVersion's
  /// (tuner/worker/protocol.hpp).
  Timer(CUstream stream, int64_t l2_bytes);
  TimingStats time(const std::function<void(CUstream)>& launch, int warmup, int repeats);
  /// Each round times one launch of every implementation in turn (A B C A B C ...), L2 flushed before each;
  /// the statistics are per implementation. Drift of the card over the rounds hits all of them alike.
  /// `warmup` untimed rounds first (0 when the caller warmed every implementation up already).
  std::vector<TimingStats> interleave(const std::vector<std::function<void(CUstream)>>& launches, int rounds,
                                      int warmup = 1);

 private:
  /// Leaves L2 without the timed launch's data and without dirty lines: the memset, then the read.
  void flush(unsigned round);

  CUstream stream_;
  DeviceBuffer flush_;
  Module clean_;
  CUfunction clean_entry_ = nullptr;
  unsigned clean_blocks_ = 0;
};

}  // namespace tunefuzz::device
