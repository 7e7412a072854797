// Tests of the search space (tuner/space) and of the host-side arithmetic it prunes with (the gemm_mma
// template's shared-memory and thread formulas, tuner/campaign/occupancy), stated as laws: the formulas
// give the figures worked out by hand below; a space keeps exactly the points that satisfy every
// constraint, counting each pruned point under the first rule it breaks; every constraint can be the one
// that fires; a config's mistakes are reported at the config's own file, line and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/space_checks.hpp"
#include "tuner/campaign/occupancy.hpp"
#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"
#include "tuner/space/space.hpp"
#include "runtime/templates/gemm_mma.hpp"

namespace tunefuzz {
namespace {

// ---- helpers ------------------------------------------------------------------------------------------

using test::failing;
using test::h100;
using test::pruned_counts;

/// The template's default point with `overrides` applied.
Point at(std::initializer_list<std::pair<const char*, int64_t>> overrides) {
  return test::point_with(gemm_mma_template(), overrides);
}

TemplateSearch search(std::vector<ParameterValues> space) {
  return test::search_of("gemm_mma", std::move(space));
}

// The first line of every config below (a one-line gpu section), so that the raw strings after it start
// at line 2.
const std::string gpu_line =
    "gpu: {name: H100, arch: sm_90, limits: {shared_memory_per_block_optin: 232448, "
    "shared_memory_per_sm: 233472, registers_per_sm: 65536, sm_count: 132}}\n";
const std::string problems_and_output =
    "problems: [{name: p, m: 64, n: 64, k: 64, precision: bf16}]\noutput: out.yaml\n";

// ---- 1. the shared-memory and thread formulas, by hand ------------------------------------------------

struct FormulaCase {
  Point point;
  int64_t shared_memory_bytes;
  int64_t threads;
};

TEST(GemmMmaFormulas, SharedMemoryAndThreadsMatchHandArithmetic) {
  // shared memory = STAGES * (BM*(BK+P) + BK*(BN+P)) * 2 bytes, P = 0 when SWIZZLE=1, 8 when SWIZZLE=0;
  // threads = (BM/WM) * (BN/WN) * 32.
  const std::vector<FormulaCase> cases = {
      // defaults: 3 * (128*32 + 32*128) * 2 = 3 * (4096 + 4096) * 2 = 49152; (128/64)*(128/64)*32 = 128
      {at({}), 49152, 128},
      // 4 * (256*64 + 64*128) * 2 = 4 * (16384 + 8192) * 2 = 196608; (256/64)*(128/64)*32 = 256
      {at({{"BM", 256}, {"BK", 64}, {"STAGES", 4}}), 196608, 256},
      // SWIZZLE=0 pads stored rows, and a stage holds either storage order: A max(128*(32+8), 32*(128+8)) =
      // 5120, B max(32*(128+8), 128*(32+8)) = 5120: 3 * (5120 + 5120) * 2 = 61440; 128 threads
      {at({{"SWIZZLE", 0}}), 61440, 128},
      // SWIZZLE=0: A max(64*(16+8), 16*(64+8)) = 1536, B max(16*(256+8), 256*(16+8)) = 6144:
      // 2 * (1536 + 6144) * 2 = 30720; (64/32)*(256/64)*32 = 256
      {at({{"BM", 64}, {"BN", 256}, {"BK", 16}, {"STAGES", 2}, {"WM", 32}, {"SWIZZLE", 0}}), 30720, 256},
      // SWIZZLE=0, non-power-of-two tiles: A max(192*40, 32*200) = 7680, B max(32*104, 96*40) = 3840:
      // 3 * (7680 + 3840) * 2 = 69120; (192/64)*(96/32)*32 = 288
      {at({{"BM", 192}, {"BN", 96}, {"WN", 32}, {"SWIZZLE", 0}}), 69120, 288},
      // 4 * (256*64 + 64*256) * 2 = 4 * 32768 * 2 = 262144 (over an H100's 232448); (256/64)^2*32 = 512
      {at({{"BM", 256}, {"BN", 256}, {"BK", 64}, {"STAGES", 4}}), 262144, 512},
      // 5 * (128*32 + 32*64) * 2 = 5 * (4096 + 2048) * 2 = 61440; (128/32)*(64/32)*32 = 256
      {at({{"BN", 64}, {"WM", 32}, {"WN", 32}, {"STAGES", 5}}), 61440, 256},
  };
  const KernelTemplate& t = gemm_mma_template();
  for (const FormulaCase& c : cases) {
    SCOPED_TRACE(c.point.str());
    EXPECT_EQ(t.shared_memory_bytes(c.point), c.shared_memory_bytes);
    EXPECT_EQ(t.threads_per_block(c.point), c.threads);
  }
}

TEST(GemmMmaFormulas, PackIsNotPartOfTheKernelsShape) {
  // PACK only changes what the launcher does before the GEMM: same threads, same shared memory.
  const KernelTemplate& t = gemm_mma_template();
  EXPECT_EQ(t.shared_memory_bytes(at({{"PACK", 1}})), t.shared_memory_bytes(at({{"PACK", 0}})));
  EXPECT_EQ(t.threads_per_block(at({{"PACK", 1}})), t.threads_per_block(at({{"PACK", 0}})));
}

TEST(GemmRules, Fp8InputsWriteTheirOwnTypeAndCNeedsOnlyItsElementsAlignment) {
  const KernelTemplate& fp8 = gemm_mma_fp8_template();
  for (const TypePair types :
       {TypePair{Precision::fp8e4m3, Precision::fp8e4m3}, TypePair{Precision::fp8e5m2, Precision::fp8e5m2}})
    EXPECT_NE(std::find(fp8.supported_types.begin(), fp8.supported_types.end(), types),
              fp8.supported_types.end());
  EXPECT_EQ(std::find(fp8.supported_types.begin(), fp8.supported_types.end(),
                      TypePair{Precision::fp8e5m2, Precision::fp8e4m3}),
            fp8.supported_types.end());
  // A C one byte past an aligned address: an fp8 C may start there, a 16-bit one may not.
  GemmShape shape{64, 64, 64, 64, 64, 64, Layout{Order::row, Order::col}};
  shape.c_alignment = 1;
  EXPECT_EQ(fp8.refusal(fp8.default_point(), shape), std::nullopt);
  shape.layout = Layout{};
  EXPECT_EQ(gemm_mma_template().refusal(gemm_mma_template().default_point(), shape),
            "C's base address is not aligned to its element size");
  shape.c_alignment = 2;
  EXPECT_EQ(gemm_mma_template().refusal(gemm_mma_template().default_point(), shape), std::nullopt);
}

// ---- 2. pruning against an H100's limits ---------------------------------------------------------------

TEST(SpacePrune, SixteenPointSpaceOnH100) {
  // BM, BN in {128, 256}, BK in {32, 64}, STAGES in {3, 4}; WM = WN = 64 and the rest at defaults.
  // 2*2*2*2 = 16 points. Every point passes positive, switch, warp_tiling, mma_shape, accumulators
  // (64*64/32 = 128 <= 128) and the later rules; threads are 128 (BM=BN=128), 256 (one of them 256) or
  // 512 (both 256), all <= 1024.
  // shared memory = STAGES * BK * (BM + BN) * 2 (SWIZZLE=1):
  //   BM+BN = 256: BK=32 -> 49152 / 65536; BK=64 -> 98304 / 131072      (STAGES 3 / 4)
  //   BM+BN = 384: BK=32 -> 73728 / 98304; BK=64 -> 147456 / 196608
  //   BM+BN = 512: BK=32 -> 98304 / 131072; BK=64 -> 196608 / 262144    <- 262144 > 232448: 1 point
  // register budget: per thread min(255, 65536 / threads) must hold 128 + 32 = 160:
  //   128 threads -> 255, 256 threads -> 255, 512 threads -> 128 < 160: the 4 BM=BN=256 points, of which
  //   one was already counted under shared_memory -> 3.
  // kept: 16 - 1 - 3 = 12, i.e. every point except BM = BN = 256.
  const Space space(gemm_mma_template(),
                    search({{"BM", {128, 256}, {}},
                            {"BN", {128, 256}, {}},
                            {"BK", {32, 64}, {}},
                            {"STAGES", {3, 4}, {}},
                            {"WM", {64}, {}},
                            {"WN", {64}, {}}}),
                    h100());
  EXPECT_EQ(space.size(), 16);
  const SpaceReport report = space.prune();
  EXPECT_EQ(report.kernel_template, &gemm_mma_template());
  EXPECT_EQ(report.enumerated, 16);
  ASSERT_EQ(report.pruned.size(), gemm_mma_template().constraints.size());
  for (size_t i = 0; i < report.pruned.size(); ++i) {
    EXPECT_EQ(report.pruned[i].constraint, gemm_mma_template().constraints[i].name);
    EXPECT_EQ(report.pruned[i].reason, gemm_mma_template().constraints[i].reason);
  }
  std::map<std::string, int64_t> expected;
  for (const Constraint& c : gemm_mma_template().constraints) expected[c.name] = 0;
  expected["shared_memory"] = 1;
  expected["register_budget"] = 3;
  EXPECT_EQ(pruned_counts(report), expected);

  // Kept points in enumeration order (last parameter fastest: BM, BN, BK, ..., STAGES).
  std::vector<Point> kept;
  for (auto [bm, bn] : {std::pair{128, 128}, {128, 256}, {256, 128}})
    for (int bk : {32, 64})
      for (int stages : {3, 4}) kept.push_back(at({{"BM", bm}, {"BN", bn}, {"BK", bk}, {"STAGES", stages}}));
  ASSERT_EQ(report.kept.size(), 12u);
  EXPECT_EQ(report.kept, kept);
}

TEST(SpacePrune, WarpTilesAndPackingFromYaml) {
  // BM = BN = 128; WM, WN in {32, 64, 128}; VEC in {4, 8}; PACK in {0, 1}: 3*3*2*2 = 36 points.
  // accumulators WM*WN/32 <= 128: 128x128 -> 512, 128x64 and 64x128 -> 256 fail; 3 warp tiles * 4 = 12.
  // The 6 other warp tiles pass threads (at most (128/32)^2*32 = 512) and register_budget
  //   (32x32: 512 threads -> 128 per thread >= 32+32; 32x64: 256 -> 255 >= 96; 64x64: 128 -> 255 >= 160;
  //    32x128 and 128x32: 128 -> 255 >= 128+32), and shared memory stays 49152.
  // pack_vector_width: PACK=1 with VEC=4 fails: 6 warp tiles * 1 = 6.
  // kept: 36 - 12 - 6 = 18.
  const Config config = parse_config(gpu_line + problems_and_output + R"(templates:
  - name: gemm_mma
    space:
      WM: [32, 64, 128]
      WN: [32, 64, 128]
      VEC: [4, 8]
      PACK: [0, 1]
)",
                                     "warp.yaml");
  const Space space(gemm_mma_template(), config.templates.at(0), config.gpu.limits);
  const SpaceReport report = space.prune();
  EXPECT_EQ(report.enumerated, 36);
  std::map<std::string, int64_t> expected;
  for (const Constraint& c : gemm_mma_template().constraints) expected[c.name] = 0;
  expected["accumulators"] = 12;
  expected["pack_vector_width"] = 6;
  EXPECT_EQ(pruned_counts(report), expected);
  EXPECT_EQ(report.kept.size(), 18u);
  for (const Point& p : report.kept) {
    SCOPED_TRACE(p.str());
    EXPECT_LE(p["WM"] * p["WN"] / 32, 128);  // never 128x64, 64x128 or 128x128
    EXPECT_FALSE(p["PACK"] == 1 && p["VEC"] == 4);
  }
}

TEST(SpacePrune, SharedMemoryExactlyAtTheLimitIsKeptOneByteOverIsPruned) {
  // 4 * (256*64 + 64*128) * 2 = 196608 bytes.
  const Point point = at({{"BM", 256}, {"BK", 64}, {"STAGES", 4}});
  ASSERT_EQ(gemm_mma_template().shared_memory_bytes(point), 196608);
  const TemplateSearch one_point = search({{"BM", {256}, {}}, {"BK", {64}, {}}, {"STAGES", {4}, {}}});

  GpuLimits exact = h100();
  exact.shared_memory_per_block_optin = 196608;
  const SpaceReport at_limit = Space(gemm_mma_template(), one_point, exact).prune();
  EXPECT_EQ(at_limit.enumerated, 1);
  ASSERT_EQ(at_limit.kept.size(), 1u);
  EXPECT_EQ(at_limit.kept[0], point);

  GpuLimits short_by_one = exact;
  short_by_one.shared_memory_per_block_optin = 196608 - 1;
  const SpaceReport over = Space(gemm_mma_template(), one_point, short_by_one).prune();
  EXPECT_EQ(over.enumerated, 1);
  EXPECT_TRUE(over.kept.empty());
  EXPECT_EQ(pruned_counts(over)["shared_memory"], 1);
}

TEST(SpacePrune, ThreadsRespectTheDevicesOwnLimit) {
  // The default point has 128 threads: kept on a device allowing 128 per block, pruned on one allowing 96.
  const TemplateSearch defaults = search({});
  GpuLimits limits = h100();
  limits.max_threads_per_block = 128;
  EXPECT_EQ(Space(gemm_mma_template(), defaults, limits).prune().kept.size(), 1u);
  limits.max_threads_per_block = 96;
  const SpaceReport report = Space(gemm_mma_template(), defaults, limits).prune();
  EXPECT_TRUE(report.kept.empty());
  EXPECT_EQ(pruned_counts(report)["threads"], 1);
}

TEST(SpacePrune, LeftOutParametersTakeTheirDefault) {
  const SpaceReport report = Space(gemm_mma_template(), search({}), h100()).prune();
  EXPECT_EQ(report.enumerated, 1);
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_EQ(report.kept[0], gemm_mma_template().default_point());
}

// ---- 3. every constraint can be the one that fires ------------------------------------------------------

TEST(SpaceConstraints, EveryConstraintCanFireAlone) {
  // For each rule, an assignment that breaks that rule and no other (arithmetic in the comments).
  const std::vector<std::pair<std::string, std::string>> breaks = {
      // GROUP_M is read by no other rule (--explain refuses 0; a config listing it is pruned here)
      {"positive", "GROUP_M=0"},
      // BK=32, BN=128 are powers of two, so swizzle_power_of_two still holds for SWIZZLE=2
      {"switch", "SWIZZLE=2"},
      {"switch", "PERSISTENT=2"},
      // a fifth bit: no storage order has it
      {"layouts", "LAYOUTS=16"},
      // 96 % 64 = 32 (SWIZZLE=0: BM = 96 is no power of two); threads (96/64)*(128/64)*32 = 64
      {"warp_tiling", "BM=96,SWIZZLE=0"},
      // 96 % 64 = 32 along N (SWIZZLE=0 allows BN = 96); (128/64)*(96/64)*32 = 64 threads
      {"warp_tiling", "BN=96,SWIZZLE=0"},
      // BK = 24 is no multiple of 16; SWIZZLE=0 so that a non-power-of-two BK is allowed;
      // 3*(max(128*32, 24*136) + max(24*136, 128*32))*2 = 49152 bytes
      {"mma_shape", "BK=24,SWIZZLE=0"},
      // WM = 24: 96/24 = 4 warps along M, 4*2*32 = 256 threads, 24*64/32 = 48 accumulators; BM = 96 is no
      // power of two, so SWIZZLE=0
      {"mma_shape", "BM=96,WM=24,SWIZZLE=0"},
      // WN = 8: 128/8 = 16 warps along N, 2*16*32 = 1024 threads; 65536/1024 = 64 >= 64*8/32 + 32 = 48
      {"mma_shape", "WN=8"},
      // (48/16)*(176/16)*32 = 3*11*32 = 1056 threads > 1024; registers: 65536/1056 = 62 >= 16*16/32 + 32 =
      // 40;
      // 3*(max(48*40, 32*56) + max(32*184, 176*40))*2 = 53760 bytes
      {"threads", "BM=48,BN=176,WM=16,WN=16,SWIZZLE=0"},
      // 4*(128*128 + 128*128)*2 = 262144 > 232448; 128 threads
      {"shared_memory", "BK=128,STAGES=4"},
      // 64*80/32 = 160 > 128 accumulators, but 160 + 32 = 192 <= min(255, 65536/32) registers;
      // (64/64)*(80/80)*32 = 32 threads; 3*(max(64*40, 32*72) + max(32*88, 80*40))*2 = 34560 bytes
      {"accumulators", "BM=64,BN=80,WM=64,WN=80,SWIZZLE=0"},
      // 512 threads -> 65536/512 = 128 registers per thread < 64*64/32 + 32 = 160; 3*32*512*2 = 98304 bytes
      {"register_budget", "BM=256,BN=256"},
      {"stages", "STAGES=1"},
      {"vector_width", "VEC=3"},
      // BK = 48 is a multiple of 16 but no power of two
      {"swizzle_power_of_two", "BK=48"},
      // BM = 96 (a column-major A tile is stored in rows of BM): (96/32)*(128/64)*32 = 192 threads
      {"swizzle_power_of_two", "BM=96,WM=32"},
      // BN = 96 = 3*32: (128/64)*(96/32)*32 = 192 threads; 3*(128*32 + 32*96)*2 = 43008 bytes
      {"swizzle_power_of_two", "BN=96,WN=32"},
      {"pack_vector_width", "PACK=1,VEC=4"},
  };
  const Space space(gemm_mma_template(), search({}), h100());
  test::expect_every_rule_fires_alone(space, breaks);
}

TEST(SpaceConstraints, APointBreakingOneRuleIsCountedUnderThatRuleByPrune) {
  // The same law through prune: a one-point space of BM=96 (warp_tiling only) is counted there.
  const SpaceReport report = Space(gemm_mma_template(), search({{"BM", {96}, {}}}), h100()).prune();
  EXPECT_TRUE(report.kept.empty());
  EXPECT_EQ(pruned_counts(report)["warp_tiling"], 1);
}

TEST(SpaceConstraints, APointBreakingSeveralRulesIsCountedOnceUnderTheFirst) {
  // STAGES=1 (stages) and VEC=3 (vector_width) and BK=24 (mma_shape, swizzle_power_of_two): mma_shape is
  // first in template order.
  const SpaceReport report =
      Space(gemm_mma_template(), search({{"STAGES", {1}, {}}, {"VEC", {3}, {}}, {"BK", {24}, {}}}), h100())
          .prune();
  std::map<std::string, int64_t> expected;
  for (const Constraint& c : gemm_mma_template().constraints) expected[c.name] = 0;
  expected["mma_shape"] = 1;
  EXPECT_EQ(pruned_counts(report), expected);
}

// ---- 4. errors in the config's space name the config's location ----------------------------------------

/// Passes when building a Space from `yaml`'s first template throws Error{bad_input} at `line`, column 7
/// (the parameter's key under `space:`), for `field`, with a message containing `fragment`.
::testing::AssertionResult space_fails_at(const std::string& yaml, int line, const std::string& field,
                                          const std::string& fragment) {
  const Config config = parse_config(yaml, "space.yaml");
  try {
    Space(gemm_mma_template(), config.templates.at(0), config.gpu.limits);
  } catch (const Error& error) {
    const SourceLocation& where = error.where();
    if (error.kind() == ErrorKind::bad_input && where.file == "space.yaml" && where.line == line &&
        where.column == 7 && where.field == field && error.message().find(fragment) != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "got " << to_string(error.kind()) << " at " << where.str() << ": " << error.what();
  }
  return ::testing::AssertionFailure() << "no error";
}

TEST(SpaceErrors, UnknownParameterIsReportedAtItsKey) {
  EXPECT_TRUE(space_fails_at(gpu_line + problems_and_output + R"(templates:   # line 4
  - name: gemm_mma
    space:
      BM: [64, 128]
      NOPE: [1, 2]
)",
                             8, "templates[0].space.NOPE", "has no parameter 'NOPE'"));
}

TEST(SpaceErrors, ValueListedTwiceIsReportedAtItsKey) {
  EXPECT_TRUE(space_fails_at(gpu_line + problems_and_output + R"(templates:   # line 4
  - name: gemm_mma
    space:
      BM: [64, 128]
      BK: [32, 64, 32]
)",
                             8, "templates[0].space.BK", "value 32 is listed twice"));
}

