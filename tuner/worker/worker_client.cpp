// Process handling is written on posix_spawn/waitpid: Boost.Process 1.74 (Debian 12) has known wait_for
// defects when several children run at once (boostorg/process#347, klemens-morgenstern/boost-process#223),
// which is exactly how campaigns run workers.
#include "tuner/worker/worker_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <string_view>
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

std::vector<std::string> with_worker_defaults(std::vector<std::string> environment) {
  constexpr std::string_view kQueues = "CUDA_DEVICE_MAX_CONNECTIONS=";
  if (std::none_of(environment.begin(), environment.end(),
                   [&](const std::string& entry) { return std::string_view(entry).starts_with(kQueues); }))
    environment.push_back(std::string(kQueues) + "1");
  return environment;
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

namespace {

// The environment of a worker of GPU `gpu` (-1: this process's own).
std::vector<std::string> environment_for(int gpu) {
  std::vector<std::string> variables;
  for (char** entry = environ; *entry; ++entry) variables.emplace_back(*entry);
  variables = with_worker_defaults(std::move(variables));
  return gpu >= 0 ? worker_environment(variables, gpu) : variables;
}

// What a serving worker is started with: the executable and the environment it sees (a worker started under
// other variables, say by a test that set some since, is not handed this job).
std::string serving_key(int gpu, const fs::path& exe) {
  std::string key = exe.string();
  for (const std::string& variable : environment_for(gpu)) key += '\n' + variable;
  return key;
}

// Starts `args` in a process group of its own, its standard output and error going to `log` and, when given,
// its standard input and file descriptor 3 to the two pipe ends. Returns the pid, or 0 and the reason.
pid_t spawn(const std::vector<std::string>& args, int gpu, const fs::path& log, int input, int replies,
            std::string& why) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  if (input >= 0) posix_spawn_file_actions_adddup2(&actions, input, STDIN_FILENO);
  if (replies >= 0) posix_spawn_file_actions_adddup2(&actions, replies, 3);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // own group: the watchdog kills all of it
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<std::string> argument_strings = args;
  std::vector<char*> argv;
  for (auto& a : argument_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> variables = environment_for(gpu);
  std::vector<char*> envp;
  for (auto& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv.front(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    why = "cannot start " + args.front() + ": " + std::strerror(spawned);
    return 0;
  }
  return pid;
}

// How the wait for one job ended: the worker replied that the job is done (a serving worker), it exited
// (`status` from waitpid), or the watchdog killed it (and `status` is from waitpid after the kill).
enum class Waited { replied, exited, killed, lost };

// Waits for worker `pid` to finish its job: for a line on `replies` (a serving worker; -1 for a worker of one
// job) or for its exit, killing its process group after `timeout_s` or once the progress file has said for
// `kernel_deadline_s` that a kernel is running (checked twice a second).
Waited watch(pid_t pid, int replies, const fs::path& progress, double timeout_s, double kernel_deadline_s,
             std::chrono::steady_clock::time_point start, WorkerOutcome& outcome, int& status) {
  const auto kernel_overran = [&] {
    std::error_code error;
    const auto modified = fs::last_write_time(progress, error);
    if (error) return false;
    const double idle = std::chrono::duration<double>(fs::file_time_type::clock::now() - modified).count();
    return idle > kernel_deadline_s && last_line(progress).rfind("kernel ", 0) == 0;
  };
  auto next_check = start;
  outcome.kernel_deadline_s = kernel_deadline_s;
  bool killed = false, closed = false;  // closed: the worker's end of `replies` is gone (it is exiting)
  while (true) {
    if (replies >= 0 && !killed && !closed) {
      pollfd ready{replies, POLLIN, 0};
      if (poll(&ready, 1, 20) > 0) {
        char c = 0;
        ssize_t got = 0;
        while ((got = read(replies, &c, 1)) == 1)  // non-blocking: what is there
          if (c == '\n') return Waited::replied;
        closed = got == 0;
      }
    }
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return killed ? Waited::killed : Waited::exited;
    if (done < 0 && errno != EINTR) {  // cannot wait for it (e.g. SIGCHLD ignored): kill it and give up
      kill(-pid, SIGKILL);
      outcome.stderr_tail = std::string("waitpid: ") + std::strerror(errno);
      return Waited::lost;
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
    if (replies < 0 || killed || closed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The outcome's end from how the wait ended, and what the job left behind: its log's tail, its last progress
// line and its result.
void conclude(WorkerOutcome& outcome, Waited waited, int status, const YAML::Node& job,
              const fs::path& log_path, const fs::path& result_path,
              std::chrono::steady_clock::time_point start) {
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
  if (waited == Waited::replied) {
    outcome.exit_code = 0;
    outcome.end = WorkerOutcome::End::finished;
  } else if (waited == Waited::killed) {
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
}

// A worker that lives for many jobs (`tunefuzz-worker --serve`), kept by the thread that runs them: each job
// is a line on its standard input (job, result and log paths, tab-separated), answered by a line on its
// file descriptor 3 once the result is written. One that ends a job otherwise (an error, a crash, a kill)
// is gone, and so is one whose job found a failure: the next job starts a fresh process, so nothing a
// failing kernel left in the process can reach another candidate's verdict.
class ServingWorker {
 public:
  ServingWorker(int gpu, const fs::path& exe, const fs::path& log) : gpu_(gpu), key_(serving_key(gpu, exe)) {
    int input[2], replies[2];
    if (pipe2(input, O_CLOEXEC) != 0) return;
    if (pipe2(replies, O_CLOEXEC) != 0) {
      close(input[0]);
      close(input[1]);
      return;
    }
    pid_ = spawn({exe.string(), "--serve"}, gpu, log, input[0], replies[1], why_);
    close(input[0]);
    close(replies[1]);
    input_ = input[1];
    replies_ = replies[0];
    fcntl(replies_, F_SETFL, fcntl(replies_, F_GETFL) | O_NONBLOCK);
    if (pid_ == 0) retire();
  }
  ~ServingWorker() { retire(); }
  ServingWorker(const ServingWorker&) = delete;
  ServingWorker& operator=(const ServingWorker&) = delete;

  bool alive() const { return pid_ > 0; }
  int gpu() const { return gpu_; }
  /// What it was started with: the executable and its environment (the GPU it is shown among it).
  const std::string& key() const { return key_; }
  /// Its input closed, so that it exits at its end (retire() then reaps it).
  void close_input() {
    if (input_ >= 0) close(input_);
    input_ = -1;
  }
  const std::string& why() const { return why_; }

  // Hands the worker one job (false: it is gone and never got it).
  bool send(const std::string& line) {
    static std::once_flag ignore_sigpipe;  // a worker gone between jobs: the write fails instead
    std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
    const std::string request = line + "\n";
    if (write(input_, request.data(), request.size()) == static_cast<ssize_t>(request.size())) return true;
    retire();
    return false;
  }

  // Waits for the job sent. The worker is gone afterwards unless the job finished.
  Waited run(const fs::path& progress, double timeout_s, double kernel_deadline_s,
             std::chrono::steady_clock::time_point start, WorkerOutcome& outcome, int& status) {
    const Waited waited =
        watch(pid_, replies_, progress, timeout_s, kernel_deadline_s, start, outcome, status);
    if (waited != Waited::replied) pid_ = 0;  // exited, killed or lost: reaped or abandoned
    return waited;
  }

  // Lets the worker go: its input closed (it exits at the end of its input), then reaped.
  void retire() {
    if (input_ >= 0) close(input_);
    if (replies_ >= 0) close(replies_);
    input_ = replies_ = -1;
    if (pid_ > 0) {
      int status = 0;
      for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (waitpid(pid_, &status, WNOHANG) == 0) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
    }
    pid_ = 0;
  }

 private:
  int gpu_ = -1;
  std::string key_;
  pid_t pid_ = 0;
  int input_ = -1, replies_ = -1;
  std::string why_;
};

// Serving workers no thread is using, by key: a thread takes one that was started as it would start its own
// before it starts another, and gives its own back when it ends. So the stages' pool threads, which end with
// their stage, hand their workers (each holding its CUDA context) to the next stage's, and workers started
// ahead of the jobs (start_serving_workers) are there when the first job comes.
class IdleWorkers {
 public:
  ~IdleWorkers() { release(); }

  std::unique_ptr<ServingWorker> take(const std::string& key) {
    const std::lock_guard lock(mutex_);
    const auto it = idle_.find(key);
    if (it == idle_.end()) return nullptr;
    std::unique_ptr<ServingWorker> worker = std::move(it->second);
    idle_.erase(it);
    return worker;
  }

  void give(std::unique_ptr<ServingWorker> worker) {
    if (!worker || !worker->alive()) return;
    const std::lock_guard lock(mutex_);
    const std::string key = worker->key();
    idle_.emplace(key, std::move(worker));
  }

  size_t count(const std::string& key) const {
    const std::lock_guard lock(mutex_);
    return idle_.count(key);
  }

  // Every idle worker's input closed first, so that they wind down together, then each reaped.
  void release() {
    std::multimap<std::string, std::unique_ptr<ServingWorker>> going;
    {
      const std::lock_guard lock(mutex_);
      going.swap(idle_);
    }
    for (auto& [key, worker] : going) worker->close_input();
    going.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::multimap<std::string, std::unique_ptr<ServingWorker>> idle_;
};

IdleWorkers& idle_workers() {
  static IdleWorkers workers;
  return workers;
}

// The calling thread's serving worker, given to the idle ones when the thread ends.
struct ThreadWorker {
  std::unique_ptr<ServingWorker> worker;
  ~ThreadWorker() { idle_workers().give(std::move(worker)); }
};

fs::path serving_log(const fs::path& directory) {
  static std::atomic<unsigned> started{0};
  return directory /
         ("serving-worker-" + std::to_string(getpid()) + "-" + std::to_string(started++) + ".log");
}

}  // namespace

void start_serving_workers(int gpu, int count, const fs::path& directory) {
  const fs::path exe = worker_executable();
  if (!fs::exists(exe)) return;
  const std::string key = serving_key(gpu, exe);
  for (size_t have = idle_workers().count(key); have < static_cast<size_t>(std::max(0, count)); ++have) {
    auto worker = std::make_unique<ServingWorker>(gpu, exe, serving_log(directory));
    if (!worker->alive()) return;  // a job will say why when it starts one
    idle_workers().give(std::move(worker));
  }
}

void release_idle_workers() {
  idle_workers().release();
}

WorkerOutcome run_worker(const YAML::Node& job, const fs::path& directory, const std::string& name,
                         double timeout_s, const std::vector<std::string>& wrapper, double kernel_deadline_s,
                         int gpu, bool reuse) {
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
  const fs::path progress = job["progress"] ? fs::path(job["progress"].as<std::string>()) : fs::path();
  int status = 0;
  Waited waited = Waited::lost;
  if (reuse && wrapper.empty()) {
    thread_local ThreadWorker held;
    std::unique_ptr<ServingWorker>& serving = held.worker;
    const std::string key = serving_key(gpu, exe);
    if (serving && (!serving->alive() || serving->key() != key)) idle_workers().give(std::move(serving));
    if (!serving) serving = idle_workers().take(key);
    const auto start = std::chrono::steady_clock::now();
    const std::string line = job_path.string() + "\t" + result_path.string() + "\t" + log_path.string();
    // A worker that went away between jobs never got this one: a fresh one does (once).
    for (int attempt = 0; attempt < 2 && !(serving && serving->send(line)); ++attempt) {
      serving = std::make_unique<ServingWorker>(gpu, exe, serving_log(directory));
      if (!serving->alive()) {
        outcome.stderr_tail = serving->why();
        serving.reset();
        return outcome;
      }
    }
    if (!serving) return outcome;
    waited = serving->run(progress, timeout_s, kernel_deadline_s, start, outcome, status);
    if (waited == Waited::lost) return outcome;
    conclude(outcome, waited, status, job, log_path, result_path, start);
    // A job that found a failure leaves its process: the next candidate gets a fresh one.
    if (!serving->alive() ||
        (outcome.result && outcome.result["passed"] && !outcome.result["passed"].as<bool>()))
      serving.reset();
    return outcome;
  }
  std::vector<std::string> args = wrapper;
  args.insert(args.end(), {exe.string(), job_path.string(), result_path.string()});
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawn(args, gpu, log_path, -1, -1, outcome.stderr_tail);
  if (pid == 0) return outcome;
  waited = watch(pid, -1, progress, timeout_s, kernel_deadline_s, start, outcome, status);
  if (waited == Waited::lost) return outcome;
  conclude(outcome, waited, status, job, log_path, result_path, start);
  return outcome;
}

std::vector<std::string> sanitizer_wrapper(const std::string& tool) {
  static const std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
  if (std::find(tools.begin(), tools.end(), tool) == tools.end())
    throw Error(ErrorKind::bad_input,
                "--sanitize " + tool + ": expected memcheck, racecheck, synccheck or initcheck");
  // TUNEFUZZ_COMPUTE_SANITIZER names another executable (a test's stand-in that runs the worker as it is).
  const char* program = std::getenv("TUNEFUZZ_COMPUTE_SANITIZER");
  return {program && *program ? program : "compute-sanitizer",
          "--tool",
          tool,
          "--error-exitcode",
          "9",
          "--print-limit",
          "20"};
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
