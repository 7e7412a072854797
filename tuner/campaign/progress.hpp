// Progress of a long stage: done / total, rate and ETA. On a terminal one line is redrawn in place; otherwise
// a plain line is printed at most every few seconds (and at the end), so CI logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace tunefuzz {

class Progress {
 public:
  /// `quiet`: counts, but prints nothing (work done in the background of another stage, whose line it would
  /// break).
  Progress(std::string stage, int64_t total, bool quiet = false);
  /// One more item done; `note` (optional) names it.
  void advance(const std::string& note = {});
  /// Ends the line with a summary.
  void finish(const std::string& summary);

 private:
  void print(bool final_line, const std::string& note);

  std::string stage_;
  int64_t total_;
  int64_t done_ = 0;
  bool terminal_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_, last_print_;
  std::mutex mutex_;
};

}  // namespace tunefuzz