TEST(SpaceErrors, SecondTemplatesSpaceIsCheckedAtItsOwnLocation) {
  const Config config = parse_config(gpu_line + problems_and_output + R"(templates:   # line 4
  - name: gemm_mma
  - name: gemm_mma
    space: {STAGES: [2, 2]}
)",
                                     "space.yaml");
  EXPECT_NO_THROW(Space(gemm_mma_template(), config.templates.at(0), config.gpu.limits));
  try {
    Space(gemm_mma_template(), config.templates.at(1), config.gpu.limits);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    EXPECT_EQ(error.where().line, 7);
    EXPECT_EQ(error.where().field, "templates[1].space.STAGES");
  }
}

// ---- 5. explain ----------------------------------------------------------------------------------------

class SpaceExplain : public ::testing::Test {
 protected:
  const Space space{
      gemm_mma_template(),
      search({{"BM", {128, 256}, {}}, {"BN", {128, 256}, {}}, {"BK", {32, 64}, {}}, {"STAGES", {3, 4}, {}}}),
      h100()};
};

TEST_F(SpaceExplain, KeptPointInTheSpace) {
  // 4 * (128*64 + 64*256) * 2 = 196608 bytes; (128/64)*(256/64)*32 = 256 threads.
  const Explanation e = space.explain("BM=128,BN=256,BK=64,STAGES=4");
  EXPECT_EQ(e.point, at({{"BN", 256}, {"BK", 64}, {"STAGES", 4}}));
  EXPECT_TRUE(e.kept());
  EXPECT_TRUE(e.in_config_space);
  EXPECT_TRUE(e.not_in_space.empty());
  EXPECT_EQ(e.verdicts.size(), gemm_mma_template().constraints.size());
  EXPECT_EQ(e.shared_memory_bytes, 196608);
  EXPECT_EQ(e.threads, 256);
}

