// Laws of a campaign over MPI ranks (tuner/cluster), on whole `tune run` and `fuzz run` campaigns of
// configs/smoke.yaml started by `mpirun -n 2 --oversubscribe` on this one machine. No GPU: the worker is
// tests/fixtures/fake_gpu_worker.sh, whose job log says which rank's node ran each job (`rank=R`, from the
// OMPI_COMM_WORLD_RANK its rank's workers inherit). Timings are a function of the candidate id, so tables
// compare exactly. Built only with TUNEFUZZ_MPI=ON.
//  - two ranks give the one-process table (each row saying which rank's card timed it), both ranks fuzzed and
//    timed; each rank compiles its own share of the candidates into a cold cache and rank 0 finds them all there;
//  - `fuzz run` spreads its jobs over both ranks;
//  - the other commands refuse to run under mpirun rather than run twice.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/fake_gpu.hpp"
#include "tests/support/job_log.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kTune = TUNEFUZZ_BINARY_DIR "/bin/tune";
const std::string kFuzz = TUNEFUZZ_BINARY_DIR "/bin/fuzz";
const std::string kConfig = TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml";

class Mpi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tunefuzz::test::install_fake_gpu("mpi", "0.05");
    // One process, as always: the table two ranks must give.
    ASSERT_EQ(run({kTune, "run", kConfig, "--no-store", "-o", (root_ / "one" / "smoke.yaml").string()}), 0)
        << tools_log();
    reference_ = YAML::LoadFile((root_ / "one" / "smoke.yaml").string())["problems"];
  }
  static void TearDownTestSuite() {
    ::unsetenv("FAKE_JOB_LOG");
    tunefuzz::test::remove_fake_gpu(root_);
  }

  /// `mpirun -n RANKS` in front of `args` (allowed to start more ranks than cores, and as root where the
  /// tests run as root).
  static std::vector<std::string> mpirun(int ranks, std::vector<std::string> args) {
    std::vector<std::string> out = {TUNEFUZZ_MPIEXEC, "-n", std::to_string(ranks), "--oversubscribe"};
    if (::geteuid() == 0) out.push_back("--allow-run-as-root");
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  static int run(const std::vector<std::string>& args) { return tunefuzz::test::run_tool(root_, args); }

  /// Runs `args` with its job log in a fresh file; returns the exit code and the log's lines in `jobs`.
  static int run_logged(const std::vector<std::string>& args, const std::string& name,
                        std::vector<std::string>& jobs) {
    return tunefuzz::test::run_tool_logged(root_, args, name, jobs);
  }

  static std::string tools_log() { return tunefuzz::test::tools_log(root_); }

  /// The ranks (`rank=R` at each line's end) that ran jobs of `kind` (`fuzz`, `time`).
  static std::set<std::string> ranks_of(const std::vector<std::string>& jobs, const std::string& kind) {
    return tunefuzz::test::last_words_by_kind(jobs)[kind];
  }

  static inline fs::path root_;
  static inline YAML::Node reference_;
};

TEST_F(Mpi, TwoRanksGiveTheOneProcessTableAndShareTheJobs) {
  const fs::path table = root_ / "two" / "smoke.yaml";
  std::vector<std::string> jobs;
  ASSERT_EQ(run_logged(mpirun(2, {kTune, "run", kConfig, "--no-store", "-o", table.string()}), "two", jobs), 0)
      << tools_log();

  // One table, written by rank 0: the one-process table, each row naming the card that timed it.
  const YAML::Node rows = YAML::LoadFile(table.string())["problems"];
  ASSERT_EQ(rows.size(), reference_.size());
  std::set<int> timing_ranks;
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(rows[i]["name"].as<std::string>());
    const YAML::Node on = rows[i]["timed_on"];
    ASSERT_TRUE(on) << "the row does not say which rank's card timed it";
    timing_ranks.insert(on["rank"].as<int>(0));
    YAML::Node row = YAML::Clone(rows[i]);
    row.remove("timed_on");
    EXPECT_EQ(YAML::Dump(row), YAML::Dump(reference_[i]));
  }
  // Both ranks fuzzed, and timed (a problem's candidates and baseline on one rank's card).
  EXPECT_EQ(ranks_of(jobs, "fuzz"), (std::set<std::string>{"rank=0", "rank=1"}));
  EXPECT_EQ(ranks_of(jobs, "time"), (std::set<std::string>{"rank=0", "rank=1"}));
  EXPECT_EQ(timing_ranks, (std::set<int>{0, 1}));
}

