// Tests of the config loader (tuner/config): a complete document yields every field, omitted keys take
// their documented defaults, and every defect is an Error{bad_input} naming the line and field path of the
// offending node. The law behind the last group: nothing but tunefuzz::Error ever leaves the loader.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "tuner/config/config.hpp"

namespace tunefuzz {
namespace {

// Line 1 of most documents below: a valid gpu section written on one line, so that the raw string after
// it starts at line 2.
const std::string gpu_line =
    "gpu: {name: Test GPU, arch: sm_90, limits: {shared_memory_per_block_optin: 232448, "
    "shared_memory_per_sm: 233472, registers_per_sm: 65536, sm_count: 132}}\n";

// The rest of a valid document, appended after the part a test is about.
const std::string tail = "templates: [{name: gemm_mma}]\noutput: out.yaml\n";

/// Passes when parsing `text` throws Error{bad_input} at `line` (1-based, with a column) for `field`
/// with a message containing `fragment`.
::testing::AssertionResult fails_with(const std::string& text, int line, const std::string& field,
                                      const std::string& fragment) {
  try {
    parse_config(text, "test.yaml");
  } catch (const Error& error) {
    const SourceLocation& where = error.where();
    const bool matches = error.kind() == ErrorKind::bad_input && where.file == "test.yaml" &&
                         where.line == line && where.column > 0 && where.field == field &&
                         error.message().find(fragment) != std::string::npos;
    if (matches) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "expected bad_input at line " << line << " field '" << field << "' containing '" << fragment
           << "'; got " << to_string(error.kind()) << " (line " << where.line << ", column " << where.column
           << ", field '" << where.field << "'): " << error.what();
  } catch (const std::exception& error) {
    return ::testing::AssertionFailure() << "a non-tunefuzz exception escaped: " << error.what();
  }
  return ::testing::AssertionFailure() << "parsed without error";
}

// ---------------------------------------------------------------------------------------------------
// Valid documents

const char* const complete_document = R"(# line 1: every key given
gpu:
  name: NVIDIA H100 80GB HBM3
  arch: sm_90a
  limits:
    shared_memory_per_block_optin: 232448
    shared_memory_per_sm: 233472
    registers_per_sm: 65536
    sm_count: 132
    shared_memory_reserved_per_block: 0
    max_registers_per_thread: 254
    max_threads_per_block: 512
    max_threads_per_sm: 1536
    max_blocks_per_sm: 16
problems:
  - name: square_4096
    m: 4096
    n: 2048
    k: 1024
    precision: bf16
    output: fp32
    layout: CR
    alpha: 0.5
    beta: -1.25e0
  - name: tall.fp16-1
    m: 1
    n: 7
    k: 2147483647
    precision: fp16
templates:
  - name: gemm_mma
    space:
      BM: [64, 128, 256]
      BN: 128
      SPLIT_K: [-1, 0]
  - name: gemm_simt
pruning:
  min_blocks_per_sm: 2
  allow_spills: true
budgets:
  fuzz_cases: 7
  timing_warmup: 0
  timing_repeats: 3
  timing_screen_repeats: 2
  timing_finalists: 0
  candidate_timeout_s: 2.5
  fuzz_workers: 8
seed: 18446744073709551615
output: results/h100.yaml
)";

void expect_location(const SourceLocation& where, int line, int column, const std::string& field) {
  EXPECT_EQ(where.file, "complete.yaml");
  EXPECT_EQ(where.line, line);
  EXPECT_EQ(where.column, column);
  EXPECT_EQ(where.field, field);
}

TEST(Config, ParsesEveryFieldOfACompleteDocument) {
  const Config config = parse_config(complete_document, "complete.yaml");
  EXPECT_EQ(config.file, "complete.yaml");

  EXPECT_EQ(config.gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(config.gpu.arch, "sm_90a");
  expect_location(config.gpu.where, 3, 3, "gpu");
  const GpuLimits& limits = config.gpu.limits;
  EXPECT_EQ(limits.shared_memory_per_block_optin, 232448);
  EXPECT_EQ(limits.shared_memory_per_sm, 233472);
  EXPECT_EQ(limits.registers_per_sm, 65536);
  EXPECT_EQ(limits.sm_count, 132);
  EXPECT_EQ(limits.shared_memory_reserved_per_block, 0);
  EXPECT_EQ(limits.max_registers_per_thread, 254);
  EXPECT_EQ(limits.max_threads_per_block, 512);
  EXPECT_EQ(limits.max_threads_per_sm, 1536);
  EXPECT_EQ(limits.max_blocks_per_sm, 16);

  ASSERT_EQ(config.problems.size(), 2u);
  const Problem& square = config.problems[0];
  EXPECT_EQ(square.name, "square_4096");
  EXPECT_EQ(square.m, 4096);
  EXPECT_EQ(square.n, 2048);
  EXPECT_EQ(square.k, 1024);
  EXPECT_EQ(square.input, Precision::bf16);
  EXPECT_EQ(square.output, Precision::fp32);
  EXPECT_EQ(square.layout, (Layout{Order::col, Order::row}));
  EXPECT_EQ(square.alpha, 0.5);
  EXPECT_EQ(square.beta, -1.25);
  expect_location(square.where, 16, 5, "problems[0]");
  const Problem& tall = config.problems[1];
  EXPECT_EQ(tall.name, "tall.fp16-1");
  EXPECT_EQ(tall.k, 2147483647);  // the largest dimension (cuBLAS counts in int)
  EXPECT_EQ(tall.input, Precision::fp16);
  expect_location(tall.where, 25, 5, "problems[1]");

  ASSERT_EQ(config.templates.size(), 2u);
  const TemplateSearch& mma = config.templates[0];
  EXPECT_EQ(mma.name, "gemm_mma");
  expect_location(mma.where, 31, 5, "templates[0]");
  ASSERT_EQ(mma.space.size(), 3u);  // in file order
  EXPECT_EQ(mma.space[0].name, "BM");
  EXPECT_EQ(mma.space[0].values, (std::vector<int64_t>{64, 128, 256}));
  expect_location(mma.space[0].where, 33, 7, "templates[0].space.BM");
  EXPECT_EQ(mma.space[1].name, "BN");
  EXPECT_EQ(mma.space[1].values, (std::vector<int64_t>{128}));  // a scalar is a one-element list
  expect_location(mma.space[1].where, 34, 7, "templates[0].space.BN");
  EXPECT_EQ(mma.space[2].name, "SPLIT_K");
  EXPECT_EQ(mma.space[2].values, (std::vector<int64_t>{-1, 0}));
  EXPECT_EQ(config.templates[1].name, "gemm_simt");
  EXPECT_TRUE(config.templates[1].space.empty());
  expect_location(config.templates[1].where, 36, 5, "templates[1]");

  EXPECT_EQ(config.pruning.min_blocks_per_sm, 2);
  EXPECT_TRUE(config.pruning.allow_spills);
  EXPECT_EQ(config.budgets.fuzz_cases, 7);
  EXPECT_EQ(config.budgets.timing_warmup, 0);
  EXPECT_EQ(config.budgets.timing_repeats, 3);
  EXPECT_EQ(config.budgets.timing_screen_repeats, 2);
  EXPECT_EQ(config.budgets.timing_finalists, 0);
  EXPECT_EQ(config.budgets.candidate_timeout_s, 2.5);
  EXPECT_EQ(config.budgets.fuzz_workers, 8);
  EXPECT_EQ(config.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(config.output, "results/h100.yaml");
}

TEST(Config, OmittedKeysTakeTheirDefaults) {
  const Config config = parse_config(gpu_line + R"(problems:
  - name: p
    m: 1
    n: 2
    k: 3
    precision: fp16
templates:
  - name: gemm_mma
output: out.yaml
)",
                                     "defaults.yaml");
  const GpuLimits& limits = config.gpu.limits;
  EXPECT_EQ(limits.shared_memory_reserved_per_block, 1024);
  EXPECT_EQ(limits.max_registers_per_thread, 255);
  EXPECT_EQ(limits.max_threads_per_block, 1024);
  EXPECT_EQ(limits.max_threads_per_sm, 2048);
  EXPECT_EQ(limits.max_blocks_per_sm, 32);
  ASSERT_EQ(config.problems.size(), 1u);
  const Problem& problem = config.problems[0];
  EXPECT_EQ(problem.output, Precision::fp16);  // same as the input precision
  EXPECT_EQ(problem.layout, (Layout{Order::row, Order::row}));
  EXPECT_EQ(problem.alpha, 1.0);
  EXPECT_EQ(problem.beta, 0.0);
  EXPECT_TRUE(config.templates[0].space.empty());
  EXPECT_EQ(config.pruning.min_blocks_per_sm, 1);
  EXPECT_FALSE(config.pruning.allow_spills);
  EXPECT_EQ(config.budgets.fuzz_cases, 100);
  EXPECT_EQ(config.budgets.timing_warmup, 5);
  EXPECT_EQ(config.budgets.timing_repeats, 30);
  EXPECT_EQ(config.budgets.timing_screen_repeats, 3);
  EXPECT_EQ(config.budgets.timing_finalists, 8);
  EXPECT_EQ(config.budgets.candidate_timeout_s, 120.0);
  EXPECT_EQ(config.budgets.fuzz_workers, 4);
  EXPECT_EQ(config.budgets.strategy, StrategyKind::exhaustive);
  EXPECT_EQ(config.budgets.fuzz_screen_cases, 0);  // no screen: every candidate gets fuzz_cases
  EXPECT_EQ(config.seed, 0u);
}

TEST(Config, LoadsAFileAndNamesItInErrors) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("tunefuzz_test_config_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(file);
    out << complete_document;
  }
  const Config config = load_config(file);
  EXPECT_EQ(config.file, file);
  EXPECT_EQ(config.problems.at(0).where.file, file.string());
  {
    std::ofstream out(file);
    out << "gpu: [1]\n";
  }
  try {
    load_config(file);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    EXPECT_EQ(error.where().file, file.string());
    EXPECT_EQ(std::string(error.what()).rfind(file.string() + ":1:6: gpu: expected a map", 0), 0u)
        << error.what();
  }
  std::filesystem::remove(file);
}

TEST(Config, LoadsEveryShippedConfig) {
#ifndef TUNEFUZZ_SOURCE_DIR
  GTEST_SKIP() << "TUNEFUZZ_SOURCE_DIR is not defined for this build";
#else
  const std::filesystem::path directory = std::filesystem::path(TUNEFUZZ_SOURCE_DIR) / "configs";
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  if (files.empty()) GTEST_SKIP() << "no *.yaml files in " << directory << " yet";
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    try {
      const Config config = load_config(file);
      EXPECT_FALSE(config.problems.empty());
      EXPECT_FALSE(config.templates.empty());
    } catch (const Error& failure) {
      ADD_FAILURE() << failure.what();
    }
  }
#endif
}