TEST_F(SpaceExplain, PrunedPointNamesTheRuleItBreaks) {
  // 512 threads: 65536/512 = 128 registers per thread < 160. 3*(256*32 + 32*256)*2 = 98304 bytes.
  const Explanation e = space.explain("BM=256,BN=256");
  EXPECT_FALSE(e.kept());
  EXPECT_TRUE(e.in_config_space);
  EXPECT_EQ(failing(e), std::vector<std::string>{"register_budget"});
  EXPECT_EQ(e.shared_memory_bytes, 98304);
  EXPECT_EQ(e.threads, 512);
}

TEST_F(SpaceExplain, EmptyAssignmentIsTheDefaultPoint) {
  const Explanation e = space.explain("");
  EXPECT_EQ(e.point, gemm_mma_template().default_point());
  EXPECT_TRUE(e.kept());
  EXPECT_TRUE(e.in_config_space);
}

TEST_F(SpaceExplain, ValuesTheConfigDoesNotListAreNamed) {
  // BM=64 is not in {128, 256}; VEC is not listed, so only its default 8 is in the space.
  const Explanation e = space.explain("VEC=4,BM=64");
  EXPECT_FALSE(e.in_config_space);
  EXPECT_EQ(e.not_in_space, (std::vector<std::string>{"BM", "VEC"}));  // in parameter order
  EXPECT_TRUE(e.kept());  // valid, merely outside this config's space
  EXPECT_EQ(e.point["BM"], 64);
  EXPECT_EQ(e.point["VEC"], 4);
}

