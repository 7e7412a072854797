#include "tuner/device/gpu_turn.hpp"

#include <optional>

#include "runtime/backend/kernel_cache.hpp"  // FileLock
#include "tuner/common/error.hpp"
#include "tuner/device/fuzzing.hpp"

namespace tunefuzz::device {

namespace {

struct Turns {
  std::filesystem::path file;
  int depth = 0;  // GpuTurns alive
  PhaseClock* clock = nullptr;
  std::function<void()> settle;
  std::optional<FileLock> held;  // the turn, while the outermost GpuTurn lives
};

Turns& turns() {
  static Turns t;
  return t;
}

}  // namespace

void use_gpu_turns(const std::filesystem::path& file, PhaseClock* clock, std::function<void()> settle) {
  Turns& t = turns();
  if (t.depth > 0) throw Error(ErrorKind::internal, "the GPU's turn file changed during a turn");
  t.file = file;
  t.clock = clock;
  t.settle = std::move(settle);
}

GpuTurn::GpuTurn() {
  Turns& t = turns();
  if (t.file.empty() || t.depth++ > 0) return;
  // The wait for another worker's turn (an instant when none holds it) is charged to gpu_wait, then the phase
  // goes on.
  const char* phase = t.clock ? t.clock->running() : nullptr;
  if (t.clock) t.clock->to("gpu_wait");
  try {
    t.held.emplace(t.file, "GPU's turn file");
  } catch (...) {
    --t.depth;
    if (t.clock) t.clock->to(phase);
    throw;
  }
  if (t.clock) t.clock->to(phase);
}

GpuTurn::~GpuTurn() {
  Turns& t = turns();
  if (t.file.empty() || --t.depth > 0) return;
  if (t.settle) t.settle();
  t.held.reset();  // closing the file gives the turn back
}

bool holds_gpu_turn() {
  return turns().held.has_value();
}

}  // namespace tunefuzz::device