// ---------------------------------------------------------------------------------------------------
// Error rules: one test per rule, each case asserting line, field path and a message fragment.

TEST(ConfigErrors, UnknownKeyAtEveryLevelIsReportedAtTheKey) {
  EXPECT_TRUE(fails_with(gpu_line + "bogus: 1\n" + tail, 2, "bogus",
                         "unknown key 'bogus' (expected one of: gpu, problems, templates, pruning, budgets, "
                         "seed, output)"));
  EXPECT_TRUE(fails_with(R"(gpu:
  name: card
  arch: sm_80
  colour: green
)",
                         4, "gpu.colour", "unknown key 'colour' (expected one of: name, arch, limits)"));
  EXPECT_TRUE(fails_with(R"(gpu:
  name: card
  arch: sm_80
  limits:
    sm_count: 108
    l2_bytes: 1
)",
                         6, "gpu.limits.l2_bytes", "unknown key 'l2_bytes' (expected one of: shared_memory"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems:
  - name: a
    m: 1
    bogus: 2
)" + tail,
                         5, "problems[0].bogus",
                         "unknown key 'bogus' (expected one of: name, m, n, k, precision, output, layout, "
                         "alpha, beta)"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    spaces: {BM: 1}
)",
                         5, "templates[0].spaces", "unknown key 'spaces' (expected one of: name, space)"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