TEST_F(Mpi, EachRankCompilesItsShareOfAColdCache) {
  // Two gemm_simt candidates (quick to compile) and a cold kernel cache of their own. 64-column tiles: 128 x
  // 128 at MIN_BLOCKS=2 sits at its cap of 128 registers, where whether ptxas spills (and the compile prunes)
  // turns on small changes to the kernel, and the campaign needs a kept candidate to succeed.
  const fs::path config = root_ / "simt.yaml";
  std::ofstream(config) << tunefuzz::test::kFakeGpuSection << R"(
problems:
  - {name: fp32_256, m: 256, n: 256, k: 256, precision: fp32}
templates:
  - name: gemm_simt
    space:
      BN: [64]
      VEC: [1, 2]
budgets:
  fuzz_cases: 6
  timing_warmup: 1
  timing_repeats: 3
seed: 3
output: simt-table.yaml
)";
  const fs::path cold = root_ / "cold-cache";
  ::setenv("TUNEFUZZ_CACHE_DIR", cold.c_str(), 1);
  const fs::path log = root_ / "tools.log";
  const auto before = fs::file_size(log);
  const int code =
      run(mpirun(2, {kTune, "run", config.string(), "--no-store", "-o", (root_ / "simt" / "t.yaml").string()}));
  ::setenv("TUNEFUZZ_CACHE_DIR", (root_ / "cache").c_str(), 1);
  const std::string out = tools_log().substr(before);
  ASSERT_EQ(code, 0) << out;
  // Each rank compiled one candidate; the full compile then found both in the cache.
  EXPECT_NE(out.find("rank 0 of 2: compiling its share, 1 of 2 candidates"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 1 of 2: compiling its share, 1 of 2 candidates"), std::string::npos) << out;
  // Each share compiled cold (whether the compile then keeps the candidate or prunes it on spills).
  const std::regex cold_share("for 1 candidates; [01] kept, 0 from cache; their schedule-perturbed twins next");
  EXPECT_EQ(std::distance(std::sregex_iterator(out.begin(), out.end(), cold_share), std::sregex_iterator()), 2)
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("for 2 candidates; [012] kept, 2 from cache"))) << out;
}

TEST_F(Mpi, FuzzRunSpreadsItsJobsOverTheRanks) {
  std::vector<std::string> jobs;
  const fs::path report = root_ / "fuzz" / "report.yaml";
  ASSERT_EQ(run_logged(mpirun(2, {kFuzz, "run", kConfig, "--rounds", "2", "--budget", "1h", "--work-dir",
                                  (root_ / "fuzz").string(), "-o", report.string()}),
                       "fuzz", jobs),
            0)
      << tools_log();
  EXPECT_EQ(ranks_of(jobs, "fuzz"), (std::set<std::string>{"rank=0", "rank=1"}));
  const YAML::Node r = YAML::LoadFile(report.string());
  EXPECT_EQ(r["rounds"].as<int>(), 2);
  EXPECT_EQ(r["failures"].size(), 0u);
}

TEST_F(Mpi, OtherCommandsRefuseToRunOnEveryRank) {
  const fs::path log = root_ / "tools.log";
  const auto before = fs::file_size(log);
  EXPECT_EQ(run(mpirun(2, {kTune, "space", kConfig})), 2);
  EXPECT_EQ(run(mpirun(2, {kFuzz, "mutants", kConfig, "--cases", "1"})), 2);
  const std::string tail = tools_log().substr(before);
  EXPECT_NE(tail.find("only `tune run` splits its work over MPI ranks; run `tune space` without mpirun"),
            std::string::npos)
      << tail;
  EXPECT_NE(tail.find("only `fuzz run` splits its work over MPI ranks; run `fuzz mutants` without mpirun"),
            std::string::npos)
      << tail;
}

}  // namespace
