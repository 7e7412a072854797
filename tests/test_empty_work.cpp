// Empty work is a failure, never a pass: `tune space` counts the candidates of each problem and fails naming
// a problem no candidate accepts with the parameter values that would serve it; `tune run` writes no row
// without a winner and fails naming the problem; `fuzz run` fails when compilation left nothing to fuzz
// (saying why for each candidate) or when it ran fewer cases than one round. No GPU: the worker is
// tests/fixtures/fake_gpu_worker.sh (every candidate passes; timings are a function of the id).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/fake_gpu.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kTune = TUNEFUZZ_BINARY_DIR "/bin/tune";
const std::string kFuzz = TUNEFUZZ_BINARY_DIR "/bin/fuzz";

/// An H100 config searching one gemm_simt point (VEC=4) for fp32 problems: `even` (every size a multiple
/// of 4) and `lm_head` (N = 50257, which VEC=4 refuses), plus `extra` lines at the end.
std::string config_text(const std::string& output, const std::string& extra = "") {
  return std::string(tunefuzz::test::kFakeGpuSection) + R"(problems:
  - {name: even, m: 256, n: 256, k: 256, precision: fp32, output: fp32}
  - {name: lm_head, m: 64, n: 50257, k: 512, precision: fp32, output: fp32}
templates:
  - name: gemm_simt
    space:
      BM: [128]
      BN: [128]
      VEC: [4]
budgets:
  fuzz_cases: 10
  fuzz_workers: 1
seed: 1
output: )" +
         output + "\n" + extra;
}

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

class EmptyWork : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { root_ = tunefuzz::test::install_fake_gpu("empty-work", "0.05"); }
  static void TearDownTestSuite() { tunefuzz::test::remove_fake_gpu(root_); }

  static fs::path write_config(const std::string& name, const std::string& extra = "") {
    const fs::path path = root_ / (name + ".yaml");
    std::ofstream(path) << config_text((root_ / (name + "-table.yaml")).string(), extra);
    return path;
  }

  static CliRun run(const std::string& command) {
    const fs::path out = root_ / "out.txt", err = root_ / "err.txt";
    const int status = std::system((command + " > " + out.string() + " 2> " + err.string()).c_str());
    const auto read = [](const fs::path& p) {
      std::ifstream in(p);
      std::stringstream text;
      text << in.rdbuf();
      return text.str();
    };
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out), read(err)};
  }

  static bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  static inline fs::path root_;
};

TEST_F(EmptyWork, TuneSpaceCountsCandidatesPerProblemAndFailsNamingTheUnservedOne) {
  const CliRun r = run(kTune + " space " + write_config("space").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "candidates per problem")) << r.out;
  EXPECT_TRUE(has(r.err, "problem lm_head (64x50257x512 fp32->fp32 RR): no candidate accepts it")) << r.err;
  EXPECT_TRUE(has(r.err, "gemm_simt with VEC=1")) << r.err;
  EXPECT_FALSE(has(r.err, "problem even")) << r.err;

  const CliRun shipped = run(kTune + " space " + TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml");
  EXPECT_EQ(shipped.exit_code, 0) << shipped.err;
  EXPECT_TRUE(has(shipped.out, "candidates per problem")) << shipped.out;
}

TEST_F(EmptyWork, TuneRunWritesNoRowWithoutAWinnerAndFailsNamingTheProblem) {
  const fs::path config = write_config("run");
  const fs::path table = root_ / "run-table.yaml";
  const CliRun r = run(kTune + " run " + config.string() + " --work-dir " + (root_ / "run-work").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "problem lm_head (64x50257x512 fp32->fp32 RR): no candidate accepts it")) << r.err;
  EXPECT_TRUE(has(r.err, "1 of 2 problems have no winner")) << r.err;
  const YAML::Node rows = YAML::LoadFile(table.string())["problems"];
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["name"].as<std::string>(), "even");
  EXPECT_TRUE(rows[0]["winner"].IsMap());
}

TEST_F(EmptyWork, FuzzRunFailsWhenCompilationLeavesNothingAndSaysWhy) {
  const fs::path config = write_config("pruned", "pruning:\n  min_blocks_per_sm: 32\n");
  const CliRun r = run(kFuzz + " run " + config.string() + " --work-dir " + (root_ / "fuzz-work").string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "pruned at compile: occupancy")) << r.out;
  EXPECT_TRUE(has(r.out, "CTAs per SM (limited by")) << r.out;
  EXPECT_TRUE(has(r.err, "nothing to fuzz: compilation pruned all 1 candidates")) << r.err;
}

// (Less than one round fails: Resume.FuzzRunStartsNoJobOnceItsBudgetIsSpent, where the budget ends while the
// first job runs; a budget of 0 is refused up front.) A round is bounded by --rounds, not by the clock, so a
// loaded machine cannot turn the pass into empty work; compiling does not count against the budget.
TEST_F(EmptyWork, FuzzRunPassesOnARound) {
  const fs::path config = write_config("rounds");
  const fs::path report = root_ / "rounds.report.yaml";
  const std::string work = " --work-dir " + (root_ / "rounds-work").string() + " -o " + report.string();
  const CliRun some = run(kFuzz + " run " + config.string() + " --budget 5m --rounds 1" + work);
  EXPECT_EQ(some.exit_code, 0) << some.out << some.err;
  EXPECT_FALSE(has(some.out, "empty work")) << some.out;
  EXPECT_TRUE(has(some.out, "domain classes reached / accepted (1 candidates)")) << some.out;
  const YAML::Node written = YAML::LoadFile(report.string());
  EXPECT_EQ(written["rounds"].as<int>(), 1);
  EXPECT_EQ(written["cases"].as<int>(), 10);
  EXPECT_TRUE(written["compile_seconds"].IsDefined());
}

}  // namespace
