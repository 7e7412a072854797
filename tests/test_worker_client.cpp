// Tests of the coordinator's side of a worker (tuner/worker/worker_client): run_worker() classifies every
// way a worker process can end, and its watchdog kills the whole process group of a hung worker in time.
// No GPU is needed: tests/fixtures/fake_worker.sh stands in for tunefuzz-worker (through $TUNEFUZZ_WORKER)
// and ends the way the job's `fake` key asks. The laws: exit 0 is finished; a signal is a crash with that
// signal; exit 4 is a crash without one (poisoned context); exit 3 or no executable is failed_to_start;
// any other exit is an error; a worker past its time limit is hung and leaves no process behind; the
// outcome carries the result the worker wrote in this run (never an older one) and the last progress line.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tuner/common/error.hpp"
#include "tuner/device/fuzzing.hpp"
#include "tuner/device/gpu_turn.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;
using End = WorkerOutcome::End;

const char* to_string(End end) {
  switch (end) {
    case End::finished:
      return "finished";
    case End::error:
      return "error";
    case End::crashed:
      return "crashed";
    case End::hung:
      return "hung";
    case End::failed_to_start:
      return "failed_to_start";
  }
  return "?";
}

/// A fresh directory per test, holding a copy of the fake worker (copied so that a checkout that lost the
/// executable bit still runs it) and pointing $TUNEFUZZ_WORKER at it.
class WorkerClient : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() /
                 ("tunefuzz_test_worker_client_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    worker_ = directory_ / "fake_worker.sh";
    for (const char* script : {"fake_worker.sh", "serve_jobs.sh"}) {
      fs::copy_file(fs::path(TUNEFUZZ_SOURCE_DIR) / "tests" / "fixtures" / script, directory_ / script);
      fs::permissions(directory_ / script, fs::perms::owner_all);
    }
    ::setenv("TUNEFUZZ_WORKER", worker_.c_str(), 1);
  }

  void TearDown() override {
    release_idle_workers();  // serving workers this test left idle
    ::unsetenv("TUNEFUZZ_WORKER");
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  YAML::Node job(const std::string& mode) const {
    YAML::Node node;
    node["kind"] = "probe";
    node["fake"] = mode;
    return node;
  }

  WorkerOutcome run(const YAML::Node& job, double timeout_s = 30, const std::string& name = "job") const {
    return run_worker(job, directory_, name, timeout_s);
  }

  static std::string explain(const WorkerOutcome& outcome) {
    return std::string("end ") + to_string(outcome.end) + ", exit code " + std::to_string(outcome.exit_code) +
           ", signal " + std::to_string(outcome.signal) + ", describe: " + outcome.describe() +
           "\n--- stderr ---\n" + outcome.stderr_tail;
  }

  fs::path directory_;
  fs::path worker_;
};

