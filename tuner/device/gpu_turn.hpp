// Time workers that share one GPU (budgets.time_workers > 1) each time their own problem and take turns on
// the device. A worker holds the GPU's turn, an flock on a file the coordinator names per GPU
// (TimeJob::gpu_turns), whenever it has work queued there: uploads, the checks' runs and downloads, timed
// launches, the copy floor. It gives the turn back for its host work (inputs filled, outputs checked), during
// which another worker measures. Timed launches thus never share the card with another worker's work, and
// the host work of several problems overlaps. A worker that dies gives its turn back with its descriptors.
#pragma once

#include <filesystem>
#include <functional>

namespace tunefuzz::device {

class PhaseClock;

/// The GPU's turn file for this process's next turns; empty (the default): alone on the GPU, no turns.
/// `clock`, when given, is charged the waits for a turn (phase `gpu_wait`) until the next call. `settle`,
/// when given, runs before each turn is given back, to wait for the device work the turn queued (a pageable
/// upload returns before its DMA lands); it must not throw.
void use_gpu_turns(const std::filesystem::path& file, PhaseClock* clock = nullptr,
                   std::function<void()> settle = {});

/// Holds the GPU's turn while it lives. Turns nest: only the outermost one waits for the turn and gives it
/// back. One thread of the process takes turns (a time job's).
class GpuTurn {
 public:
  GpuTurn();
  ~GpuTurn();
  GpuTurn(const GpuTurn&) = delete;
  GpuTurn& operator=(const GpuTurn&) = delete;
};

/// Whether this process holds the GPU's turn now (for tests: true while a GpuTurn lives and turns are used).
bool holds_gpu_turn();

}  // namespace tunefuzz::device
