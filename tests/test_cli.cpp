// Tests of the `tune` command line as a user meets it: the real executable, run as a child process with its
// standard output and error captured. The laws: exit codes mean what tune's header says (0 success, 1
// failure such as an unreadable file, 2 bad input, 3 no usable GPU); every config defect is reported as
// FILE:LINE: with the field path; `space --explain` gives the verdict and the constraint that decides it;
// and `run` on a machine without a GPU compiles, says so, and writes no results table.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tuner/config/config.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

const fs::path tune_executable = fs::path(TUNEFUZZ_BINARY_DIR) / "bin" / "tune";
const fs::path source_directory = TUNEFUZZ_SOURCE_DIR;

struct TuneRun {
  int exit_code = -1;  ///< 128 + signal when killed
  std::string output;  ///< standard output and error, interleaved
};

std::ostream& operator<<(std::ostream& out, const TuneRun& run) {
  return out << "exit code " << run.exit_code << ", output:\n" << run.output;
}

/// A fresh directory per test, removed afterwards.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ =
        fs::temp_directory_path() / ("tunefuzz_test_cli_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  /// Runs `tune ARGS...` with the test's environment, less any TUNEFUZZ_* variable, with `env` set. Kills it
  /// after `timeout_s`.
  TuneRun tune(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
               double timeout_s = 120) const {
    const fs::path output_file = directory_ / "tune.output";
    std::vector<std::string> argv_strings = {tune_executable.string()};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const std::string name = entry.substr(0, entry.find('='));
      if (name.rfind("TUNEFUZZ_", 0) != 0 && !env.count(name)) env_strings.push_back(entry);
    }
    for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    TuneRun run;
    if (spawned != 0) {
      run.output = "cannot start " + tune_executable.string() + ": " + std::strerror(spawned);
      return run;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(output_file);
    std::ostringstream text;
    text << in.rdbuf();
    run.output = text.str();
    return run;
  }

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path path = directory_ / name;
    std::ofstream(path) << text;
    return path;
  }

  fs::path directory_;
};

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// Line 1 of every config below: a valid gpu section on one line.
const std::string gpu_line =
    "gpu: {name: Test GPU, arch: sm_90, limits: {shared_memory_per_block_optin: 232448, "
    "shared_memory_per_sm: 233472, registers_per_sm: 65536, sm_count: 132}}\n";
const std::string one_problem = "problems: [{name: a, m: 64, n: 64, k: 64, precision: bf16}]\n";
const std::string tail = "templates: [{name: gemm_mma}]\noutput: out.yaml\n";

struct ConfigDefect {
  std::string name;
  std::string text;
  int line;
  std::string field;
};

// Law: `tune space` on a config with a defect exits 2 and names FILE:LINE: and the field path.
TEST_F(Cli, ConfigDefectsExitTwoNamingFileLineAndField) {
  const std::vector<ConfigDefect> defects = {
      {"unknown_key", gpu_line + one_problem + "bogus: 1\n" + tail, 3, "bogus"},
      {"negative_m",
       gpu_line + "problems:\n  - name: a\n    m: -5\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
       "problems[0].m"},
      {"empty_list",
       gpu_line + one_problem +
           "templates:\n  - name: gemm_mma\n    space:\n      BM: []\noutput: out.yaml\n",
       6, "templates[0].space.BM"},
      {"unknown_precision", gpu_line + "problems:\n  - {name: a, m: 1, n: 1, k: 1, precision: fp8}\n" + tail,
       3, "problems[0].precision"},
      {"wrong_type",
       gpu_line + "problems:\n  - name: a\n    m: 1\n    n: [1, 2]\n    k: 1\n    precision: bf16\n" + tail,
       5, "problems[0].n"},
      {"unknown_template_parameter",
       gpu_line + one_problem +
           "templates:\n  - name: gemm_mma\n    space:\n      BM: [128]\n      BOGUS: [1]\n" +
           "output: out.yaml\n",
       7, "templates[0].space.BOGUS"},
  };
  for (const ConfigDefect& defect : defects) {
    SCOPED_TRACE(defect.name);
    const fs::path config = write(defect.name + ".yaml", defect.text);
    const TuneRun run = tune({"space", config.string()});
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_TRUE(contains(run.output, config.string() + ":" + std::to_string(defect.line) + ":")) << run;
    EXPECT_TRUE(contains(run.output, " " + defect.field + ": ")) << run;
  }
}