pruning:
  allow_spill: true
)" + tail,
                         4, "pruning.allow_spill",
                         "unknown key 'allow_spill' (expected one of: min_blocks_per_sm, allow_spills)"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
budgets:
  repeats: 3
)" + tail,
                         4, "budgets.repeats", "unknown key 'repeats' (expected one of: fuzz_cases"));
}

TEST(ConfigErrors, UnknownKeyColumnPointsAtTheKey) {
  try {
    parse_config(gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16, bogus: 2}]\n" + tail,
                 "test.yaml");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().line, 2);
    EXPECT_EQ(error.where().column, 57);
    EXPECT_EQ(error.where().str(), "test.yaml:2:57: problems[0].bogus");
  }
}

TEST(ConfigErrors, WrongTypesAreNamed) {
  const std::string problem_head =
      gpu_line + "problems:\n  - name: a\n";  // the problem's keys start at line 4
  EXPECT_TRUE(fails_with(problem_head + "    m: abc\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
                         "problems[0].m", "expected an integer, got 'abc'"));
  EXPECT_TRUE(fails_with(problem_head + "    m: 1.5\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
                         "problems[0].m", "expected an integer, got '1.5'"));
  EXPECT_TRUE(fails_with(problem_head + "    m: \"12\"\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
                         "problems[0].m", "expected an integer, got the quoted string \"12\""));
  EXPECT_TRUE(fails_with(problem_head + "    m: [1]\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
                         "problems[0].m", "expected an integer, got a list"));
  EXPECT_TRUE(fails_with(problem_head + "    m:\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
                         "problems[0].m", "expected an integer, got an empty value"));
  EXPECT_TRUE(
      fails_with(problem_head + "    m: 1\n    n: 1\n    k: 1\n    precision: bf16\n    alpha: one\n" + tail,
                 8, "problems[0].alpha", "expected a number, got 'one'"));
  EXPECT_TRUE(
      fails_with(problem_head + "    m: 1\n    n: 1\n    k: 1\n    precision: bf16\n    beta: .nan\n" + tail,
                 8, "problems[0].beta", "must be finite, got .nan"));
  EXPECT_TRUE(
      fails_with(gpu_line + "problems: {name: a}\n" + tail, 2, "problems", "expected a list, got a map"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space:
      BM: {small: 64}
output: out.yaml
)",
                         6, "templates[0].space.BM", "expected an integer or a list of integers, got a map"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space: [BM, 64]
output: out.yaml
)",
                         5, "templates[0].space", "expected a map, got a list"));
  EXPECT_TRUE(fails_with(gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\npruning:\n" +
                             "  allow_spills: maybe\n" + tail,
                         4, "pruning.allow_spills", "expected true or false, got 'maybe'"));
  EXPECT_TRUE(fails_with(gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n" +
                             "templates: [{name: gemm_mma}]\noutput: [a, b]\n",
                         4, "output", "expected a string, got a list"));
  EXPECT_TRUE(fails_with("gpu: [1]\n", 1, "gpu", "expected a map, got a list"));
  EXPECT_TRUE(fails_with("- gpu\n", 1, "", "expected a map, got a list"));
}