// True when no process `pid` runs any more: gone, or a zombie waiting for its new parent to reap it.
bool process_is_dead(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Whether `pid` is dead within `tries` looks 20 ms apart.
bool dies_within(pid_t pid, int tries) {
  for (int i = 0; i < tries; ++i) {
    if (process_is_dead(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return process_is_dead(pid);
}

TEST_F(WorkerClient, AWorkerRunsWithOneHardwareQueueUnlessTheCoordinatorsEnvironmentSaysOtherwise) {
  ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  for (const bool reuse : {false, true}) {
    const WorkerOutcome outcome = run_worker(job("environment"), directory_, "default", 30, {}, 0, -1, reuse);
    ASSERT_EQ(outcome.end, End::finished) << explain(outcome);
    EXPECT_EQ(outcome.result["connections"].as<std::string>(), "1") << (reuse ? "serving" : "one job");
  }
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "6", 1);
  const WorkerOutcome outcome = run_worker(job("environment"), directory_, "set", 30, {}, 0, 0);
  ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  ASSERT_EQ(outcome.end, End::finished) << explain(outcome);
  EXPECT_EQ(outcome.result["connections"].as<std::string>(), "6");
}

TEST_F(WorkerClient, ExitZeroIsFinishedAndTheResultIsRead) {
  const WorkerOutcome outcome = run(job("finish"));
  ASSERT_EQ(outcome.end, End::finished) << explain(outcome);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.signal, 0);
  EXPECT_EQ(outcome.describe(), "finished");
  ASSERT_TRUE(outcome.result.IsMap()) << explain(outcome);
  EXPECT_EQ(outcome.result["name"].as<std::string>(), "fake device");
  EXPECT_EQ(outcome.result["m"].as<int>(), 3);
  EXPECT_EQ(outcome.result["cases"].size(), 2u);
  // The worker's standard error lands in the log that stderr_tail reads back.
  EXPECT_NE(outcome.stderr_tail.find("fake worker: mode finish"), std::string::npos) << explain(outcome);
  EXPECT_TRUE(fs::exists(directory_ / "job.job.yaml"));
}

TEST_F(WorkerClient, AHungWorkerIsKilledWithItsWholeProcessGroupInTime) {
  const fs::path pid_file = directory_ / "child.pid";
  YAML::Node hang = job("hang");
  hang["pid_file"] = pid_file.string();
  const double timeout_s = 1.0;
  const auto start = std::chrono::steady_clock::now();
  const WorkerOutcome outcome = run(hang, timeout_s);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  EXPECT_EQ(outcome.end, End::hung) << explain(outcome);
  EXPECT_GE(elapsed, timeout_s);  // (no upper bound on the wall clock: a loaded machine may return late)
  EXPECT_GE(outcome.seconds, timeout_s);
  EXPECT_EQ(outcome.describe().rfind("hung", 0), 0u) << outcome.describe();
  EXPECT_TRUE(outcome.result.IsNull()) << "a hung worker wrote no result";

  // The fake's background child was in the worker's process group: it must be gone too.
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0) << "the fake worker did not record its child's pid in " << pid_file;
  const bool dead = dies_within(child, 50);
  EXPECT_TRUE(dead) << "the worker's child " << child << " survived the watchdog";
  if (!dead) ::kill(child, SIGKILL);  // do not leave it behind when the test fails
}

// A kernel that never returns is a hang as soon as the progress file has said "kernel" for the kernel
// deadline, not at the end of the job's whole budget; host work that is merely slow (a huge case being
// materialised) is not.
TEST_F(WorkerClient, AKernelThatNeverReturnsIsAHangAtTheKernelDeadline) {
  YAML::Node hang = job("kernel_hang");
  hang["progress"] = (directory_ / "job.progress").string();
  const WorkerOutcome outcome = run_worker(hang, directory_, "job", 60, {}, 1.0);
  EXPECT_EQ(outcome.end, End::hung) << explain(outcome);
  EXPECT_TRUE(outcome.kernel_overran)
      << "killed at the job's limit, not the kernel deadline: " << explain(outcome);
  EXPECT_NE(outcome.describe().find("kernel deadline"), std::string::npos) << outcome.describe();
  EXPECT_NE(outcome.describe().find("during: kernel m=7 n=8 k=72"), std::string::npos) << outcome.describe();
}

TEST_F(WorkerClient, SlowHostWorkIsNotAKernelHang) {
  YAML::Node slow = job("host_slow");
  slow["progress"] = (directory_ / "job.progress").string();
  const WorkerOutcome outcome = run_worker(slow, directory_, "job", 60, {}, 1.0);
  EXPECT_EQ(outcome.end, End::finished) << explain(outcome);
  EXPECT_FALSE(outcome.kernel_overran);
}

// Killed at the job's limit: in a kernel that is a hang, in host work (judging a huge case) it is not.
TEST_F(WorkerClient, AKillDuringHostWorkIsNotAKillInAKernel) {
  YAML::Node slow = job("host_slow");
  slow["progress"] = (directory_ / "job.progress").string();
  const WorkerOutcome outcome = run_worker(slow, directory_, "job", 1.0, {}, 30.0);
  EXPECT_EQ(outcome.end, End::hung) << explain(outcome);
  EXPECT_FALSE(outcome.killed_in_kernel()) << explain(outcome);
  std::filesystem::remove(directory_ / "job.progress");
  YAML::Node hang = job("kernel_hang");
  hang["progress"] = (directory_ / "job.progress").string();
  const WorkerOutcome in_kernel = run_worker(hang, directory_, "job", 1.0, {}, 30.0);
  EXPECT_EQ(in_kernel.end, End::hung) << explain(in_kernel);
  EXPECT_FALSE(in_kernel.kernel_overran) << "the job's limit came first";
  EXPECT_TRUE(in_kernel.killed_in_kernel()) << explain(in_kernel);
}

// What `fuzz mutants` and `fuzz replay` put in front of the worker, and what they quote of the tool's output
// (shaped like compute-sanitizer's; the finding is the one synccheck reported for init_in_role on the H200).
TEST(Sanitizer, WrapsTheWorkerAndQuotesTheFirstFinding) {
  EXPECT_EQ(sanitizer_wrapper("synccheck"),
            (std::vector<std::string>{"compute-sanitizer", "--tool", "synccheck", "--error-exitcode", "9",
                                      "--print-limit", "20"}));
  try {
    sanitizer_wrapper("leakcheck");
    ADD_FAILURE() << "an unknown tool was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
    EXPECT_NE(std::string(e.what()).find("--sanitize leakcheck"), std::string::npos) << e.what();
  }
  const std::string synccheck =
      "========= COMPUTE-SANITIZER\n"
      "========= Barrier error detected. Missing init.\n"
      "=========     at 0x1a30 in tf_gemm_rr\n"
      "=========     Saved host backtrace up to driver entry point at error\n"
      "========= ERROR SUMMARY: 1 error\n";
  EXPECT_EQ(sanitizer_report(synccheck), "Barrier error detected. Missing init.");
  EXPECT_EQ(sanitizer_report("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 1 error\n"),
            "ERROR SUMMARY: 1 error");
  EXPECT_EQ(sanitizer_report("========= COMPUTE-SANITIZER\nworker: a message of its own\n"), "");
}

TEST_F(WorkerClient, DeathBySignalIsACrashWithThatSignal) {
  const WorkerOutcome outcome = run(job("segfault"));
  EXPECT_EQ(outcome.end, End::crashed) << explain(outcome);
  EXPECT_EQ(outcome.signal, SIGSEGV);
  EXPECT_NE(outcome.describe().find("crashed (signal 11"), std::string::npos) << outcome.describe();
}

TEST_F(WorkerClient, ExitFourIsACrashWithoutASignal) {
  const WorkerOutcome outcome = run(job("poisoned"));
  EXPECT_EQ(outcome.end, End::crashed) << explain(outcome);
  EXPECT_EQ(outcome.signal, 0);
  EXPECT_EQ(outcome.exit_code, 4);
  EXPECT_NE(outcome.describe().find("poisoned"), std::string::npos) << outcome.describe();
}

TEST_F(WorkerClient, ExitThreeIsFailedToStart) {
  const WorkerOutcome outcome = run(job("no_device"));
  EXPECT_EQ(outcome.end, End::failed_to_start) << explain(outcome);
  EXPECT_EQ(outcome.exit_code, 3);
  EXPECT_EQ(outcome.signal, 0);
}

TEST_F(WorkerClient, ExitOneIsAnErrorAndItsResultIsRead) {
  const WorkerOutcome outcome = run(job("error"));
  ASSERT_EQ(outcome.end, End::error) << explain(outcome);
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.signal, 0);
  ASSERT_TRUE(outcome.result.IsMap() && outcome.result["error"]) << explain(outcome);
  EXPECT_EQ(outcome.result["error"]["kind"].as<std::string>(), "launch");
  EXPECT_EQ(outcome.result["error"]["message"].as<std::string>(), "fake launch failure");
  EXPECT_NE(outcome.describe().find("exit code 1"), std::string::npos) << outcome.describe();
}

