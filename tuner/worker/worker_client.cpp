// Process handling is written on posix_spawn/waitpid: Boost.Process 1.74 (Debian 12) has known wait_for
// defects when several children run at once (boostorg/process#347, klemens-morgenstern/boost-process#223),
// which is exactly how campaigns run workers.
#include "tuner/worker/worker_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "tuner/common/error.hpp"
#include "tuner/worker/protocol.hpp"

extern char** environ;

namespace tunefuzz {

namespace fs = std::filesystem;

namespace {

std::string tail_of_file(const fs::path& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  in.seekg(static_cast<std::streamoff>(size > bytes ? size - bytes : 0));
  std::string text(std::min(size, bytes), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

std::string last_line(const fs::path& path) {
  std::string text = tail_of_file(path, 4096);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

// Entry `index` of a comma-separated list, or `index` itself when the list is empty or shorter.
std::string visible_entry(const std::string& list, int index) {
  std::istringstream entries(list);
  int at = 0;
  for (std::string entry; std::getline(entries, entry, ',');)
    if (at++ == index) return entry;
  return std::to_string(index);
}

}  // namespace

std::vector<std::string> worker_environment(const std::vector<std::string>& environment, int gpu) {
  if (gpu < 0) return environment;
  std::vector<std::string> out;
  std::map<std::string, std::string> inherited;  // variable → the list the coordinator was shown
  for (const std::string& entry : environment) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "CUDA_VISIBLE_DEVICES" || name == "HIP_VISIBLE_DEVICES")
      inherited[name] = entry.substr(std::min(entry.size(), name.size() + 1));
    else
      out.push_back(entry);
  }
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"})
    out.push_back(std::string(name) + "=" + visible_entry(inherited[name], gpu));
  return out;
}

std::string WorkerOutcome::describe() const {
  std::string out;
  switch (end) {
    case End::finished:
      return "finished";
    case End::error:
      out = "failed (exit code " + std::to_string(exit_code) + ")";
      break;
    case End::crashed:
      out = signal ? "crashed (signal " + std::to_string(signal) + ": " + strsignal(signal) + ")"
                   : "crashed (CUDA context poisoned)";
      break;
    case End::hung:
      out = kernel_overran
                ? "hung: a kernel ran past the " + std::to_string(static_cast<int>(kernel_deadline_s)) +
                      " s kernel deadline (killed after " + std::to_string(static_cast<int>(seconds)) + " s)"
                : "hung: killed after " + std::to_string(static_cast<int>(seconds)) + " s";
      break;
    case End::failed_to_start:
      out = "could not start";
      break;
  }
  if (!last_progress.empty()) out += " during: " + last_progress;
  return out;
}

fs::path worker_executable() {
  if (const char* path = std::getenv("TUNEFUZZ_WORKER"); path && *path) return path;
  return fs::read_symlink("/proc/self/exe").parent_path() / "tunefuzz-worker";
}

WorkerOutcome run_worker(const YAML::Node& job, const fs::path& directory, const std::string& name,
                         double timeout_s, const std::vector<std::string>& wrapper, double kernel_deadline_s,
                         int gpu) {
  const fs::path job_path = directory / (name + ".job.yaml");
  const fs::path result_path = directory / (name + ".result.yaml");
  const fs::path log_path = directory / (name + ".log");
  fs::remove(result_path);
  write_yaml(job_path, job);

  WorkerOutcome outcome;
  const fs::path exe = worker_executable();
  if (!fs::exists(exe)) {
    outcome.stderr_tail = "worker executable not found: " + exe.string();
    return outcome;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // own group: the watchdog kills all of it
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<std::string> args = wrapper;
  args.insert(args.end(), {exe.string(), job_path.string(), result_path.string()});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> variables;
  char** environment = environ;
  std::vector<char*> envp;
  if (gpu >= 0) {  // a worker of one GPU's pool: shown only that GPU
    for (char** entry = environ; *entry; ++entry) variables.emplace_back(*entry);
    variables = worker_environment(variables, gpu);
    for (auto& v : variables) envp.push_back(v.data());
    envp.push_back(nullptr);
    environment = envp.data();
  }
  pid_t pid = 0;
  const auto start = std::chrono::steady_clock::now();
  const int spawned = posix_spawnp(&pid, args.front().c_str(), &actions, &attributes, argv.data(), environment);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    outcome.stderr_tail = "cannot start " + args.front() + ": " + std::strerror(spawned);
    return outcome;
  }

  // The kernel deadline: how long the progress file has said "a kernel is running", checked twice a second.
  const fs::path progress = job["progress"] ? fs::path(job["progress"].as<std::string>()) : fs::path();
  const auto kernel_overran = [&] {
    std::error_code error;
    const auto modified = fs::last_write_time(progress, error);
    if (error) return false;
    const double idle = std::chrono::duration<double>(fs::file_time_type::clock::now() - modified).count();
    return idle > kernel_deadline_s && last_line(progress).rfind("kernel ", 0) == 0;
  };
  auto next_check = start;
  outcome.kernel_deadline_s = kernel_deadline_s;

  int status = 0;
  bool killed = false;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {  // cannot wait for it (e.g. SIGCHLD ignored): kill it and give up
      kill(-pid, SIGKILL);
      outcome.stderr_tail = std::string("waitpid: ") + std::strerror(errno);
      return outcome;
    }
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!killed && outcome.seconds > timeout_s) {
      kill(-pid, SIGKILL);
      killed = true;
    }
    if (!killed && kernel_deadline_s > 0 && !progress.empty() &&
        std::chrono::steady_clock::now() >= next_check) {
      next_check = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      if (kernel_overran()) {
        kill(-pid, SIGKILL);
        killed = true;
        outcome.kernel_overran = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.stderr_tail = tail_of_file(log_path, 4000);
  if (job["progress"]) outcome.last_progress = last_line(job["progress"].as<std::string>());
  if (fs::exists(result_path)) {
    try {
      outcome.result = read_yaml(result_path);
    } catch (const Error&) {
      // a result cut short by the kill: treat as absent
    }
  }
  if (killed) {
    outcome.end = WorkerOutcome::End::hung;
  } else if (WIFSIGNALED(status)) {
    outcome.end = WorkerOutcome::End::crashed;
    outcome.signal = WTERMSIG(status);
  } else {
    outcome.exit_code = WEXITSTATUS(status);
    if (outcome.exit_code == 0)
      outcome.end = WorkerOutcome::End::finished;
    else if (outcome.exit_code == 4)
      outcome.end = WorkerOutcome::End::crashed;
    else if (outcome.exit_code == 127 || outcome.exit_code == 3)
      outcome.end = WorkerOutcome::End::failed_to_start;
    else
      outcome.end = WorkerOutcome::End::error;
  }
  return outcome;
}

std::vector<std::string> sanitizer_wrapper(const std::string& tool) {
  static const std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
  if (std::find(tools.begin(), tools.end(), tool) == tools.end())
    throw Error(ErrorKind::bad_input,
                "--sanitize " + tool + ": expected memcheck, racecheck, synccheck or initcheck");
  // TUNEFUZZ_COMPUTE_SANITIZER names another executable (a test's stand-in that runs the worker as it is).
  const char* program = std::getenv("TUNEFUZZ_COMPUTE_SANITIZER");
  return {program && *program ? program : "compute-sanitizer", "--tool", tool, "--error-exitcode", "9",
          "--print-limit", "20"};
}

std::string sanitizer_report(const std::string& output) {
  static const std::regex finding(R"(=+ +(.*(?:[Ee]rror|[Hh]azard|[Bb]arrier|[Ii]nvalid).*))");
  std::string summary;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, finding)) continue;
    if (line.find("SUMMARY") == std::string::npos) return m[1];
    summary = m[1];
  }
  return summary;
}

}  // namespace tunefuzz