// Law: for every template of the shipped config, `tune space` reports the points it enumerated, the
// pruned ones per constraint and the kept ones, and they add up: enumerated = kept + sum of pruned, kept > 0.
TEST_F(Cli, SpaceOnTheShippedConfigAccountsForEveryPoint) {
  const fs::path config = source_directory / "configs" / "h100.yaml";
  const TuneRun run = tune({"space", config.string()});
  EXPECT_EQ(run.exit_code, 0) << run;
  struct Counts {
    long long enumerated = -1, pruned = 0, kept = -1;
  };
  std::vector<Counts> templates;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string word;
    long long count = 0;
    words >> word;
    if (word == "template") templates.emplace_back();
    if (templates.empty() || !(words >> count)) continue;
    if (word == "enumerated") templates.back().enumerated = count;
    if (word == "pruned") templates.back().pruned += count;
    if (word == "kept") templates.back().kept = count;
  }
  ASSERT_EQ(templates.size(), tunefuzz::load_config(config).templates.size())
      << "one report per template search of the config\n"
      << run;
  for (const Counts& c : templates) {
    EXPECT_GT(c.kept, 0) << run;
    EXPECT_EQ(c.enumerated, c.kept + c.pruned) << run;
  }
}

// Law: --explain says PRUNED and names the failing constraint for a point that needs more shared memory
// than the card has, and KEPT with no failing constraint for one that fits.
TEST_F(Cli, ExplainNamesTheConstraintThatPrunesAPoint) {
  const std::string config = (source_directory / "configs" / "h100.yaml").string();
  const TuneRun pruned = tune({"space", config, "--explain", "BM=256,BN=256,BK=64,STAGES=4"});
  EXPECT_EQ(pruned.exit_code, 0) << pruned;
  EXPECT_TRUE(contains(pruned.output, "PRUNED")) << pruned;
  EXPECT_FALSE(contains(pruned.output, "KEPT")) << pruned;
  EXPECT_TRUE(contains(pruned.output, "FAIL shared_memory")) << pruned;

  const TuneRun kept =
      tune({"space", config, "--template", "gemm_mma", "--explain", "BM=128,BN=128,BK=32,STAGES=3"});
  EXPECT_EQ(kept.exit_code, 0) << kept;
  EXPECT_TRUE(contains(kept.output, "KEPT")) << kept;
  EXPECT_FALSE(contains(kept.output, "PRUNED")) << kept;
  EXPECT_FALSE(contains(kept.output, "FAIL")) << kept;
  EXPECT_FALSE(contains(kept.output, "gemm_simt")) << kept;
}

// Law: a point is explained in the templates that have every parameter it names, and only there; a point
// no template of the config has is bad input, and so is a template the config does not search.
TEST_F(Cli, ExplainGoesToTheTemplatesThatHaveThePointsParameters) {
  const std::string config = (source_directory / "configs" / "h100.yaml").string();
  // TM and TN are gemm_simt's alone. 128/4 * 128/4 = 1024 threads, two CTAs per SM (the config's
  // MIN_BLOCKS): 32 registers each, fewer than 4*4 accumulators and the rest need.
  const TuneRun simt = tune({"space", config, "--explain", "TM=4,TN=4"});
  EXPECT_EQ(simt.exit_code, 0) << simt;
  EXPECT_TRUE(contains(simt.output, "gemm_simt BM=128,BN=128,BK=8,TM=4,TN=4")) << simt;
  EXPECT_TRUE(contains(simt.output, "FAIL register_budget")) << simt;
  EXPECT_FALSE(contains(simt.output, "gemm_mma")) << simt;
  // BM, BN, BK and STAGES are everyone's.
  const TuneRun both = tune({"space", config, "--explain", "BM=256,BN=256,BK=64,STAGES=4"});
  EXPECT_TRUE(contains(both.output, "gemm_mma BM=256")) << both;
  EXPECT_TRUE(contains(both.output, "gemm_simt BM=256")) << both;
  const TuneRun none = tune({"space", config, "--explain", "TM=4,WM=32"});
  EXPECT_EQ(none.exit_code, 2) << none;
  EXPECT_TRUE(contains(none.output, "no template")) << none;
  const TuneRun absent = tune({"space", config, "--template", "gemm_nope"});
  EXPECT_EQ(absent.exit_code, 2) << absent;
  EXPECT_TRUE(contains(absent.output, "unknown template 'gemm_nope'")) << absent;
}