TEST(ConfigErrors, SizesAndCountsMustBePositive) {
  const std::string problem_head = gpu_line + "problems:\n  - name: a\n";
  EXPECT_TRUE(fails_with(problem_head + "    m: -5\n    n: 1\n    k: 1\n    precision: bf16\n" + tail, 4,
                         "problems[0].m", "must be >= 1, got -5"));
  EXPECT_TRUE(fails_with(problem_head + "    m: 1\n    n: 0\n    k: 1\n    precision: bf16\n" + tail, 5,
                         "problems[0].n", "must be >= 1, got 0"));
  EXPECT_TRUE(fails_with(R"(gpu:
  name: card
  arch: sm_80
  limits:
    shared_memory_per_block_optin: 166912
    shared_memory_per_sm: 167936
    registers_per_sm: 65536
    sm_count: 0
)",
                         8, "gpu.limits.sm_count", "must be >= 1, got 0"));
  EXPECT_TRUE(fails_with(R"(gpu:
  name: card
  arch: sm_80
  limits:
    shared_memory_per_block_optin: 166912
    shared_memory_per_sm: 167936
    registers_per_sm: 65536
    sm_count: 108
    shared_memory_reserved_per_block: -1
)",
                         9, "gpu.limits.shared_memory_reserved_per_block", "must be >= 0, got -1"));
  const std::string valid_problems = gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n";
  EXPECT_TRUE(fails_with(valid_problems + "pruning:\n  min_blocks_per_sm: 0\n" + tail, 4,
                         "pruning.min_blocks_per_sm", "must be >= 1, got 0"));
  EXPECT_TRUE(fails_with(valid_problems + "budgets:\n  timing_warmup: -1\n" + tail, 4,
                         "budgets.timing_warmup", "must be >= 0, got -1"));
  EXPECT_TRUE(fails_with(valid_problems + "budgets:\n  fuzz_workers: 0\n" + tail, 4, "budgets.fuzz_workers",
                         "must be >= 1, got 0"));
  EXPECT_TRUE(fails_with(valid_problems + "budgets:\n  candidate_timeout_s: 0\n" + tail, 4,
                         "budgets.candidate_timeout_s", "must be > 0, got 0"));
  EXPECT_TRUE(fails_with(valid_problems + "seed: -1\n" + tail, 3, "seed", "must be >= 0, got -1"));
}

TEST(ConfigErrors, AFuzzScreenIsAPositiveCount) {
  const std::string valid_problems = gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n";
  EXPECT_EQ(parse_config(valid_problems + "budgets:\n  fuzz_screen_cases: 20\n" + tail, "screen.yaml")
                .budgets.fuzz_screen_cases,
            20);
  EXPECT_TRUE(fails_with(valid_problems + "budgets:\n  fuzz_screen_cases: 0\n" + tail, 4,
                         "budgets.fuzz_screen_cases", "must be >= 1, got 0"));
}

