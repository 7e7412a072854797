// The command lines' contract (docs/cli.md): --help of every subcommand exits 0 and names its options;
// --json prints exactly one JSON document on standard output (progress and notes go to standard error), with
// the documented keys; exit codes are 0 / 1 / 2 / 3 as documented.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/warm_cache.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/config/config.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kBin = TUNEFUZZ_BINARY_DIR "/bin/";
const std::string kSource = TUNEFUZZ_SOURCE_DIR;

struct Outcome {
  int exit_code = -1;
  std::string out;  ///< standard output only
};

// Runs a command with standard error discarded, in a kernel cache of this process's (a copy of the warm
// smoke cache).
Outcome run(const std::string& command) {
  static const fs::path cache = [] {
    const fs::path path = fs::temp_directory_path() / ("tunefuzz-cli-json-" + std::to_string(getpid()));
    tunefuzz::test::copy_warm_cache(path);
    return path;
  }();
  const std::string full =
      "cd " + kSource + " && TUNEFUZZ_CACHE_DIR=" + cache.string() + " " + command + " 2>/dev/null";
  FILE* pipe = popen(full.c_str(), "r");
  Outcome r;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// JSON is YAML: yaml-cpp reads it. A document that is not one JSON object fails the test.
YAML::Node json(const Outcome& r) {
  EXPECT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.front(), '{') << r.out.substr(0, 200);
  return YAML::Load(r.out);
}

TEST(CliHelp, EverySubcommandExplainsItself) {
  const std::pair<std::string, std::string> cases[] = {
      {"tune space --help", "--explain"}, {"tune compile --help", "--jobs"},
      {"tune run --help", "--resume"},    {"tune check --help", "--require-gpu"},
      {"tune show --help", "--json"},     {"tune export --help", "--format"},
      {"tune merge --help", "--prefer"},  {"tune report --help", "--problem"},
      {"fuzz run --help", "--budget"},    {"fuzz replay --help", "--sanitize"},
      {"fuzz mutants --help", "--cases"}, {"fuzz mutants --help", "--sanitize"},
  };
  for (const auto& [command, option] : cases) {
    const Outcome r = run(kBin + command);
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find(option), std::string::npos) << command << " does not mention " << option << ":\n"
                                                     << r.out;
  }
}

TEST(CliJson, SpaceCountsEveryPoint) {
  const YAML::Node j = json(run(kBin + "tune space configs/h100.yaml --json"));
  // What the space stage computes for the shipped config (its counts are worked out by hand in test_space
  // and test_gemm_simt): one report per template search, every kept point, every candidate.
  const tunefuzz::SpaceStage stage =
      tunefuzz::space_stage(tunefuzz::load_config(kSource + "/configs/h100.yaml"));
  EXPECT_EQ(j["candidates"].as<size_t>(), stage.candidates.size());
  ASSERT_EQ(j["templates"].size(), stage.reports.size());
  size_t expected_kept = 0;
  for (const tunefuzz::SpaceReport& r : stage.reports) expected_kept += r.kept.size();
  size_t kept = 0;
  for (const auto& t : j["templates"]) {
    int64_t pruned = 0;
    for (const auto& p : t["pruned"]) pruned += p.second.as<int64_t>();
    EXPECT_EQ(t["enumerated"].as<int64_t>(), pruned + t["kept"].as<int64_t>());
    EXPECT_EQ(t["points"].size(), t["kept"].as<size_t>());
    kept += t["kept"].as<size_t>();
  }
  EXPECT_EQ(kept, expected_kept);
  const YAML::Node e =
      json(run(kBin + "tune space configs/h100.yaml --json --explain BM=256,BN=256,BK=64,STAGES=4"));
  EXPECT_FALSE(e["explanations"][0]["kept"].as<bool>());
  EXPECT_FALSE(e["explanations"][0]["constraints"]["shared_memory"].as<bool>());
}