/// The message of the bad_input error explaining `assignment` gives, or "(accepted)".
std::string explain_error(const Space& space, const std::string& assignment) {
  try {
    space.explain(assignment);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::bad_input) << assignment;
    return error.message();
  }
  return "(accepted)";
}

TEST_F(SpaceExplain, MalformedAssignmentsAreBadInput) {
  for (const std::string bad : {"BM", "BM=x", "NOPE=1", "BM=", "BM=12x", "BM=1=2", ",BM=128", "bm=128",
                                "BM=128,,BN=128", "BM=99999999999999999999"})
    EXPECT_NE(explain_error(space, bad), "(accepted)") << bad;
}

// --explain BM=16 (BM < WM) once divided by zero in a formula before the rule that prunes the point was
// checked; zeros, negative sizes and repeated keys crashed or were taken silently. Now every point that can be
// named is explained, and what cannot be is an error naming the key.
TEST_F(SpaceExplain, EveryNameablePointIsExplainedAndTheRestIsAnErrorNamingTheKey) {
  for (const std::string point : {"BM=16", "BN=16", "BM=16,BN=16", "WM=256", "WN=256", "BM=32,WM=64"}) {
    SCOPED_TRACE(point);
    EXPECT_FALSE(space.explain(point).kept());
  }
  for (const auto& [bad, key] : std::vector<std::pair<std::string, std::string>>{
           {"BM=0", "BM"}, {"WM=0", "WM"}, {"WN=-16", "WN"}, {"BM=128,BM=64", "BM"}, {"STAGES=70000", "STAGES"},
           {"BM=128,", ","}})
    EXPECT_NE(explain_error(space, bad).find(key), std::string::npos) << bad;
  EXPECT_NO_THROW(space.explain("SWIZZLE=0,PACK=0,PERSISTENT=0"));  // a switch may be 0
}

