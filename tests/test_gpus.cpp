// Laws of one campaign over several GPUs of a host (`--gpus`), on whole `tune run` and `fuzz run` campaigns
// of configs/smoke.yaml. No GPU: the worker is tests/fixtures/fake_gpu_worker.sh pretending to have the cards
// FAKE_GPUS names (each worker, shown one through CUDA_VISIBLE_DEVICES, sees that one alone), and its job log
// says which card each job ran on. Timings are a function of the candidate id, so tables compare exactly.
//  - with --gpus 0,1 on two cards of one model the table is the one-GPU table, each row saying which card
//    timed it; every job ran on a chosen card, and both cards got work;
//  - cards of two models are refused before anything is written; a bad --gpus value is a usage error
//    (exit 2) naming the flag, before anything is compiled.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fake_gpu.hpp"
#include "tests/support/job_log.hpp"
#include "tuner/campaign/gpus.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/common/error.hpp"
#include "tuner/worker/worker_client.hpp"

namespace {

namespace fs = std::filesystem;
using tunefuzz::Error;
using tunefuzz::parse_gpu_choice;

const std::string kTune = TUNEFUZZ_BINARY_DIR "/bin/tune";
const std::string kFuzz = TUNEFUZZ_BINARY_DIR "/bin/fuzz";
const std::string kConfig = TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml";
const std::string kH100 = "NVIDIA H100 80GB HBM3";

// ---- the pure parts: the flag's grammar, the worker's environment ----

TEST(GpuChoice, AllOrDistinctIndicesAndNothingElse) {
  EXPECT_TRUE(parse_gpu_choice("all").all);
  EXPECT_EQ(parse_gpu_choice("0,2,3").indices, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(parse_gpu_choice("7").indices, (std::vector<int>{7}));
  for (const std::string bad :
       {"", ",", "0,", ",1", "0,,1", "-1", "+1", "x", "0,x", "1.5", "0,0", "ALL", "1024", " 1", "0 ,1"}) {
    SCOPED_TRACE("--gpus '" + bad + "'");
    try {
      parse_gpu_choice(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), tunefuzz::ErrorKind::bad_input);
      EXPECT_NE(e.message().find("--gpus " + bad + ":"), std::string::npos) << e.message();
    }
  }
}

TEST(WorkerEnvironment, ShowsTheWorkerOnlyItsGpuCountedAmongThoseTheCoordinatorSees) {
  using tunefuzz::worker_environment;
  const std::vector<std::string> plain = {"PATH=/bin", "HOME=/root"};
  EXPECT_EQ(worker_environment(plain, -1), plain);
  EXPECT_EQ(worker_environment(plain, 2),
            (std::vector<std::string>{"PATH=/bin", "HOME=/root", "CUDA_VISIBLE_DEVICES=2",
                                      "HIP_VISIBLE_DEVICES=2"}));
  // Under CUDA_VISIBLE_DEVICES=5,7 the coordinator's GPU 1 is the host's 7.
  const std::vector<std::string> narrowed = {"CUDA_VISIBLE_DEVICES=5,7", "PATH=/bin"};
  EXPECT_EQ(worker_environment(narrowed, 1),
            (std::vector<std::string>{"PATH=/bin", "CUDA_VISIBLE_DEVICES=7", "HIP_VISIBLE_DEVICES=1"}));
}

TEST(WorkerEnvironment, WorkersGetOneHardwareQueueUnlessTheCoordinatorsEnvironmentSetsIt) {
  using tunefuzz::with_worker_defaults;
  EXPECT_EQ(with_worker_defaults({"PATH=/bin"}),
            (std::vector<std::string>{"PATH=/bin", "CUDA_DEVICE_MAX_CONNECTIONS=1"}));
  EXPECT_EQ(with_worker_defaults({"CUDA_DEVICE_MAX_CONNECTIONS=8", "PATH=/bin"}),
            (std::vector<std::string>{"CUDA_DEVICE_MAX_CONNECTIONS=8", "PATH=/bin"}));
  // A variable whose name only starts the same is another variable.
  EXPECT_EQ(with_worker_defaults({"CUDA_DEVICE_MAX_CONNECTIONS_X=8"}),
            (std::vector<std::string>{"CUDA_DEVICE_MAX_CONNECTIONS_X=8", "CUDA_DEVICE_MAX_CONNECTIONS=1"}));
}

TEST(WorkerHostThreads, TheNodesThreadsAreSharedAmongTheWorkersRunningOnIt) {
  using tunefuzz::worker_host_threads;
  ::unsetenv("TUNEFUZZ_HOST_THREADS");
  EXPECT_EQ(worker_host_threads(64, 4, 1), 16);  // one pool: at most 16 each
  EXPECT_EQ(worker_host_threads(64, 4, 4), 4);   // four pools of four on 64 threads
  EXPECT_EQ(worker_host_threads(32, 4, 2), 4);
  EXPECT_EQ(worker_host_threads(16, 4, 0), 4);   // no --gpus: one pool
  EXPECT_EQ(worker_host_threads(2, 4, 1), 1);    // never below one
  EXPECT_EQ(worker_host_threads(256, 1, 1), 16); // never above sixteen
  ::setenv("TUNEFUZZ_HOST_THREADS", "3", 1);     // the operator's override
  EXPECT_EQ(worker_host_threads(64, 4, 4), 3);
  ::setenv("TUNEFUZZ_HOST_THREADS", "0", 1);     // 0: the worker's own default
  EXPECT_EQ(worker_host_threads(64, 4, 4), 0);
  ::unsetenv("TUNEFUZZ_HOST_THREADS");
}

// ---- whole campaigns on fake cards ----

class Gpus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tunefuzz::test::install_fake_gpu("gpus", "0.2");
    ::unsetenv("CUDA_VISIBLE_DEVICES");  // the coordinator sees every fake card
    ::unsetenv("HIP_VISIBLE_DEVICES");
    ::setenv("FAKE_GPUS", (kH100 + "," + kH100).c_str(), 1);
    ASSERT_EQ(run({kTune, "compile", kConfig}), 0);  // warm the kernel cache once
    // The one-GPU table: no --gpus, the workers see what the coordinator sees, as always.
    ASSERT_EQ(run({kTune, "run", kConfig, "--no-store", "-o", (root_ / "one" / "smoke.yaml").string()}), 0);
    reference_ = YAML::LoadFile((root_ / "one" / "smoke.yaml").string())["problems"];
  }
  static void TearDownTestSuite() {
    ::unsetenv("FAKE_GPUS");
    ::unsetenv("FAKE_JOB_LOG");
    tunefuzz::test::remove_fake_gpu(root_);
  }

  static int run(const std::vector<std::string>& args) { return tunefuzz::test::run_tool(root_, args); }

  /// Runs `args` with its job log in a fresh file; returns the exit code and the log's lines in `jobs`.
  static int run_logged(const std::vector<std::string>& args, const std::string& name,
                        std::vector<std::string>& jobs) {
    return tunefuzz::test::run_tool_logged(root_, args, name, jobs);
  }

  /// The tools' output so far (every campaign of the suite appends to it).
  static std::string tools_log() { return tunefuzz::test::tools_log(root_); }

  /// How many job lines ran on each card (`gpu=N` at each line's end), by kind (`fuzz`, `time`).
  static std::map<std::string, std::set<std::string>> cards_by_kind(const std::vector<std::string>& jobs) {
    return tunefuzz::test::last_words_by_kind(jobs);
  }

  /// The host threads each job of `kind` under `work` was given (-1 for a job that names none).
  static std::vector<int> host_threads_of(const fs::path& work, const std::string& kind) {
    std::vector<int> shares;
    for (const auto& entry : fs::recursive_directory_iterator(work)) {
      if (!entry.path().string().ends_with(".job.yaml")) continue;
      const YAML::Node job = YAML::LoadFile(entry.path().string());
      if (job["kind"].as<std::string>() == kind)
        shares.push_back(job["host_threads"] ? job["host_threads"].as<int>() : -1);
    }
    return shares;
  }

  static inline fs::path root_;
  static inline YAML::Node reference_;
};