TEST_F(WorkerClient, TheLastProgressLineSaysWhatACrashedWorkerWasDoing) {
  const std::string last =
      "case m=3 n=8 k=16 lda_pad=0 ldb_pad=0 ldc_pad=0 alpha=1 beta=0 dist=small_int seed=5";
  YAML::Node crash = job("progress");
  crash["progress"] = (directory_ / "job.progress").string();
  const WorkerOutcome outcome = run(crash);
  EXPECT_EQ(outcome.end, End::crashed) << explain(outcome);
  EXPECT_EQ(outcome.signal, SIGSEGV);
  EXPECT_EQ(outcome.last_progress, last);
  EXPECT_NE(outcome.describe().find("during: " + last), std::string::npos) << outcome.describe();
}

TEST_F(WorkerClient, AResultIsOnlyEverTheOneThisRunWrote) {
  ASSERT_EQ(run(job("finish"), 30, "same").end, End::finished);
  const WorkerOutcome outcome = run(job("segfault"), 30, "same");
  EXPECT_EQ(outcome.end, End::crashed) << explain(outcome);
  EXPECT_TRUE(outcome.result.IsNull()) << "the previous run's result was read back as this run's";
}

TEST_F(WorkerClient, AMissingExecutableFailsToStartNamingThePath) {
  const fs::path missing = directory_ / "no" / "such-worker";
  ::setenv("TUNEFUZZ_WORKER", missing.c_str(), 1);
  EXPECT_EQ(worker_executable(), missing);
  const WorkerOutcome outcome = run(job("finish"));
  EXPECT_EQ(outcome.end, End::failed_to_start) << explain(outcome);
  EXPECT_NE(outcome.stderr_tail.find(missing.string()), std::string::npos) << explain(outcome);
  EXPECT_TRUE(outcome.result.IsNull());
}

}  // namespace
}  // namespace tunefuzz

