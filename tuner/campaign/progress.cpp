#include "tuner/campaign/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace tunefuzz {

Progress::Progress(std::string stage, int64_t total, bool quiet)
    : stage_(std::move(stage)),
      total_(total),
      terminal_(isatty(STDERR_FILENO)),
      quiet_(quiet),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void Progress::advance(const std::string& note) {
  std::lock_guard lock(mutex_);
  ++done_;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_ || now - last_print_ > std::chrono::seconds(10) || done_ == total_) {
    last_print_ = now;
    print(false, note);
  }
}

void Progress::finish(const std::string& summary) {
  std::lock_guard lock(mutex_);
  print(true, summary);
}

void Progress::print(bool final_line, const std::string& note) {
  if (quiet_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = seconds > 0 ? done_ / seconds : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : 0;
  char line[512];
  if (final_line)
    std::snprintf(line, sizeof line, "[%s] %lld/%lld in %.1f s: %s", stage_.c_str(),
                  static_cast<long long>(done_), static_cast<long long>(total_), seconds, note.c_str());
  else
    std::snprintf(line, sizeof line, "[%s] %lld/%lld  %.2f/s  ETA %.0f s  %s", stage_.c_str(),
                  static_cast<long long>(done_), static_cast<long long>(total_), rate, eta, note.c_str());
  if (terminal_)
    std::fprintf(stderr, "\r\033[K%s%s", line, final_line ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
}

}  // namespace tunefuzz