// A space is enumerated only up to a bound: five parameters of 40 values each once ran with no end in sight.
TEST(SpaceBounds, AHugeSpaceIsRefusedAtItsSearch) {
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= 40; ++v) values.push_back(v);
  TemplateSearch s = search({{"BM", values, {}}, {"BN", values, {}}, {"BK", values, {}}, {"WM", values, {}},
                             {"WN", values, {}}});
  s.where = {"big.yaml", 7, 5, "templates[0]"};
  try {
    Space(gemm_mma_template(), s, h100());
    FAIL() << "accepted a space of 40^5 points";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    EXPECT_EQ(error.where().line, 7);
    EXPECT_NE(error.message().find("102400000 points"), std::string::npos) << error.message();
  }
}

// A configured single value is the value explained, whatever it is: -1 once served as an "unset" marker
// here, so `space: {GROUP_M: -1}` was explained as GROUP_M=8, kept, and outside its own space.
TEST(SpaceExplainConfigured, SingleConfiguredValueIsExplainedAsItselfEvenMinusOne) {
  const Space space(gemm_mma_template(), search({{"GROUP_M", {-1}, {}}, {"STAGES", {4}, {}}}), h100());
  const SpaceReport report = space.prune();
  ASSERT_EQ(report.kept.size(), 0u);  // the space's one point is pruned by `positive`
  const Explanation e = space.explain("");
  EXPECT_EQ(e.point, at({{"GROUP_M", -1}, {"STAGES", 4}}));
  EXPECT_TRUE(e.in_config_space);
  EXPECT_TRUE(e.not_in_space.empty());
  EXPECT_EQ(failing(e), std::vector<std::string>{"positive"});
}