namespace tunefuzz {
namespace {

// ---- a worker that lives for many jobs (run_worker with reuse) ----
// Each test runs its jobs on a thread of its own: the serving worker belongs to the thread that ran its jobs,
// and when that thread ends it waits idle for the next thread's jobs (start_serving_workers, release).

class ServingWorker : public WorkerClient {
 protected:
  /// Runs `modes` one after another through the calling thread's serving worker, on a new thread.
  std::vector<WorkerOutcome> serve(const std::vector<YAML::Node>& jobs, double timeout_s = 30,
                                   const std::string& name = "job") const {
    std::vector<WorkerOutcome> outcomes;
    std::thread([&] {
      for (size_t i = 0; i < jobs.size(); ++i)
        outcomes.push_back(
            run_worker(jobs[i], directory_, name + std::to_string(i), timeout_s, {}, 0, -1, true));
    }).join();
    return outcomes;
  }
  static pid_t worker_of(const WorkerOutcome& outcome) {
    return outcome.result && outcome.result["worker"] ? outcome.result["worker"].as<pid_t>() : 0;
  }
};

TEST_F(ServingWorker, RunsJobAfterJobInOneProcessThatOutlivesItsThreadForTheNext) {
  const auto outcomes = serve({job("finish"), job("finish"), job("finish")});
  ASSERT_EQ(outcomes.size(), 3u);
  for (const WorkerOutcome& outcome : outcomes) {
    ASSERT_EQ(outcome.end, End::finished) << explain(outcome);
    EXPECT_EQ(outcome.result["name"].as<std::string>(), "fake device");
    // Each job's output lands in its own log, as a worker of one job's does.
    EXPECT_NE(outcome.stderr_tail.find("fake worker: mode finish"), std::string::npos) << explain(outcome);
  }
  const pid_t worker = worker_of(outcomes[0]);
  ASSERT_GT(worker, 0);
  EXPECT_EQ(worker_of(outcomes[1]), worker) << "the second job started a process of its own";
  EXPECT_EQ(worker_of(outcomes[2]), worker);
  // Its thread has ended: the next thread's job runs in it (a stage's pool hands its workers to the next's).
  EXPECT_FALSE(process_is_dead(worker));
  const auto later = serve({job("finish")});
  ASSERT_EQ(later[0].end, End::finished) << explain(later[0]);
  EXPECT_EQ(worker_of(later[0]), worker);
  release_idle_workers();
  const bool dead = dies_within(worker, 100);
  EXPECT_TRUE(dead) << "the serving worker " << worker << " outlived its release";
  if (!dead) ::kill(worker, SIGKILL);
}

TEST_F(ServingWorker, WorkersStartedAheadTakeTheJobsAndOthersAreStartedOnlyWhenNoneIsIdle) {
  const auto serving_logs = [&] {
    int n = 0;
    for (const auto& entry : fs::directory_iterator(directory_))
      n += entry.path().filename().string().starts_with("serving-worker-");
    return n;
  };
  start_serving_workers(-1, 2, directory_);
  EXPECT_EQ(serving_logs(), 2);
  start_serving_workers(-1, 2, directory_);  // two are idle already
  EXPECT_EQ(serving_logs(), 2);
  std::vector<WorkerOutcome> first, second;
  std::thread a([&] { first = serve({job("finish"), job("finish")}, 30, "a"); });
  std::thread b([&] { second = serve({job("finish")}, 30, "b"); });
  a.join();
  b.join();
  for (const WorkerOutcome& outcome : first) ASSERT_EQ(outcome.end, End::finished) << explain(outcome);
  ASSERT_EQ(second[0].end, End::finished) << explain(second[0]);
  EXPECT_EQ(serving_logs(), 2) << "a job started a worker while one started ahead was idle";
  // A worker started under other variables is not handed a job: the job's worker would see them.
  const pid_t before = worker_of(serve({job("finish")})[0]);
  ::setenv("TUNEFUZZ_TEST_ANOTHER_VARIABLE", "1", 1);
  const pid_t other = worker_of(serve({job("finish")})[0]);
  ::unsetenv("TUNEFUZZ_TEST_ANOTHER_VARIABLE");
  EXPECT_NE(other, before);
  EXPECT_EQ(serving_logs(), 3);
  EXPECT_NE(worker_of(serve({job("finish")})[0]), other);
}

TEST_F(ServingWorker, ACrashTakesOnlyItsJobAndTheNextJobGetsAFreshWorker) {
  const auto outcomes = serve({job("finish"), job("segfault"), job("finish")});
  ASSERT_EQ(outcomes.size(), 3u);
  ASSERT_EQ(outcomes[0].end, End::finished) << explain(outcomes[0]);
  EXPECT_EQ(outcomes[1].end, End::crashed) << explain(outcomes[1]);
  EXPECT_EQ(outcomes[1].signal, SIGSEGV) << explain(outcomes[1]);
  ASSERT_EQ(outcomes[2].end, End::finished) << explain(outcomes[2]);
  EXPECT_NE(worker_of(outcomes[2]), worker_of(outcomes[0]));
}

TEST_F(ServingWorker, ExitCodesEndTheJobAsForAWorkerOfOneJob) {
  const auto outcomes = serve({job("poisoned"), job("no_device"), job("error"), job("finish")});
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[0].end, End::crashed) << explain(outcomes[0]);
  EXPECT_EQ(outcomes[0].exit_code, 4);
  EXPECT_EQ(outcomes[1].end, End::failed_to_start) << explain(outcomes[1]);
  EXPECT_EQ(outcomes[2].end, End::error) << explain(outcomes[2]);
  EXPECT_EQ(outcomes[2].result["error"]["message"].as<std::string>(), "fake launch failure");
  EXPECT_EQ(outcomes[3].end, End::finished) << explain(outcomes[3]);
}

TEST_F(ServingWorker, AJobThatFoundAFailureLeavesItsWorkerBehind) {
  const auto outcomes = serve({job("finish"), job("failed"), job("finish")});
  ASSERT_EQ(outcomes.size(), 3u);
  for (const WorkerOutcome& outcome : outcomes) ASSERT_EQ(outcome.end, End::finished) << explain(outcome);
  EXPECT_FALSE(outcomes[1].result["passed"].as<bool>());
  EXPECT_EQ(worker_of(outcomes[1]), worker_of(outcomes[0])) << "the failing job ran in the same worker";
  EXPECT_NE(worker_of(outcomes[2]), worker_of(outcomes[0]))
      << "the next candidate got the failing job's worker";
}

TEST_F(ServingWorker, AHungJobIsKilledWithItsWorkerAndTheNextJobRuns) {
  const fs::path pid_file = directory_ / "child.pid";
  YAML::Node hang = job("hang");
  hang["pid_file"] = pid_file.string();
  const auto outcomes = serve({job("finish"), hang, job("finish")}, 1.0);
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[1].end, End::hung) << explain(outcomes[1]);
  EXPECT_GE(outcomes[1].seconds, 1.0);
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  const bool dead = dies_within(child, 50);
  EXPECT_TRUE(dead) << "the hung job's child " << child << " survived the watchdog";
  if (!dead) ::kill(child, SIGKILL);
  ASSERT_EQ(outcomes[2].end, End::finished) << explain(outcomes[2]);
  EXPECT_NE(worker_of(outcomes[2]), worker_of(outcomes[0]));
}

}  // namespace
}  // namespace tunefuzz