TEST(CliJson, CompileAndRunWithoutAGpu) {
  const Outcome compile = run(kBin + "tune compile configs/smoke.yaml --json");
  EXPECT_EQ(compile.exit_code, 0);
  const YAML::Node c = json(compile);
  // 3 gemm_mma points (VEC=1 has no PACK twin) and 1 gemm_simt_16bit point, × 2 output types, less the
  // packing point's bf16->fp32 twin (the one fp32-output problem is aligned: nothing to pack, no candidate);
  // the gemm_mma VEC=1 pair spills (its register staging on top of 64x64 warp tiles) and is pruned
  EXPECT_EQ(c["compile"]["compiled"].as<int>(), 5);
  EXPECT_EQ(c["candidates_compiled"].size(), 7u);
  const fs::path out = fs::temp_directory_path() / ("tunefuzz-cli-json-run-" + std::to_string(getpid()));
  const Outcome r = run(kBin + "tune run configs/smoke.yaml --json -o " + (out / "smoke.yaml").string());
  EXPECT_EQ(r.exit_code, 3);  // no GPU here
  const YAML::Node j = json(r);
  EXPECT_EQ(j["status"].as<std::string>(), "no_gpu");
  EXPECT_EQ(j["stages"]["compile"]["compiled"].as<int>(), 5);
  EXPECT_FALSE(fs::exists(out / "smoke.yaml"));
  fs::remove_all(out);
}

TEST(CliJson, ShowPrintsTheTable) {
  const Outcome r = run(kBin + "tune show results/h100.yaml --json");
  EXPECT_EQ(r.exit_code, 0);
  const YAML::Node j = json(r);
  EXPECT_EQ(j["tables"][0]["gpu"]["name"].as<std::string>(), "NVIDIA H100 80GB HBM3");
  const YAML::Node problems = j["tables"][0]["problems"];
  EXPECT_EQ(problems.size(), YAML::LoadFile(kSource + "/configs/h100.yaml")["problems"].size());
  EXPECT_GT(problems[1]["winner"]["tflops"].as<double>(), 0);
  // The text form shows each row's ratio to two decimals, the odd shape's among them.
  std::string odd_ratio;
  for (const YAML::Node& row : problems)
    if (row["name"].as<std::string>() == "odd_4097x4095x4099") {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.2fx", row["ratio_vs_baseline"].as<double>());
      odd_ratio = buffer;
    }
  ASSERT_FALSE(odd_ratio.empty());
  const Outcome text = run(kBin + "tune show results/h100.yaml");
  EXPECT_NE(text.out.find("odd_4097x4095x4099"), std::string::npos);
  EXPECT_NE(text.out.find(odd_ratio), std::string::npos) << odd_ratio << "\n" << text.out;
  // Rows of one shape in different layouts are told apart by the layout column.
  std::istringstream lines(text.out);
  std::string line;
  bool cc_row = false;
  while (std::getline(lines, line))
    if (line.find("odd_1000_cc ") != std::string::npos) cc_row = line.find(" CC ") != std::string::npos;
  EXPECT_TRUE(cc_row) << "odd_1000_cc's row does not say CC\n" << text.out;
}

// A row whose baseline the vendor library refused (cuBLASLt has no fp8 GEMM in that layout, say) has a winner
// and no ratio: `tune show` prints dashes and the baseline's status, not a ratio of 0.
TEST(CliShow, ARowWithoutABaselineShowsNoRatio) {
  YAML::Node table = YAML::LoadFile(TUNEFUZZ_SOURCE_DIR "/results/h200.yaml");
  YAML::Node row = table["problems"][0];
  const std::string name = row["name"].as<std::string>();
  row["baseline"]["status"] = "refused";
  row["baseline"]["median_ms"] = 0;
  row["baseline"]["tflops"] = 0;
  row.remove("ratio_vs_baseline");
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "tunefuzz-show-refused.yaml";
  {
    std::ofstream out(file);
    out << YAML::Dump(table) << "\n# end: " << table["problems"].size() << " problems\n";
  }
  const Outcome text = run(kBin + "tune show " + file.string());
  std::filesystem::remove(file);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  std::istringstream lines(text.out);
  std::string line, shown;
  while (std::getline(lines, line))
    if (line.rfind("  " + name + " ", 0) == 0) shown = line;
  ASSERT_FALSE(shown.empty()) << text.out;
  EXPECT_EQ(shown.find("0.00x"), std::string::npos) << shown;
  EXPECT_NE(shown.find("(baseline refused)"), std::string::npos) << shown;
}