// ---- 6. occupancy --------------------------------------------------------------------------------------

TEST(Occupancy, RegisterLimited) {
  // 256 threads = 8 warps; 128 registers * 32 = 4096 per warp (a multiple of 256), 8 * 4096 = 32768 per block
  // -> 65536 / 4096 = 16 warps -> 16 / 8 = 2 blocks.
  // shared memory: 233472 / (49152 + 1024) = 233472 / 50176 = 4 (4*50176 = 200704). threads: 2048/256 = 8.
  const Occupancy o = occupancy(256, 128, 49152, h100());
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "registers");
}

TEST(Occupancy, SharedMemoryLimited) {
  // 128 threads = 4 warps; 64 * 32 = 2048 registers per warp -> 65536/2048 = 32 warps -> 8 blocks.
  // shared memory: 233472 / (100000 + 1024) = 233472 / 101024 = 2 (3 * 101024 = 303072 > 233472).
  // threads: 2048/128 = 16.
  const Occupancy o = occupancy(128, 64, 100000, h100());
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "shared_memory");
}

TEST(Occupancy, ReservedSharedMemoryCountsPerBlock) {
  // 57856 bytes alone would fit 4 times (4 * 57856 = 231424 <= 233472), but with the 1024 bytes the system
  // keeps per block, 233472 / 58880 = 3 (4 * 58880 = 235520 > 233472). Registers allow 8, threads 16.
  const Occupancy o = occupancy(128, 64, 57856, h100());
  EXPECT_EQ(o.blocks_per_sm, 3);
  EXPECT_EQ(o.limited_by, "shared_memory");
}