namespace tunefuzz {
namespace {

// ---- the turns time workers take on a shared GPU (tuner/device/gpu_turn.hpp) ----

/// Whether another open file description can take `file`'s lock now (it is free), giving it back at once.
bool free_for_others(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

TEST(GpuTurns, AloneOnTheGpuATurnTakesNothing) {
  device::use_gpu_turns({});
  const device::GpuTurn turn;
  EXPECT_FALSE(device::holds_gpu_turn());
}

TEST(GpuTurns, TheOutermostTurnHoldsTheFileUntilItEnds) {
  const fs::path file = fs::path(::testing::TempDir()) / ("gpu-turns-" + std::to_string(::getpid()));
  device::use_gpu_turns(file);
  {
    const device::GpuTurn outer;
    EXPECT_TRUE(device::holds_gpu_turn());
    EXPECT_FALSE(free_for_others(file));
    {
      const device::GpuTurn inner;  // a check's run inside a timing: no second lock, no deadlock
      EXPECT_FALSE(free_for_others(file));
    }
    EXPECT_TRUE(device::holds_gpu_turn()) << "the inner turn gave back the outer one's";
    EXPECT_FALSE(free_for_others(file));
    EXPECT_THROW(device::use_gpu_turns({}), Error) << "the file cannot change during a turn";
  }
  EXPECT_FALSE(device::holds_gpu_turn());
  EXPECT_TRUE(free_for_others(file));
  device::use_gpu_turns({});
  fs::remove(file);
}

// Before a turn is given back the device finishes what it queued (the worker's settle: cuCtxSynchronize),
// once per outermost turn, while the turn is still held.
TEST(GpuTurns, ATurnSettlesTheDeviceBeforeItIsGivenBack) {
  const fs::path file = fs::path(::testing::TempDir()) / ("gpu-turns-settle-" + std::to_string(::getpid()));
  int settled = 0;
  bool held_while_settling = true;
  device::use_gpu_turns(file, nullptr, [&] {
    ++settled;
    held_while_settling = held_while_settling && !free_for_others(file);
  });
  {
    const device::GpuTurn outer;
    { const device::GpuTurn inner; }
    EXPECT_EQ(settled, 0) << "an inner turn gives nothing back";
  }
  EXPECT_EQ(settled, 1);
  EXPECT_TRUE(held_while_settling);
  device::use_gpu_turns({});
  { const device::GpuTurn alone; }
  EXPECT_EQ(settled, 1) << "alone on the GPU there is no turn to settle";
  fs::remove(file);
}

// A worker whose GPU another worker holds waits for it, and its phase clock goes back to the phase it was in.
TEST(GpuTurns, AWorkerWaitsWhileAnotherHoldsTheTurn) {
  const fs::path file = fs::path(::testing::TempDir()) / ("gpu-turns-wait-" + std::to_string(::getpid()));
  const int held = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);  // the other worker's turn
  int ready[2], got[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(got), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the waiting worker
    ::close(held);   // its own descriptor would hold the lock for it
    device::PhaseClock::Seconds seconds;
    char answer = 'x';
    {
      device::PhaseClock clock(&seconds, "screen");
      device::use_gpu_turns(file, &clock);
      (void)!::write(ready[1], "r", 1);
      {
        const device::GpuTurn turn;
        answer = device::holds_gpu_turn() && clock.running() == std::string("screen") ? 'y' : 'n';
      }
      device::use_gpu_turns({});
    }
    (void)!::write(got[1], &answer, 1);
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(got[1]);
  ::flock(held, LOCK_UN);  // the turn given back: the waiting worker takes it
  ASSERT_EQ(::read(got[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'y') << "the worker did not hold the turn, or its clock stayed in another phase";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(free_for_others(file)) << "the worker kept the turn after its turn ended";
  ::close(held);
  fs::remove(file);
}

}  // namespace
}  // namespace tunefuzz