TEST_F(Gpus, TwoCardsOfOneModelGiveTheOneGpuTableWithEachRowsCard) {
  const fs::path table = root_ / "two" / "smoke.yaml";
  std::vector<std::string> jobs;
  ASSERT_EQ(
      run_logged({kTune, "run", kConfig, "--no-store", "--gpus", "0,1", "-o", table.string()}, "two", jobs),
      0)
      << tools_log();
  const YAML::Node rows = YAML::LoadFile(table.string())["problems"];
  ASSERT_EQ(rows.size(), reference_.size());
  std::set<std::string> timing_cards;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string problem = rows[i]["name"].as<std::string>();
    SCOPED_TRACE(problem);
    const YAML::Node on = rows[i]["timed_on"];
    ASSERT_TRUE(on) << "the row does not say which card timed it";
    const int index = on["index"].as<int>();
    EXPECT_TRUE(index == 0 || index == 1);
    EXPECT_EQ(on["name"].as<std::string>(), kH100);
    EXPECT_EQ(on["uuid"].as<std::string>(), "GPU-fake-" + std::to_string(index));
    // The row's candidates and its baseline were timed by a worker of that card.
    EXPECT_NE(std::find(jobs.begin(), jobs.end(), "time " + problem + " gpu=" + std::to_string(index)),
              jobs.end());
    timing_cards.insert(std::to_string(index));
    // Apart from the card, the row is the one-GPU campaign's: same winner, same evidence.
    YAML::Node row = YAML::Clone(rows[i]);
    row.remove("timed_on");
    EXPECT_EQ(YAML::Dump(row), YAML::Dump(reference_[i]));
    EXPECT_EQ(rows[i]["winner"]["id"].as<std::string>(), reference_[i]["winner"]["id"].as<std::string>());
  }
  // Every job ran on one chosen card, and both cards had fuzz jobs and timings.
  const auto cards = cards_by_kind(jobs);
  EXPECT_EQ(cards.at("fuzz"), (std::set<std::string>{"gpu=0", "gpu=1"}));
  EXPECT_EQ(cards.at("time"), (std::set<std::string>{"gpu=0", "gpu=1"}));
  EXPECT_EQ(timing_cards, (std::set<std::string>{"0", "1"}));
  // The serving workers were started for each card while the candidates compiled, and every stage after
  // handed them on (the fuzz stage, the timing, the confirmation): no stage started more than they were.
  int serving = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(table.string() + ".work")))
    serving += entry.path().filename().string().starts_with("serving-worker-");
  const int per_card = YAML::LoadFile(kConfig)["budgets"]["fuzz_workers"].as<int>();
  EXPECT_EQ(serving, 2 * per_card);
  // Those workers come to the timing from fuzz jobs with a fuzz worker's share of the host's threads; each
  // time job carries its own, the two cards' timing workers sharing the host (one problem per card at once).
  const std::vector<int> shares = host_threads_of(fs::path(table.string() + ".work"), "time");
  EXPECT_FALSE(shares.empty());
  for (const int share : shares)
    EXPECT_EQ(share, tunefuzz::worker_host_threads(std::thread::hardware_concurrency(), 1, 2));
}