TEST(ConfigErrors, AnUnknownStrategyIsNamedWithTheOnesThereAre) {
  const std::string valid_problems = gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n";
  EXPECT_TRUE(fails_with(valid_problems + "budgets:\n  fuzz_cases: 5\n  strategy: greedy\n" + tail, 5,
                         "budgets.strategy", "unknown strategy 'greedy' (expected exhaustive, halving or model)"));
  EXPECT_TRUE(fails_with(valid_problems + "budgets:\n  strategy: [halving]\n" + tail, 4, "budgets.strategy", ""));
  for (StrategyKind kind : all_strategies()) {
    const Config config = parse_config(
        valid_problems + "budgets:\n  strategy: " + to_string(kind) + "\n" + tail, "strategy.yaml");
    EXPECT_EQ(config.budgets.strategy, kind);
  }
}

TEST(ConfigErrors, EmptyListsAreRejected) {
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space:
      BM: []
output: out.yaml
)",
                         6, "templates[0].space.BM", "empty list: give at least one value"));
  EXPECT_TRUE(
      fails_with(gpu_line + "problems: []\n" + tail, 2, "problems", "empty list: give at least one problem"));
  EXPECT_TRUE(fails_with(gpu_line +
                             "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\ntemplates: []\n" +
                             "output: out.yaml\n",
                         3, "templates", "empty list: give at least one template"));
}

TEST(ConfigErrors, UnknownPrecisionOutputAndLayoutAreRejected) {
  const std::string head = gpu_line + "problems:\n  - {name: a, m: 1, n: 1, k: 1, ";
  EXPECT_TRUE(fails_with(head + "precision: fp8}\n" + tail, 3, "problems[0].precision",
                         "unknown precision 'fp8' (expected fp16, bf16, fp32, tf32, fp8e4m3 or fp8e5m2)"));
  EXPECT_TRUE(fails_with(head + "precision: bf16, output: int8}\n" + tail, 3, "problems[0].output",
                         "unknown output type 'int8' (expected fp16, bf16 or fp32)"));
  EXPECT_TRUE(fails_with(head + "precision: bf16, layout: RT}\n" + tail, 3, "problems[0].layout",
                         "unknown layout 'RT' (expected RR, RC, CR or CC)"));
  EXPECT_TRUE(fails_with(head + "precision: bf16, layout: rr}\n" + tail, 3, "problems[0].layout",
                         "unknown layout 'rr'"));
  // fp32 is a valid output type.
  const Config config = parse_config(head + "precision: fp16, output: fp32}\n" + tail, "test.yaml");
  EXPECT_EQ(config.problems[0].output, Precision::fp32);
  // ... and a valid input type (gemm_simt computes it), whose output defaults to fp32 too.
  const Config fp32 = parse_config(head + "precision: fp32}\n" + tail, "test.yaml");
  EXPECT_EQ(fp32.problems[0].input, Precision::fp32);
  EXPECT_EQ(fp32.problems[0].output, Precision::fp32);
}

TEST(Config, Tf32AndFp8InputsTakeTheirOutputDefaults) {
  const std::string head = gpu_line + "problems:\n  - {name: a, m: 1, n: 1, k: 1, ";
  const auto problem_of = [&](const std::string& fields) {
    return parse_config(head + fields + "}\n" + tail, "test.yaml").problems.at(0);
  };
  // tf32 inputs: C is fp32, by default and when written.
  EXPECT_EQ(problem_of("precision: tf32").input, Precision::tf32);
  EXPECT_EQ(problem_of("precision: tf32").output, Precision::fp32);
  EXPECT_EQ(problem_of("precision: tf32, output: fp32").output, Precision::fp32);
  // fp8 inputs: C is bf16 by default, and may be bf16, fp16 or fp32 (or their own type: below).
  for (const char* fp8 : {"fp8e4m3", "fp8e5m2"}) {
    SCOPED_TRACE(fp8);
    const std::string precision = std::string("precision: ") + fp8;
    EXPECT_EQ(to_string(problem_of(precision).input), std::string(fp8));
    EXPECT_EQ(problem_of(precision).output, Precision::bf16);
    EXPECT_EQ(problem_of(precision + ", output: bf16").output, Precision::bf16);
    EXPECT_EQ(problem_of(precision + ", output: fp16").output, Precision::fp16);
    EXPECT_EQ(problem_of(precision + ", output: fp32").output, Precision::fp32);
  }
  // The older types keep their own type as the default output.
  EXPECT_EQ(problem_of("precision: fp16").output, Precision::fp16);
  EXPECT_EQ(problem_of("precision: bf16").output, Precision::bf16);
}

