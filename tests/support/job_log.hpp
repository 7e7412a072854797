// What the whole-campaign tests on the fake worker (tests/fixtures/fake_gpu_worker.sh) share: running a tool
// with its output appended to ROOT/tools.log, and reading the fake worker's job log (FAKE_JOB_LOG) of one run.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/spawn.hpp"

namespace tunefuzz::test {

/// Runs `args`, its output appended to `root`/tools.log; returns its exit code.
inline int run_tool(const std::filesystem::path& root, const std::vector<std::string>& args) {
  return wait_for(spawn_logged(args, root / "tools.log"));
}

/// run_tool with the fake worker's job log in a fresh file `root`/NAME.jobs; its lines go to `jobs`.
inline int run_tool_logged(const std::filesystem::path& root, const std::vector<std::string>& args,
                           const std::string& name, std::vector<std::string>& jobs) {
  const std::filesystem::path log = root / (name + ".jobs");
  std::filesystem::remove(log);
  ::setenv("FAKE_JOB_LOG", log.c_str(), 1);
  const int code = run_tool(root, args);
  ::unsetenv("FAKE_JOB_LOG");
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) jobs.push_back(line);
  return code;
}

/// Everything the tools run by run_tool under `root` printed so far.
inline std::string tools_log(const std::filesystem::path& root) {
  std::ifstream in(root / "tools.log");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Of a job log's lines (`KIND ... TAG`: `fuzz ID gpu=1`, `time PROBLEM rank=0`), the last words by kind.
inline std::map<std::string, std::set<std::string>> last_words_by_kind(const std::vector<std::string>& jobs) {
  std::map<std::string, std::set<std::string>> out;
  for (const std::string& line : jobs) out[line.substr(0, line.find(' '))].insert(line.substr(line.rfind(' ') + 1));
  return out;
}

}  // namespace tunefuzz::test