// Three problems timed at once on one card: each by its own worker, the workers taking turns on it (never two
// at once), and the table the one-worker campaign's.
TEST_F(Gpus, TimeWorkersShareOneCardInTurnsAndGiveTheOneWorkerTable) {
  const fs::path table = root_ / "turns" / "smoke.yaml", turn_log = root_ / "turns.log",
                 overlap = root_ / "overlap";
  ::setenv("FAKE_TURN_LOG", turn_log.c_str(), 1);
  ::setenv("FAKE_OVERLAP_DIR", overlap.c_str(), 1);
  std::vector<std::string> jobs;
  const int rc = run_logged(
      {kTune, "run", kConfig, "--no-store", "--time-workers", "3", "-o", table.string()}, "turns", jobs);
  ::unsetenv("FAKE_TURN_LOG");
  ::unsetenv("FAKE_OVERLAP_DIR");
  ASSERT_EQ(rc, 0) << tools_log();
  const YAML::Node rows = YAML::LoadFile(table.string())["problems"];
  ASSERT_EQ(rows.size(), reference_.size());
  ASSERT_GE(rows.size(), 2u) << "the config needs two problems to time at once";
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(YAML::Dump(rows[i]), YAML::Dump(reference_[i]));
  // Problems were in flight at once: the first problem's first job saw another problem's start.
  std::ifstream overlaps(overlap.string() + ".log");
  std::string first;
  ASSERT_TRUE(std::getline(overlaps, first));
  EXPECT_EQ(first, "overlap") << "one problem at a time";
  // Every time job named the card's turn file and its share of the host; the turns never overlapped.
  const fs::path work(table.string() + ".work");
  int time_jobs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(work)) {
    if (!entry.path().string().ends_with(".job.yaml")) continue;
    const YAML::Node job = YAML::LoadFile(entry.path().string());
    if (job["kind"].as<std::string>() != "time") continue;
    ++time_jobs;
    EXPECT_EQ(job["gpu_turns"].as<std::string>(""), (work / "gpu-turns-0").string());
    EXPECT_EQ(job["host_threads"].as<int>(-1),
              tunefuzz::worker_host_threads(std::thread::hardware_concurrency(), 3, 1));
  }
  std::ifstream turns(turn_log);
  std::string line, holder;
  int taken = 0;
  while (std::getline(turns, line)) {
    if (line.starts_with("in ")) {
      EXPECT_TRUE(holder.empty()) << line << " while " << holder << " held the turn";
      holder = line.substr(3);
      ++taken;
    } else {
      EXPECT_EQ(line, "out " + holder);
      holder.clear();
    }
  }
  EXPECT_TRUE(holder.empty());
  EXPECT_GT(time_jobs, 0);
  EXPECT_EQ(taken, time_jobs) << "each time job takes one turn in the fake worker";
}