TEST(Config, Fp8InputsMayWriteTheirOwnType) {
  const std::string head = gpu_line + "problems:\n  - {name: a, m: 1, n: 1, k: 1, ";
  for (const Precision fp8 : {Precision::fp8e4m3, Precision::fp8e5m2}) {
    SCOPED_TRACE(to_string(fp8));
    const std::string type = to_string(fp8);
    const Config config =
        parse_config(head + "precision: " + type + ", output: " + type + "}\n" + tail, "test.yaml");
    EXPECT_EQ(config.problems[0].input, fp8);
    EXPECT_EQ(config.problems[0].output, fp8);
  }
}

TEST(ConfigErrors, Tf32IsNeverAnOutputAndFp8OnlyForItsOwnInputs) {
  const std::string head = gpu_line + "problems:\n  - {name: a, m: 1, n: 1, k: 1, ";
  const auto refused = [&](const std::string& input, const std::string& output, const std::string& message) {
    SCOPED_TRACE(input + " -> " + output);
    EXPECT_TRUE(fails_with(head + "precision: " + input + ", output: " + output + "}\n" + tail, 3,
                           "problems[0].output", message));
  };
  // tf32 inputs write fp32 only.
  for (const char* output : {"bf16", "fp16"})
    refused("tf32", output,
            std::string("output type ") + output + " is not supported with tf32 inputs (expected fp32)");
  // No input type writes tf32.
  for (const char* input : {"fp8e4m3", "bf16", "fp32"})
    refused(input, "tf32",
            std::string("output type tf32 is not supported with ") + input + " inputs (expected ");
  refused("bf16", "tf32",
          "output type tf32 is not supported with bf16 inputs (expected fp16, bf16 or fp32; tf32 is an input "
          "type only)");
  // fp8 outputs need fp8 inputs of the same type.
  refused(
      "fp8e5m2", "fp8e4m3",
      "output type fp8e4m3 is not supported with fp8e5m2 inputs (expected fp16, bf16, fp32 or fp8e5m2; an "
      "fp8 output needs fp8 inputs of the same type)");
  refused(
      "fp8e4m3", "fp8e5m2",
      "output type fp8e5m2 is not supported with fp8e4m3 inputs (expected fp16, bf16, fp32 or fp8e4m3; an "
      "fp8 output needs fp8 inputs of the same type)");
  for (const char* input : {"bf16", "fp16", "fp32", "tf32"})
    for (const char* output : {"fp8e4m3", "fp8e5m2"})
      refused(input, output,
              std::string("output type ") + output + " is not supported with " + input + " inputs");
  EXPECT_TRUE(fails_with(head + "precision: fp8e4m3, output: fp8}\n" + tail, 3, "problems[0].output",
                         "unknown output type 'fp8' (expected fp16, bf16, fp32 or fp8e4m3)"));
  EXPECT_TRUE(fails_with(head + "precision: FP8E4M3}\n" + tail, 3, "problems[0].precision",
                         "unknown precision 'FP8E4M3'"));
}

TEST(ConfigErrors, NamesMustHaveTheirShape) {
  EXPECT_TRUE(fails_with("gpu: {name: card, arch: sm90}\n", 1, "gpu.arch", "invalid arch 'sm90'"));
  EXPECT_TRUE(fails_with("gpu: {name: card, arch: sm_90b}\n", 1, "gpu.arch", "invalid arch 'sm_90b'"));
  EXPECT_TRUE(fails_with("gpu: {name: '', arch: sm_90}\n", 1, "gpu.name", "must not be empty"));
  EXPECT_TRUE(fails_with(gpu_line + "problems: [{name: 'a b', m: 1, n: 1, k: 1, precision: bf16}]\n" + tail,
                         2, "problems[0].name", "invalid problem name 'a b'"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space:
      BM: 64
      bn: 64
output: out.yaml
)",
                         7, "templates[0].space.bn", "invalid parameter name 'bn'"));
}

TEST(ConfigErrors, DuplicateProblemNamesAreReportedAtTheSecond) {
  EXPECT_TRUE(fails_with(gpu_line + R"(problems:
  - {name: square, m: 1, n: 1, k: 1, precision: bf16}
  - {name: other, m: 1, n: 1, k: 1, precision: bf16}
  - {name: square, m: 2, n: 2, k: 2, precision: fp16}
)" + tail,
                         5, "problems[2].name",
                         "duplicate problem name 'square' (first used by problems[0] at line 3)"));
}

TEST(ConfigErrors, DuplicateMappingKeysAreReportedAtTheSecond) {
  EXPECT_TRUE(fails_with(
      gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n" + "output: first.yaml\n" + tail,
      5, "output", "duplicate key 'output' (first given at line 3)"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems:
  - name: a
    m: 1
    n: 1
    m: 2
)" + tail,
                         6, "problems[0].m", "duplicate key 'm' (first given at line 4)"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space:
      BM: [64, 128]
      BN: 128
      BM: 256
output: out.yaml
)",
                         8, "templates[0].space.BM", "duplicate key 'BM' (first given at line 6)"));
}