TEST(Occupancy, ThreadLimited) {
  // 1024 threads = 32 warps; 16 * 32 = 512 registers per warp -> 128 warps -> 4 blocks.
  // shared memory: 233472 / (0 + 1024) = 228. threads: 2048/1024 = 2.
  const Occupancy o = occupancy(1024, 16, 0, h100());
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "threads");
}

TEST(Occupancy, BlockLimited) {
  // 32 threads = 1 warp; 16 registers -> 512 per warp -> 128 blocks; threads 2048/32 = 64;
  // shared memory 233472/1024 = 228; the SM holds at most 32 blocks.
  const Occupancy o = occupancy(32, 16, 0, h100());
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limited_by, "blocks");
}

TEST(Occupancy, RegistersAreAllocatedPerWarpIn256s) {
  // 65 registers * 32 = 2080 per warp, allocated as 2304 (9 * 256) -> 65536 / 2304 = 28 blocks of one warp
  // (unrounded, 65536 / 2080 would give 31). threads: 64; shared memory: 228; blocks: 32.
  const Occupancy o = occupancy(32, 65, 0, h100());
  EXPECT_EQ(o.blocks_per_sm, 28);
  EXPECT_EQ(o.limited_by, "registers");
}

TEST(Occupancy, PartialWarpsCountAsWholeWarps) {
  // 100 threads round up to 4 warps (128 threads): 2048 / 128 = 16 blocks by threads; 128 registers
  // -> 4096 per warp -> 16 warps -> 4 blocks.
  const Occupancy o = occupancy(100, 128, 0, h100());
  EXPECT_EQ(o.blocks_per_sm, 4);
  EXPECT_EQ(o.limited_by, "registers");
}

}  // namespace
}  // namespace tunefuzz
