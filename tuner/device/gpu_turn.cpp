#include "tuner/device/gpu_turn.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tuner/common/error.hpp"
#include "tuner/device/fuzzing.hpp"

namespace tunefuzz::device {

namespace {

struct Turns {
  std::filesystem::path file;
  int fd = -1;
  int depth = 0;  // GpuTurns alive
  PhaseClock* clock = nullptr;
  std::function<void()> settle;
};

Turns& turns() {
  static Turns t;
  return t;
}

void lock(int fd, int operation, const std::filesystem::path& file) {
  while (::flock(fd, operation) != 0)
    if (errno != EINTR)
      throw Error(ErrorKind::io, "cannot " + std::string(operation == LOCK_UN ? "give back" : "take") +
                                     " the GPU's turn " + file.string() + ": " + std::strerror(errno));
}

}  // namespace

void use_gpu_turns(const std::filesystem::path& file, PhaseClock* clock, std::function<void()> settle) {
  Turns& t = turns();
  if (t.depth > 0) throw Error(ErrorKind::internal, "the GPU's turn file changed during a turn");
  t.clock = clock;
  t.settle = std::move(settle);
  if (file == t.file) return;
  if (t.fd >= 0) ::close(t.fd);
  t.fd = -1;
  t.file = file;
  if (file.empty()) return;
  t.fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (t.fd < 0) {
    t.file.clear();
    throw Error(ErrorKind::io, "cannot open the GPU's turn file " + file.string() + ": " + std::strerror(errno));
  }
}

GpuTurn::GpuTurn() {
  Turns& t = turns();
  if (t.fd < 0 || t.depth++ > 0) return;
  try {
    if (::flock(t.fd, LOCK_EX | LOCK_NB) == 0) return;
    if (errno != EWOULDBLOCK && errno != EINTR) lock(t.fd, LOCK_EX | LOCK_NB, t.file);  // throws
    // Another worker has the GPU: the wait is charged to its own phase, then the phase goes on.
    const char* phase = t.clock ? t.clock->running() : nullptr;
    if (t.clock) t.clock->to("gpu_wait");
    lock(t.fd, LOCK_EX, t.file);
    if (t.clock) t.clock->to(phase);
  } catch (...) {
    --t.depth;
    throw;
  }
}

GpuTurn::~GpuTurn() {
  Turns& t = turns();
  if (t.fd < 0 || --t.depth > 0) return;
  if (t.settle) t.settle();
  ::flock(t.fd, LOCK_UN);  // cannot fail on a descriptor that holds the lock; closing would release it too
}

bool holds_gpu_turn() {
  const Turns& t = turns();
  return t.fd >= 0 && t.depth > 0;
}

}  // namespace tunefuzz::device