TEST(ConfigErrors, MissingRequiredKeysAreReportedAtTheMapThatLacksThem) {
  EXPECT_TRUE(fails_with(gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n" +
                             "templates: [{name: gemm_mma}]\n",
                         1, "output", "missing required key 'output'"));
  EXPECT_TRUE(fails_with("# a comment first\nproblems: []\n", 2, "gpu", "missing required key 'gpu'"));
  EXPECT_TRUE(fails_with(R"(gpu:
  name: card
  limits: {sm_count: 1}
)",
                         2, "gpu.arch", "missing required key 'arch'"));
  EXPECT_TRUE(fails_with(R"(gpu:
  name: card
  arch: sm_80
  limits:
    shared_memory_per_block_optin: 166912
    shared_memory_per_sm: 167936
    registers_per_sm: 65536
)",
                         5, "gpu.limits.sm_count", "missing required key 'sm_count'"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems:
  - name: a
    m: 1
    n: 1
    precision: bf16
)" + tail,
                         3, "problems[0].k", "missing required key 'k'"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - space: {BM: 64}
output: out.yaml
)",
                         4, "templates[0].name", "missing required key 'name'"));
}

TEST(ConfigErrors, AnEmptyFileIsRejected) {
  EXPECT_TRUE(fails_with("", 1, "", "empty config"));
  EXPECT_TRUE(fails_with("# nothing but a comment\n\n", 1, "", "empty config"));
}

TEST(ConfigErrors, YamlSyntaxErrorsCarryTheirPosition) {
  EXPECT_TRUE(
      fails_with(gpu_line + "problems: [{name: a, m: 1\ntemplates: []\n", 3, "", "YAML syntax error"));
  EXPECT_TRUE(fails_with("gpu:\n  name: a\n arch: sm_80\n", 3, "", "YAML syntax error"));
  EXPECT_TRUE(fails_with(gpu_line + "---\nseed: 1\n", 3, "", "found a second one"));
}

TEST(ConfigErrors, AMissingFileIsAnIoErrorNamingThePath) {
  const std::filesystem::path missing = "/nonexistent/tunefuzz/missing.yaml";
  try {
    load_config(missing);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::io);
    EXPECT_NE(error.message().find(missing.string()), std::string::npos) << error.what();
  }
  try {
    load_config(std::filesystem::temp_directory_path());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::bad_input);  // the user handed a directory: bad input, exit code 2
    EXPECT_NE(error.message().find("directory"), std::string::npos) << error.what();
  }
}

TEST(ConfigErrors, IntegersThatOverflowAreRejected) {
  const std::string head = gpu_line + "problems:\n  - {name: a, n: 1, k: 1, precision: bf16, ";
  EXPECT_TRUE(fails_with(head + "m: 9223372036854775808}\n" + tail, 3, "problems[0].m",
                         "integer out of range: '9223372036854775808' does not fit"));
  EXPECT_TRUE(fails_with(head + "m: 123456789012345678901234567890}\n" + tail, 3, "problems[0].m",
                         "integer out of range"));
  EXPECT_TRUE(fails_with(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space:
      BM: [64, -9223372036854775809]
output: out.yaml
)",
                         6, "templates[0].space.BM[1]", "integer out of range"));
  EXPECT_TRUE(fails_with(gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n" +
                             "seed: 18446744073709551616\n" + tail,
                         3, "seed", "integer out of range"));
  // The extremes themselves fit.
  const Config config = parse_config(gpu_line + R"(problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]
templates:
  - name: gemm_mma
    space: {X: [-9223372036854775808, 9223372036854775807]}
output: out.yaml
)",
                                     "test.yaml");
  EXPECT_EQ(config.templates[0].space[0].values,
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}));
}