// Law: without a usable GPU, `tune run` still compiles every candidate (NVRTC needs no GPU), then stops
// with exit code 3, says why, and creates nothing where the table would go: no table, no stage summary, no
// parent folder, no work folder (it once made `<output>.work/` and the parents of `output:`). The config's
// `output:` is relative to the config file, not to the working directory, and the run says where it is.
TEST_F(Cli, RunWithoutAGpuCompilesThenExitsThreeWritingNoResults) {
  const fs::path cache = directory_ / "cache";
  const fs::path config = directory_ / "configs" / "smoke.yaml";
  fs::create_directories(config.parent_path());
  std::ifstream in(source_directory / "configs" / "smoke.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\noutput: ") + 1, std::string::npos, "output: ../out/smoke.yaml\n");
  std::ofstream(config) << text;
  const fs::path output = directory_ / "configs" / ".." / "out" / "smoke.yaml";
  // CUDA_VISIBLE_DEVICES="" hides any GPU, so the law is checked the same way on a machine that has one.
  const TuneRun run =
      tune({"run", config.string()}, {{"TUNEFUZZ_CACHE_DIR", cache.string()}, {"CUDA_VISIBLE_DEVICES", ""}},
           600);  // a cold compile on a busy 2-core machine
  EXPECT_EQ(run.exit_code, 3) << run;
  EXPECT_TRUE(contains(run.output, "compil")) << run;
  EXPECT_TRUE(contains(run.output, "no usable GPU")) << run;
  EXPECT_TRUE(contains(run.output, "the table goes to " + output.string())) << run;
  EXPECT_FALSE(fs::exists(output.parent_path())) << run;
  EXPECT_FALSE(fs::exists(directory_ / "configs" / "out")) << run;
  int images = 0;
  if (fs::is_directory(cache))
    for (const auto& entry : fs::directory_iterator(cache)) images += entry.path().extension() == ".cubin";
  EXPECT_GT(images, 0) << "nothing was compiled into " << cache << "\n" << run;
}

TEST_F(Cli, AMissingConfigFileExitsOneNamingThePath) {
  const fs::path missing = directory_ / "no-such-config.yaml";
  const TuneRun run = tune({"space", missing.string()});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_TRUE(contains(run.output, missing.string())) << run;
}

TEST_F(Cli, UsageErrorsExitTwo) {
  const std::string config = (source_directory / "configs" / "h100.yaml").string();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"frobnicate"}, {"space"}, {"space", config, "--bogus"}, {"--bogus", "space", config}}) {
    std::string joined;
    for (const auto& a : args) joined += " " + a;
    SCOPED_TRACE("tune" + joined);
    const TuneRun run = tune(args);
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_FALSE(run.output.empty());
  }
  const TuneRun help = tune({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help;
  EXPECT_TRUE(contains(help.output, "space")) << help;
}

}  // namespace

namespace tunefuzz {
namespace {

// Law: two campaigns compiling into one fresh cache at once compile each image once between them (file
// locks); every candidate is then either compiled by one of them or found in the cache by it.
TEST(CacheSharing, TwoCampaignsOnOneCacheCompileEachKeyOnce) {
  const fs::path cache = fs::temp_directory_path() / ("tunefuzz_shared_cache_" + std::to_string(::getpid()));
  fs::remove_all(cache);
  const std::string command = "TUNEFUZZ_CACHE_DIR=" + cache.string() + " " + tune_executable.string() +
                              " compile " + (source_directory / "configs" / "smoke.yaml").string() + " 2>&1";
  std::string outputs[2];
  const auto run = [&](int i) {
    FILE* pipe = popen(command.c_str(), "r");
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) outputs[i].append(buffer, n);
    pclose(pipe);
  };
  std::thread first(run, 0), second(run, 1);
  first.join();
  second.join();
  fs::remove_all(cache);
  // "compile ... N from cache" counts candidates; smoke.yaml has 7 candidates.
  int from_cache = 0;
  for (const std::string& out : outputs) {
    const size_t at = out.rfind(" from cache");
    ASSERT_NE(at, std::string::npos) << out;
    const size_t start = out.rfind(' ', at - 1) + 1;
    from_cache += std::stoi(out.substr(start, at - start));
  }
  EXPECT_EQ(from_cache, 7) << "each candidate must be compiled exactly once between the two runs\n"
                           << outputs[0] << "\n---\n"
                           << outputs[1];
}

}  // namespace
}  // namespace tunefuzz