// A winner that runs its problem in another form says so (the probe's 8192×1×8192 product runs on gemm_skinny
// as a 1×8192×8192 one); a row run as stated prints no form.
TEST(CliShow, AWinnerRunInAnotherFormSaysWhichForm) {
  const Outcome text = run(kBin + "tune show " TUNEFUZZ_SOURCE_DIR "/results/probe-h200.yaml");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  std::istringstream lines(text.out);
  std::string line, vector_row, square_row;
  while (std::getline(lines, line)) {
    if (line.rfind("  p_n1_8192x8192 ", 0) == 0) vector_row = line;
    if (line.rfind("  p_cr_3001x1999x777 ", 0) == 0) square_row = line;
  }
  EXPECT_NE(vector_row.find("[as Cᵀ = Bᵀ·Aᵀ: 1×8192×8192 RC]"), std::string::npos) << text.out;
  ASSERT_FALSE(square_row.empty()) << text.out;
  EXPECT_EQ(square_row.find("[as"), std::string::npos) << square_row;
}

TEST(CliExitCodes, AsDocumented) {
  EXPECT_EQ(run(kBin + "tune").exit_code, 2);                         // no subcommand
  EXPECT_EQ(run(kBin + "tune show /nonexistent.yaml").exit_code, 1);  // io
  EXPECT_EQ(run(kBin + "tune show configs/h100.yaml").exit_code, 2);  // not a table: bad input
  EXPECT_EQ(run(kBin + "tune export results/h200.yaml --format xml -o /tmp/x").exit_code, 2);
  // No GPU: exit 3, and the campaign's work folder (fuzz-work under the working directory) is not made: the
  // probe runs in a scratch folder.
  const fs::path work = fs::path(kSource) / "fuzz-work";
  const bool work_was_there = fs::exists(work);
  EXPECT_EQ(run(kBin + "fuzz run configs/smoke.yaml --json --budget 1s").exit_code, 3);
  if (!work_was_there) {
    EXPECT_FALSE(fs::exists(work)) << "fuzz run without a GPU made " << work;
  }
  EXPECT_EQ(run(kBin + "fuzz run configs/smoke.yaml --budget soon").exit_code, 2);
  // fuzz mutants --template names a template the config does not search: bad input naming it, before any
  // compile.
  const Outcome mutants =
      run("sh -c '" + kBin + "fuzz mutants configs/smoke.yaml --template gemm_wgmma 2>&1'");
  EXPECT_EQ(mutants.exit_code, 2);
  EXPECT_NE(mutants.out.find("no point of template gemm_wgmma"), std::string::npos) << mutants.out;
  // --mutant names a bug the template does not declare: bad input naming it and the bugs it has, before any
  // compile.
  const Outcome bug = run("sh -c '" + kBin + "fuzz mutants configs/smoke.yaml --mutant no_such_bug 2>&1'");
  EXPECT_EQ(bug.exit_code, 2);
  EXPECT_NE(bug.out.find("--mutant no_such_bug"), std::string::npos) << bug.out;
  EXPECT_NE(bug.out.find("declares no such injected bug (it has "), std::string::npos) << bug.out;
  // An unknown sanitizer tool is bad input, named, before any compile.
  const Outcome tool = run("sh -c '" + kBin + "fuzz mutants configs/smoke.yaml --sanitize leakcheck 2>&1'");
  EXPECT_EQ(tool.exit_code, 2);
  EXPECT_NE(tool.out.find("--sanitize: leakcheck not in"), std::string::npos) << tool.out;
}

}  // namespace