TEST_F(Gpus, WithoutTheFlagTheRowsNameNoCardAndWorkersSeeEveryCard) {
  for (const YAML::Node& row : reference_) EXPECT_FALSE(row["timed_on"]) << row["name"];
  std::vector<std::string> jobs;
  const fs::path table = root_ / "plain" / "smoke.yaml";
  ASSERT_EQ(run_logged({kTune, "run", kConfig, "--no-store", "-o", table.string()}, "plain", jobs), 0);
  ASSERT_FALSE(jobs.empty());
  for (const std::string& line : jobs) EXPECT_TRUE(line.ends_with(" gpu=all")) << line;
}

TEST_F(Gpus, FuzzRunSpreadsItsJobsOverEveryCardOfAll) {
  std::vector<std::string> jobs;
  const fs::path report = root_ / "fuzz" / "report.yaml";
  ASSERT_EQ(run_logged({kFuzz, "run", kConfig, "--gpus", "all", "--rounds", "1", "--budget", "1h",
                        "--work-dir", (root_ / "fuzz").string(), "-o", report.string()},
                       "fuzz", jobs),
            0)
      << tools_log();
  EXPECT_EQ(cards_by_kind(jobs).at("fuzz"), (std::set<std::string>{"gpu=0", "gpu=1"}));
  // Each fuzz job was given its share of this host's threads: two pools of four workers share them.
  const std::vector<int> shares = host_threads_of(root_ / "fuzz", "fuzz");
  EXPECT_FALSE(shares.empty());
  for (const int share : shares)
    EXPECT_EQ(share, tunefuzz::worker_host_threads(std::thread::hardware_concurrency(), 4, 2));
}

TEST_F(Gpus, CardsOfTwoModelsAreRefusedBeforeAnythingIsWritten) {
  ::setenv("FAKE_GPUS", (kH100 + ",NVIDIA H100 PCIe").c_str(), 1);
  const fs::path table = root_ / "mixed" / "smoke.yaml";
  const int tune = run({kTune, "run", kConfig, "--no-store", "--gpus", "all", "-o", table.string()});
  const int fuzz =
      run({kFuzz, "run", kConfig, "--gpus", "0,1", "--rounds", "1", "--work-dir",
           (root_ / "mixed-fuzz").string(), "-o", (root_ / "mixed-fuzz" / "report.yaml").string()});
  ::setenv("FAKE_GPUS", (kH100 + "," + kH100).c_str(), 1);
  EXPECT_EQ(tune, 2);
  EXPECT_EQ(fuzz, 2);
  EXPECT_FALSE(fs::exists(table));
  EXPECT_FALSE(fs::exists(root_ / "mixed" / "smoke.journal"));
  EXPECT_NE(tools_log().find("GPU 0 is " + kH100 +
                             " but GPU 1 is NVIDIA H100 PCIe; one campaign's table is one "
                             "card model's"),
            std::string::npos)
      << tools_log();
}

TEST_F(Gpus, ABadValueIsAUsageErrorNamingTheFlag) {
  for (const std::string bad : {"0,x", "", "0,0", "-1"}) {
    SCOPED_TRACE("--gpus '" + bad + "'");
    EXPECT_EQ(run({kTune, "run", kConfig, "--gpus", bad, "-o", (root_ / "bad" / "smoke.yaml").string()}), 2);
    EXPECT_EQ(
        run({kFuzz, "run", kConfig, "--gpus", bad, "--rounds", "1", "--work-dir", (root_ / "bad").string()}),
        2);
  }
  EXPECT_NE(tools_log().find("--gpus: 0,x: expected all or a comma-separated list of GPU indices"),
            std::string::npos);
  EXPECT_EQ(tools_log().find("--gpus: --gpus"), std::string::npos) << "the flag is named once";
  // An index the machine does not have is named with what it has.
  EXPECT_EQ(run({kTune, "run", kConfig, "--gpus", "0,2", "-o", (root_ / "bad" / "smoke.yaml").string()}), 2);
  EXPECT_NE(tools_log().find("--gpus 0,2: there is no GPU 2: this machine shows 2 GPUs (0 to 1)"),
            std::string::npos)
      << tools_log();
  EXPECT_FALSE(fs::exists(root_ / "bad" / "smoke.yaml"));
}

}  // namespace