// Law: for any text, parse_config returns or throws tunefuzz::Error of kind bad_input; no other exception
// escapes. Checked on every prefix of the complete document and on seeded single-byte mutations of it.
// Every numeric field has a range: a warp_size of 2^56 once passed `tune space` and crashed `tune compile`
// (the occupancy arithmetic overflowed into a division by zero); sizes and budgets likewise.
TEST(ConfigErrors, EveryNumberHasARange) {
  const std::string limits_head =
      "gpu: {name: G, arch: sm_90, limits: {shared_memory_per_block_optin: 232448, shared_memory_per_sm: "
      "233472, registers_per_sm: 65536, sm_count: 132, ";
  const std::string rest = "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n" + tail;
  EXPECT_TRUE(fails_with(limits_head + "warp_size: 72057594037927936}}\n" + rest, 1, "gpu.limits.warp_size",
                         "must be <= 1024"));
  EXPECT_TRUE(fails_with(limits_head + "max_threads_per_sm: 4294967296}}\n" + rest, 1,
                         "gpu.limits.max_threads_per_sm", "must be <="));
  const std::string head = gpu_line + "problems:\n  - {name: a, n: 1, k: 1, precision: bf16, ";
  EXPECT_TRUE(fails_with(head + "m: 2147483648}\n" + tail, 3, "problems[0].m", "must be <= 2147483647"));
  EXPECT_TRUE(fails_with(gpu_line + "problems:\n  - {name: a, m: 2000000000, n: 2000000000, k: 1, precision: "
                                    "bf16}\n" + tail,
                         3, "problems[0]", "m x n (C)"));
  const std::string problems = gpu_line + "problems: [{name: a, m: 1, n: 1, k: 1, precision: bf16}]\n" + tail;
  EXPECT_TRUE(fails_with(problems + "budgets: {fuzz_workers: 100000}\n", 5, "budgets.fuzz_workers", "<= 256"));
  EXPECT_TRUE(fails_with(problems + "budgets: {fuzz_cases: 10000000000}\n", 5, "budgets.fuzz_cases", "<="));
  EXPECT_TRUE(fails_with(problems + "budgets: {candidate_timeout_s: 1e300}\n", 5, "budgets.candidate_timeout_s",
                         "<= 604800"));
}

// A NUL byte, an unclosed quote and an alias bomb are named where they are, not taken for something else
// ("unknown escape character", "missing required key 'arch'", minutes of work and bad_alloc).
TEST(ConfigErrors, HostileYamlIsRefusedWhereItStands) {
  EXPECT_TRUE(fails_with(gpu_line + std::string("seed: 1\0\n", 9), 2, "", "NUL byte"));
  EXPECT_TRUE(fails_with("gpu: {name: G, arch: \"sm_90, limits: {}}\nproblems: []\n" + tail, 1, "",
                         "never closed"));
  std::string bomb = "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 10; ++i)
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  EXPECT_TRUE(fails_with(gpu_line + bomb + tail, 6, "", "more than 100000 nodes"));
  // Found by tests/test_hostile.cpp: an alias inside its own anchor made a cyclic graph that `show --json`
  // walked until the stack ran out.
  EXPECT_TRUE(fails_with(gpu_line + "x: &x [*x]\n" + tail, 2, "", "a cycle"));
}

// A config file is read through one door: a directory, a fifo with no writer or an endless device is refused
// at once, by type, instead of blocking forever or reading until memory runs out.
TEST(ConfigErrors, OnlyARegularFileOfBoundedSizeIsRead) {
  const std::filesystem::path fifo =
      std::filesystem::temp_directory_path() / ("tunefuzz-fifo-" + std::to_string(::getpid()));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::filesystem::path& odd : {fifo, std::filesystem::path("/dev/zero")}) {
    try {
      load_config(odd);
      ADD_FAILURE() << "read " << odd;
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::bad_input) << error.what();
      EXPECT_NE(error.message().find("not a regular file"), std::string::npos) << error.what();
    }
  }
  std::filesystem::remove(fifo);
  const std::filesystem::path big =
      std::filesystem::temp_directory_path() / ("tunefuzz-big-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(big).put('#');
  std::filesystem::resize_file(big, 5 << 20);
  try {
    load_config(big);
    ADD_FAILURE() << "read a 5 MiB config";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    EXPECT_NE(error.message().find("more than the 4 MiB"), std::string::npos) << error.what();
  }
  std::filesystem::remove(big);
}

TEST(ConfigErrors, NothingButErrorEverEscapes) {
  const std::string document = complete_document;
  auto check = [](const std::string& text) {
    try {
      parse_config(text, "test.yaml");
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::bad_input) << error.what();
    } catch (const std::exception& error) {
      ADD_FAILURE() << "escaped: " << error.what() << "\n--- input ---\n" << text;
    }
  };
  for (size_t length = 0; length <= document.size(); ++length) check(document.substr(0, length));

  const uint32_t seed = 20240611;
  SCOPED_TRACE("mutation seed " + std::to_string(seed));
  std::mt19937 random(seed);
  const std::string alphabet = ":-[]{},#&*!|>'\"%@` \n\tx0.";
  std::uniform_int_distribution<size_t> position(0, document.size() - 1);
  std::uniform_int_distribution<size_t> symbol(0, alphabet.size() - 1);
  for (int round = 0; round < 2000; ++round) {
    std::string mutated = document;
    mutated[position(random)] = alphabet[symbol(random)];
    check(mutated);
  }
}

}  // namespace
}  // namespace tunefuzz
