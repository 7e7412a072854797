// The progress file a worker appends to before each launch, one line at a time and flushed, so a
// coordinator that finds the worker dead or hung knows what it was doing (WorkerOutcome::last_progress).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace tunefuzz::device {

class ProgressLog {
 public:
  explicit ProgressLog(const std::filesystem::path& path) : out_(path, std::ios::app) {}
  void write(const std::string& line) { out_ << line << std::endl; }  // endl flushes

 private:
  std::ofstream out_;
};

}  // namespace tunefuzz::device
