// Tests of the gemm_simt template (templates/gemm_simt.cu and its declaration,
// runtime/templates/gemm_simt.cpp), stated as laws: the shared-memory and thread formulas give the figures
// worked out by hand; every constraint can be the one that fires, and a point on either side of it falls on
// the side the rule says; a problem is refused exactly when a rule says so, naming the field to blame; every
// point the shipped configs keep compiles under NVRTC with the promised instructions and records the geometry
// the host computes; every impossible combination stops at its own static_assert, and the host rule of the
// same meaning prunes it first; every injected bug compiles to different code; the source holds nothing a HIP
// compiler lacks. NVRTC needs no GPU, so all of this runs anywhere (tests/test_gpu.cpp runs the kernel).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/backend/nvrtc_compiler.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_simt.hpp"
#include "templates/tile_map.h"
#include "tests/support/compile_checks.hpp"
#include "tests/support/space_checks.hpp"
#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"
#include "tuner/space/space.hpp"

namespace tunefuzz {
namespace {

using test::failing;
using test::h100;
using test::kernel_meta;
using test::pruned_counts;
using test::static_assert_messages;
using test::stops_at_static_assert;

// ---- helpers ------------------------------------------------------------------------------------------

const KernelTemplate& simt() {
  return gemm_simt_template();
}

/// The template's default point with `overrides` applied.
Point at(std::initializer_list<std::pair<const char*, int64_t>> overrides) {
  return test::point_with(simt(), overrides);
}

TemplateSearch search(std::vector<ParameterValues> space) {
  return test::search_of("gemm_simt", std::move(space));
}

/// Every constraint at 0, then `nonzero`.
std::map<std::string, int64_t> counts_with(std::map<std::string, int64_t> nonzero) {
  std::map<std::string, int64_t> counts;
  for (const Constraint& c : simt().constraints) counts[c.name] = 0;
  for (const auto& [name, count] : nonzero) counts[name] = count;
  return counts;
}

const TypePair kFp32{Precision::fp32, Precision::fp32};

const KernelSource& simt_source() {
  static const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_simt.cu");
  return source;
}

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

CompileRequest request_for(const Point& point, TypePair types = kFp32, int mutant = 0) {
  return CompileRequest{&simt_source(), simt().defines(point, types, mutant), "sm_90"};
}

/// Compiles each distinct request once per test run.
const CompiledKernel& compiled(const Point& point, int mutant = 0) {
  static std::map<std::string, CompiledKernel> memo;
  const CompileRequest request = request_for(point, kFp32, mutant);
  const std::string key = compiler().key(request);
  auto it = memo.find(key);
  if (it == memo.end()) it = memo.emplace(key, compiler().compile(request)).first;
  return it->second;
}

/// An fp32 problem of this shape, A and B stored as `layout` says.
Problem problem(int64_t m, int64_t n, int64_t k, Layout layout = {}) {
  Problem p;
  p.name = "p";
  p.m = m;
  p.n = n;
  p.k = k;
  p.input = p.output = Precision::fp32;
  p.layout = layout;
  return p;
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// The points a shipped config's gemm_simt spaces keep, in config order, without repeats.
std::vector<Point> shipped_points(const std::string& config_file) {
  const Config config = load_config(std::string(TUNEFUZZ_SOURCE_DIR "/configs/") + config_file);
  std::vector<Point> points;
  for (const TemplateSearch& s : config.templates) {
    if (s.name != "gemm_simt") continue;
    for (const Point& p : Space(simt(), s, config.gpu.limits).prune().kept)
      if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
  }
  return points;
}

// ---- 1. the declaration ---------------------------------------------------------------------------------

TEST(GemmSimtDeclaration, IsRegisteredAndComputesFp32Only) {
  EXPECT_EQ(&find_template("gemm_simt"), &simt());
  EXPECT_NE(std::find(all_templates().begin(), all_templates().end(), &simt()), all_templates().end());
  EXPECT_EQ(simt().source_file, "gemm_simt.cu");
  EXPECT_EQ(simt().entry_points,
            (std::vector<std::string>{"tf_gemm_rr", "tf_gemm_rc", "tf_gemm_cr", "tf_gemm_cc",
                                      "tf_gemm_split_rr", "tf_gemm_split_rc", "tf_gemm_split_cr",
                                      "tf_gemm_split_cc", "tf_scale_c", "tf_reduce", "tf_pack"}));
  EXPECT_EQ(simt().supported_types, std::vector<TypePair>{kFp32});
  // The parameters the fuzz and time stages read by name are all there.
  for (const char* name : {"BM", "BN", "BK", "STAGES", "VEC", "GROUP_M"})
    EXPECT_NE(simt().parameter(name), nullptr);
  const Candidate candidate{&simt(), at({{"BK", 16}, {"MIN_BLOCKS", 1}}), kFp32};
  const Candidate parsed = parse_candidate_id(candidate.id());
  EXPECT_EQ(parsed.kernel_template, &simt());
  EXPECT_EQ(parsed.point, candidate.point);
  EXPECT_EQ(parsed.types, kFp32);
}

TEST(GemmSimtDeclaration, EveryParameterIsADefineOfTheKernel) {
  // Names, defaults and define lines agree: `#define NAME DEFAULT` stands in the kernel for each parameter
  // but PACK and SPLIT_K, which the launcher alone reads (a PACK=1 or split candidate shares the image of its
  // twin without them).
  std::set<std::string> defined;
  for (const Define& d : simt().defines(simt().default_point(), kFp32)) defined.insert(d.name);
  for (const ParameterDecl& decl : simt().parameters) {
    SCOPED_TRACE(decl.name);
    if (decl.name == "PACK" || decl.name == "SPLIT_K") {
      EXPECT_FALSE(decl.compile_time);
      EXPECT_EQ(decl.minimum, decl.name == "PACK" ? 0 : 1);
      EXPECT_EQ(defined.count(decl.name), 0u);
      continue;
    }
    EXPECT_TRUE(decl.compile_time);
    EXPECT_EQ(defined.count(decl.name), 1u);
    EXPECT_TRUE(
        contains(simt_source().text, "#define " + decl.name + " " + std::to_string(decl.default_value)));
  }
}

// ---- 2. the shared-memory and thread formulas, by hand -------------------------------------------------

TEST(GemmSimtFormulas, SharedMemoryAndThreadsMatchHandArithmetic) {
  // shared memory = STAGES * BK * ((BM + 4) + (BN + 4)) * 4 bytes (A transposed, both padded by 4 floats a
  // row); threads = (BM/TM) * (BN/TN).
  struct Case {
    Point point;
    int64_t shared_memory_bytes, threads;
  };
  const std::vector<Case> cases = {
      // defaults: 2 * 8 * (132 + 132) * 4 = 16896; (128/8) * (128/8) = 256
      {at({}), 16896, 256},
      // 2 * 16 * 264 * 4 = 33792; 256
      {at({{"BK", 16}}), 33792, 256},
      // 2 * 8 * (68 + 68) * 4 = 8704; (64/4) * (64/4) = 256
      {at({{"BM", 64}, {"BN", 64}, {"TM", 4}, {"TN", 4}}), 8704, 256},
      // 2 * 8 * (132 + 68) * 4 = 12800; (128/8) * (64/4) = 256
      {at({{"BN", 64}, {"TN", 4}}), 12800, 256},
      // 3 * 8 * (68 + 132) * 4 = 19200; (64/8) * (128/8) = 128
      {at({{"BM", 64}, {"STAGES", 3}}), 19200, 128},
      // 2 * 32 * (260 + 132) * 4 = 100352; (256/16) * (128/8) = 256
      {at({{"BM", 256}, {"BK", 32}, {"TM", 16}}), 100352, 256},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.point.str());
    EXPECT_EQ(simt().shared_memory_bytes(c.point), c.shared_memory_bytes);
    EXPECT_EQ(simt().threads_per_block(c.point), c.threads);
    const LaunchGeometry g = simt().geometry(c.point, shape_of(problem(1000, 300, 8)));
    EXPECT_EQ(g.block_x, c.threads);
    EXPECT_EQ(g.shared_memory_bytes, c.shared_memory_bytes);
    EXPECT_EQ(g.workspace_bytes, 0);
  }
}

TEST(GemmSimtFormulas, GridIsOneCtaPerTileAndTheMapVisitsEachOnce) {
  // grid = ceil(M/BM) * ceil(N/BN); tf_tile_map (the kernel's own mapping) visits every tile exactly once.
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{1, 1}, {129, 64}, {1100, 264}, {4096, 4096}}) {
    for (const Point& p : {at({}), at({{"BM", 64}, {"GROUP_M", 3}})}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " " + p.str());
      const int64_t tiles_m = (m + p["BM"] - 1) / p["BM"], tiles_n = (n + p["BN"] - 1) / p["BN"];
      const LaunchGeometry g = simt().geometry(p, shape_of(problem(m, n, 64)));
      ASSERT_EQ(g.grid_x, tiles_m * tiles_n);
      std::set<std::pair<int64_t, int64_t>> seen;
      for (int64_t cta = 0; cta < g.grid_x; ++cta) {
        const TfTile t = tf_tile_map(cta, tiles_m, tiles_n, p["GROUP_M"], 1);
        ASSERT_TRUE(t.m >= 0 && t.m < tiles_m && t.n >= 0 && t.n < tiles_n);
        EXPECT_TRUE(seen.emplace(t.m, t.n).second) << "tile visited twice";
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), tiles_m * tiles_n);
    }
  }
}

// ---- 3. the space: the shipped configs, and each rule on both sides -----------------------------------

TEST(GemmSimtSpace, ShippedSpacesPruneAsWorkedOutByHand) {
  // First entry: BM, BN in {64, 128}, BK in {8, 16}, TM, TN in {4, 8}, VEC=4, MIN_BLOCKS=2: 32 points.
  // register_budget needs TM*TN + TM + TN + staged + 24 <= min(255, 65536 / (threads * 2)), where staged =
  // (ceil(BM*BK/4 / threads) + ceil(BK*BN/4 / threads)) * 4:
  //   BM=BN=128, TM=TN=4: 1024 threads -> 32 registers < 16 + 8 + 8 + 24 = 56            (BK 8, 16: 2 points)
  //   BM=BN=128, 4x8 or 8x4: 512 threads -> 64 < 32 + 12 + 8 + 24 = 76                   (2 tiles x 2 BK: 4)
  //   BM=BN=128, 8x8: 256 threads -> 128 >= 64 + 16 + 8 + 24 = 112 (BK=8), 120 (BK=16)   kept
  //   one side 64, 4x4: 512 threads -> 64 >= 16 + 8 + 8 + 24 = 56                        kept
  //   every other point has at most 256 threads -> 128 registers, and needs at most 120  kept
  // Second entry: BM=BN=128, BK in {8, 16}, TM=TN=8, MIN_BLOCKS=1: 256 threads -> 255 registers: 2 kept.
  // Third and fourth entries (narrow loads for odd N, K and leading dimensions), BK=8, TM=TN=8, MIN_BLOCKS=2:
  // VEC=1 with BM, BN in {64, 128} (4 points) and VEC=2 with BM in {64, 128}, BN=64 (2 points); the most
  // threads, 256 at BM=BN=128, leave 128 registers >= 64 + 16 + 24 + staged, staged = (ceil(1024 / 256) * 2)
  // * 1 = 8: all 6 kept.
  // Fifth entry (PACK=1 at VEC=4): BM and BN in {64, 128}, BK=16, TM=TN=8, MIN_BLOCKS=2, as in the first:
  // all four kept. They refuse the config's aligned fp32 problem (nothing to pack) and serve misaligned ones.
  // Sixth entry (split-K): BM in {32, 64}, BN in {64, 128}, BK=16, TM=TN=4, VEC=4, MIN_BLOCKS=2, PACK in {0,
  // 1}, SPLIT_K in {4, 16}: 16 points on four images. The most threads, 512 at 64x128, leave 64 registers >=
  // 16 + 8 + 24 + staged, staged = (ceil(256 / 512) + ceil(512 / 512)) * 4 = 8: all 16 kept. Shared memory is
  // at most 2 * 16 * 260 * 4 = 33280 bytes everywhere.
  // Seventh entry (128 outputs a thread): BM, BN in {128, 256}, BK in {8, 16}, TM=16, TN=8, MIN_BLOCKS=1,
  // PACK in {0, 1}: 16 points. 256x256 has 16 * 32 = 512 threads -> 128 registers < 128 + 24 + 24 + staged:
  // pruned (4 points). 128x256 and 256x128 have 256 threads -> 255 >= 128 + 24 + 24 + staged, staged at most
  // (2 + 4)
  // * 4 = 24 at BK=16; 128x128, 128 threads, likewise: 12 kept.
  for (const char* file : {"h100.yaml", "h200.yaml"}) {
    SCOPED_TRACE(file);
    const Config config = load_config(std::string(TUNEFUZZ_SOURCE_DIR "/configs/") + file);
    std::vector<SpaceReport> reports;
    for (const TemplateSearch& s : config.templates)
      if (s.name == "gemm_simt") reports.push_back(Space(simt(), s, config.gpu.limits).prune());
    ASSERT_EQ(reports.size(), 7u);
    EXPECT_EQ(reports[0].enumerated, 32);
    EXPECT_EQ(pruned_counts(reports[0]), counts_with({{"register_budget", 6}}));
    EXPECT_EQ(reports[0].kept.size(), 26u);
    for (const Point& p : reports[0].kept) {
      SCOPED_TRACE(p.str());
      EXPECT_FALSE(p["BM"] == 128 && p["BN"] == 128 && p["TM"] * p["TN"] < 64);
    }
    EXPECT_EQ(reports[1].enumerated, 2);
    EXPECT_EQ(pruned_counts(reports[1]), counts_with({}));
    EXPECT_EQ(reports[1].kept,
              (std::vector<Point>{at({{"MIN_BLOCKS", 1}}), at({{"BK", 16}, {"MIN_BLOCKS", 1}})}));
    for (const auto& [entry, vec, kept] : {std::tuple{2, 1, 4u}, std::tuple{3, 2, 2u}}) {
      EXPECT_EQ(reports[entry].enumerated, static_cast<int64_t>(kept));
      EXPECT_EQ(pruned_counts(reports[entry]), counts_with({}));
      EXPECT_EQ(reports[entry].kept.size(), kept);
      for (const Point& p : reports[entry].kept) EXPECT_EQ(p["VEC"], vec) << p.str();
    }
    // Every point computes the config's fp32 problem.
    const auto fp32 = std::find_if(config.problems.begin(), config.problems.end(),
                                   [](const Problem& p) { return p.name == "square_4096_fp32"; });
    ASSERT_NE(fp32, config.problems.end());
    EXPECT_EQ(fp32->input, Precision::fp32);
    EXPECT_EQ(fp32->output, Precision::fp32);
    EXPECT_EQ(std::tie(fp32->m, fp32->n, fp32->k), std::make_tuple(4096, 4096, 4096));
    EXPECT_EQ(reports[4].enumerated, 4);
    EXPECT_EQ(pruned_counts(reports[4]), counts_with({}));
    EXPECT_EQ(reports[4].kept,
              (std::vector<Point>{at({{"BM", 64}, {"BN", 64}, {"BK", 16}, {"PACK", 1}}),
                                  at({{"BM", 64}, {"BK", 16}, {"PACK", 1}}),
                                  at({{"BN", 64}, {"BK", 16}, {"PACK", 1}}), at({{"BK", 16}, {"PACK", 1}})}));
    EXPECT_EQ(reports[5].enumerated, 16);
    EXPECT_EQ(pruned_counts(reports[5]), counts_with({}));
    EXPECT_EQ(reports[5].kept.size(), 16u);
    for (const Point& p : reports[5].kept) EXPECT_GT(p["SPLIT_K"], 1) << p.str();
    EXPECT_EQ(reports[6].enumerated, 16);
    EXPECT_EQ(pruned_counts(reports[6]), counts_with({{"register_budget", 4}}));
    EXPECT_EQ(reports[6].kept.size(), 12u);
    for (const Point& p : reports[6].kept) EXPECT_LT(p["BM"] * p["BN"], 256 * 256) << p.str();
    for (const SpaceReport& r : reports)
      for (const Point& p : r.kept) {
        const std::optional<std::string> why = simt().refusal(p, shape_of(*fp32));
        EXPECT_EQ(why.has_value(), p["PACK"] == 1) << p.str();
        GemmShape odd = shape_of(*fp32);
        odd.n = odd.ldb = odd.ldc = 4095;
        if (p["PACK"] == 1 || p["VEC"] == 1) {
          EXPECT_EQ(simt().refusal(p, odd), std::nullopt) << p.str();
        }
      }
  }
}

TEST(GemmSimtSpace, EveryConstraintCanFireAlone) {
  // For each rule, assignments that break that rule and no other (arithmetic in the comments).
  const std::vector<std::pair<std::string, std::string>> breaks = {
      {"positive", "GROUP_M=0"},  // read by no other rule
      // 128 % 12 = 8; 10 * 16 = 160 threads, 65536 / 320 = 204 >= 96 + 20 + 16 + 24 registers
      {"thread_tiling", "TM=12"},
      // 100 % 8 = 4; 2 * 8 * (132 + 100) * 4 = 14848 bytes; 16 * 12 = 192 threads
      {"thread_tiling", "BN=100"},
      // 32 / 2 = 16 threads along M, 256 threads: 128 >= 16 + 10 + 8 + 24 registers
      {"thread_tile_vectors", "BM=32,TM=2"},
      // 96 / 6 = 16 threads along N, 256 threads: 128 >= 48 + 14 + 8 + 24
      {"thread_tile_vectors", "BN=96,TN=6"},
      // (132/4) * (128/4) = 1056 threads > 1024; 65536 / 1056 = 62 >= 16 + 8 + 8 + 24 = 56 with MIN_BLOCKS=1
      {"threads", "BM=132,TM=4,TN=4,MIN_BLOCKS=1"},
      // 30 * 8 * 264 * 4 = 253440 > 232448 bytes
      {"shared_memory", "STAGES=30"},
      // 256 * 3 threads: 65536 / 768 = 85 < 64 + 16 + 8 + 24 = 112 registers
      {"register_budget", "MIN_BLOCKS=3"},
      // 16x16 outputs: 64 threads * 2 -> 255 registers < 256 + 32 + 32 + 24
      {"register_budget", "TM=16,TN=16"},
      {"stages", "STAGES=1"},
      {"vector_width", "VEC=8"},  // 8 % 8 = 0: the tile still holds whole vectors
      // VEC=3 divides BK=12, BM=BN=96: 24 * 24 = 576 threads, 65536 / 576 = 113 >= 16 + 8 + 6 + 24 registers
      {"vector_width", "BM=96,BN=96,TM=4,TN=4,BK=12,VEC=3,MIN_BLOCKS=1"},
      {"vector_in_tile", "BK=2"},  // 2 % 4 = 2
      {"vector_in_tile", "BK=6"},  // 6 % 4 = 2
      {"switch", "PACK=2"},
      {"pack_vector_width", "PACK=1,VEC=2"},  // VEC=2 divides BK=8
      {"layouts", "LAYOUTS=16"},
  };
  const Space space(simt(), search({}), h100());
  test::expect_every_rule_fires_alone(space, breaks);
  EXPECT_TRUE(space.explain("").kept());  // the default point breaks nothing
}

TEST(GemmSimtSpace, PointsOnEitherSideOfEachRuleFallOnTheirSide) {
  // Pairs of points one step apart across a rule's edge: the first is kept, the second is pruned by that
  // rule.
  struct Edge {
    std::string rule, inside, outside;
  };
  const std::vector<Edge> edges = {
      {"positive", "GROUP_M=1", "GROUP_M=0"},
      {"thread_tiling", "TM=16", "TM=12"},  // 128 % 16 = 0 (8 * 16 threads); 128 % 12 = 8
      {"thread_tile_vectors", "BM=32,TM=4", "BM=32,TM=2"},
      // 1024 threads (32 x 32): 64 registers >= 16 + 8 + 8 + 24 = 56; 1056 threads (33 x 32) > 1024
      {"threads", "BM=128,TM=4,TN=4,MIN_BLOCKS=1", "BM=132,TM=4,TN=4,MIN_BLOCKS=1"},
      // 27 * 8 * 264 * 4 = 228096 <= 232448 < 28 * 8 * 264 * 4 = 236544
      {"shared_memory", "STAGES=27", "STAGES=28"},
      // 65536 / (256 * 2) = 128 >= 112; 65536 / (256 * 3) = 85 < 112
      {"register_budget", "MIN_BLOCKS=2", "MIN_BLOCKS=3"},
      {"stages", "STAGES=2", "STAGES=1"},
      {"vector_width", "VEC=4", "VEC=8"},
      {"vector_in_tile", "BK=4", "BK=2"},
      {"switch", "PACK=1", "PACK=2"},
      {"pack_vector_width", "PACK=1,VEC=4", "PACK=1,VEC=2"},
      {"layouts", "LAYOUTS=15", "LAYOUTS=16"},
  };
  const Space space(simt(), search({}), h100());
  std::set<std::string> covered;
  for (const Edge& edge : edges) {
    SCOPED_TRACE(edge.rule + ": " + edge.inside + " | " + edge.outside);
    EXPECT_TRUE(space.explain(edge.inside).kept());
    EXPECT_EQ(failing(test::explain_anywhere(space, edge.outside)), std::vector<std::string>{edge.rule});
    covered.insert(edge.rule);
  }
  for (const Constraint& c : simt().constraints) EXPECT_EQ(covered.count(c.name), 1u) << c.name;
}

TEST(GemmSimtSpace, DeviceLimitsMoveTheEdges) {
  // The same point (256 threads, 16896 bytes, 112 registers needed at MIN_BLOCKS=2) against devices one
  // step either side of each limit it meets.
  const TemplateSearch defaults = search({});
  struct Limit {
    std::string rule;
    std::function<void(GpuLimits&, bool)> set;  // true: just enough
  };
  const std::vector<Limit> limits = {
      {"threads", [](GpuLimits& l, bool enough) { l.max_threads_per_block = enough ? 256 : 255; }},
      {"shared_memory",
       [](GpuLimits& l, bool enough) { l.shared_memory_per_block_optin = enough ? 16896 : 16895; }},
      // 112 * 512 = 57344 registers per SM: exactly 112 per thread for two CTAs of 256
      {"register_budget", [](GpuLimits& l, bool enough) { l.registers_per_sm = enough ? 57344 : 57343; }},
      {"register_budget", [](GpuLimits& l, bool enough) { l.max_registers_per_thread = enough ? 112 : 111; }},
  };
  for (const Limit& limit : limits) {
    SCOPED_TRACE(limit.rule);
    GpuLimits enough = h100(), short_by_one = h100();
    limit.set(enough, true);
    limit.set(short_by_one, false);
    EXPECT_EQ(Space(simt(), defaults, enough).prune().kept.size(), 1u);
    const SpaceReport report = Space(simt(), defaults, short_by_one).prune();
    EXPECT_TRUE(report.kept.empty());
    EXPECT_EQ(pruned_counts(report)[limit.rule], 1);
  }
}

// ---- 4. refusals ---------------------------------------------------------------------------------------

GemmShape shape(int64_t m, int64_t n, int64_t k) {
  return shape_of(problem(m, n, k));
}

TEST(GemmSimtRefusal, AcceptsWhatItComputes) {
  EXPECT_EQ(simt().refusal(at({}), shape(4096, 4096, 4096)), std::nullopt);
  EXPECT_EQ(simt().refusal(at({}), shape(1, 4, 4)), std::nullopt);  // one row, one vector
  GemmShape padded = shape(129, 136, 40);
  padded.lda = 44;
  padded.ldb = 140;
  padded.ldc = 137;        // C rows need no alignment: the epilogue falls back to single stores
  padded.c_alignment = 4;  // an fp32 C four bytes past an aligned address
  EXPECT_EQ(simt().refusal(at({}), padded), std::nullopt);
  // VEC=1 computes any shape, at any element alignment.
  GemmShape odd = shape(97, 131, 1031);
  odd.lda = 1034;
  odd.ldb = 132;
  odd.a_alignment = odd.b_alignment = odd.c_alignment = 4;
  EXPECT_EQ(simt().refusal(at({{"VEC", 1}}), odd), std::nullopt);
}

TEST(GemmSimtRefusal, VectorWidthNamesTheFieldItNeeds) {
  struct Case {
    std::string field;
    std::function<void(GemmShape&)> spoil;
  };
  const std::vector<Case> cases = {
      {"K", [](GemmShape& s) { s.k = 4097, s.lda = 4100; }},
      {"N", [](GemmShape& s) { s.n = 4093, s.ldc = 4093; }},
      {"lda", [](GemmShape& s) { s.lda = 4097; }},
      {"ldb", [](GemmShape& s) { s.ldb = 4099; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    GemmShape s = shape(4096, 4096, 4096);
    c.spoil(s);
    for (int64_t vec : {2, 4}) {
      const auto why = simt().refusal(at({{"VEC", vec}}), s);
      ASSERT_TRUE(why.has_value());
      const std::string want = "VEC=" + std::to_string(vec) + " needs " + c.field + " to be a multiple of " +
                               std::to_string(vec) + " (" + c.field + "=";
      EXPECT_TRUE(contains(*why, want)) << *why;
      EXPECT_TRUE(contains(*why, "a smaller VEC or PACK=1 serves this problem")) << *why;
    }
    EXPECT_EQ(simt().refusal(at({{"VEC", 1}}), s), std::nullopt);
  }
}

TEST(GemmSimtRefusal, PackTakesWhatVectorsRefuseAndNothingElse) {
  // PACK=1 copies A and B into zero-padded rows of whole 16-byte vectors first (pack_plan, PackRule::loads16):
  // it serves exactly the problems VEC=4 refuses, and its scratch is the copies' bytes.
  const Point pack = at({{"PACK", 1}});
  const auto nothing = simt().refusal(pack, shape(4096, 4096, 4096));
  ASSERT_TRUE(nothing.has_value());
  EXPECT_TRUE(contains(*nothing, "PACK=1 has nothing to pack here")) << *nothing;
  EXPECT_EQ(simt().geometry(pack, shape(4096, 4096, 4096)).workspace_bytes, 0);
  // N odd: B alone, 4096 rows of 4096 floats (N = 4095 padded to a whole vector): 67108864 bytes.
  const GemmShape odd_n = shape(4096, 4095, 4096);
  EXPECT_TRUE(simt().refusal(at({}), odd_n).has_value());
  EXPECT_EQ(simt().refusal(pack, odd_n), std::nullopt);
  EXPECT_EQ(simt().geometry(pack, odd_n).workspace_bytes, 4096 * 4096 * 4);
  // K odd: K padded to 4100 in both, A 4096 x 4100 and B 4100 x 4096 floats.
  const GemmShape odd_k = shape(4096, 4096, 4097);
  EXPECT_EQ(simt().refusal(pack, odd_k), std::nullopt);
  EXPECT_EQ(simt().geometry(pack, odd_k).workspace_bytes, 2 * 4096 * 4100 * 4);
  // A misaligned base: A alone, its rows already whole vectors.
  GemmShape offset = shape(256, 256, 256);
  offset.a_alignment = 4;
  EXPECT_EQ(simt().refusal(pack, offset), std::nullopt);
  EXPECT_EQ(simt().geometry(pack, offset).workspace_bytes, 256 * 256 * 4);
  // Zero sizes: nothing loaded, nothing packed, nothing refused.
  EXPECT_EQ(simt().refusal(pack, shape(0, 4095, 4096)), std::nullopt);
  EXPECT_EQ(simt().geometry(pack, shape(4096, 4095, 0)).workspace_bytes, 0);
}

TEST(GemmSimtRefusal, EveryLayoutIsReadInPlace) {
  // The kernel reads column-major operands as stored (the flags in TfGemmParams): VEC runs along the stored
  // rows, M for a column-major A and K for a column-major B, and PACK=1 copies a misaligned operand in its
  // own order (PackRule::loads16), transposing nothing.
  const Point pack = at({{"PACK", 1}});
  EXPECT_EQ(simt().layouts, all_layouts());
  for (const char* name : {"RC", "CR", "CC"}) {
    SCOPED_TRACE(name);
    const Layout layout = *parse_layout(name);
    EXPECT_EQ(simt().refusal(at({}), shape_of(problem(256, 256, 256, layout))), std::nullopt);
    for (const auto& [m, n, k] :
         {std::tuple<int64_t, int64_t, int64_t>{256, 256, 256}, {8, 5000, 3000}, {7, 5, 3}, {1, 1, 1}}) {
      const GemmShape s = shape_of(problem(m, n, k, layout));
      EXPECT_EQ(simt().refusal(at({{"VEC", 1}}), s), std::nullopt) << m << "x" << n << "x" << k;
      const PackPlan plan = pack_plan(s, 4, PackRule::loads16);
      EXPECT_EQ(plan.layout, layout);
      EXPECT_FALSE(plan.transpose_a || plan.transpose_b);
      EXPECT_EQ(simt().refusal(pack, s).has_value(), !plan.pack_a && !plan.pack_b);
      const auto bytes = [](int64_t b) { return (b + 255) / 256 * 256; };
      if (plan.pack_a || plan.pack_b) {
        EXPECT_EQ(simt().geometry(pack, s).workspace_bytes,
                  (plan.pack_a ? bytes(plan.a_rows * plan.lda * 4) : 0) +
                      (plan.pack_b ? bytes(plan.b_rows * plan.ldb * 4) : 0));
      }
    }
  }
  // M = 7 with A column-major: VEC=4 needs the stored rows (M long) whole vectors; PACK=1 pads them, and
  // leaves B (row-major, N = 256) in place.
  const GemmShape cr = shape_of(problem(7, 256, 256, *parse_layout("CR")));
  const auto why = simt().refusal(at({}), cr);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(contains(*why, "VEC=4 needs M to be a multiple of 4 (M=7, layout CR)")) << *why;
  const PackPlan plan = pack_plan(cr, 4, PackRule::loads16);
  EXPECT_TRUE(plan.pack_a);
  EXPECT_FALSE(plan.pack_b);
  EXPECT_EQ(plan.lda, 8);
  EXPECT_EQ(plan.k, 256);
  EXPECT_EQ(simt().refusal(pack, cr), std::nullopt);
  EXPECT_EQ(simt().geometry(pack, cr).workspace_bytes, 256 * 8 * 4);
  // Leading dimensions shorter than the stored rows are refused in every layout.
  GemmShape short_rows = shape_of(problem(8, 8, 8, *parse_layout("CC")));
  short_rows.lda = 4;
  EXPECT_TRUE(contains(simt().refusal(pack, short_rows).value_or(""), "leading dimensions must be at least"));
}

TEST(GemmSimtSplitK, OneCtaPerTileAndSplitAndTheSplitsPartialsAfterThePackedCopies) {
  // SPLIT_K (or a launcher override of it) multiplies the grid by the split count and appends the splits'
  // fp32 partials, splits x M x (N rounded up to 4) floats, to the workspace, after PACK=1's copies.
  const GemmShape s = shape(8, 5001, 3000);  // 1 x 40 tiles of 64 x 128
  const Point plain = at({{"BM", 64}});
  EXPECT_EQ(simt().geometry(plain, s).grid_x, 40);
  EXPECT_EQ(simt().geometry(plain, s).workspace_bytes, 0);
  const Point split = at({{"BM", 64}, {"SPLIT_K", 4}});
  EXPECT_EQ(simt().geometry(split, s).grid_x, 160);
  EXPECT_EQ(simt().geometry(split, s).workspace_bytes, 4 * 8 * 5004 * 4);
  EXPECT_EQ(gemm_simt_geometry(split, s, LaunchOverrides{7, 0}, 4).grid_x, 280);
  EXPECT_EQ(gemm_simt_geometry(split, s, LaunchOverrides{7, 0}, 4).workspace_bytes, 7 * 8 * 5004 * 4);
  EXPECT_EQ(gemm_simt_geometry(plain, s, LaunchOverrides{3, 0}, 4).workspace_bytes, 3 * 8 * 5004 * 4);
  // PACK=1 with N odd: B copied (3000 rows of 5004 floats, whole 256-byte blocks), then the partials.
  const Point packed_split = at({{"BM", 64}, {"PACK", 1}, {"SPLIT_K", 4}});
  const int64_t b_copy = (int64_t{3000} * 5004 * 4 + 255) / 256 * 256;
  EXPECT_EQ(simt().geometry(packed_split, s).workspace_bytes, b_copy + 4 * 8 * 5004 * 4);
  // A zero size makes no load: no copies, no partials.
  EXPECT_EQ(simt().geometry(packed_split, shape(8, 5001, 0)).workspace_bytes, 0);
  // The grid counts units: tiles x splits beyond 2^31 - 1 is refused.
  GemmShape wide = shape(int64_t{1} << 22, int64_t{1} << 22, 4);
  EXPECT_EQ(simt().refusal(at({}), wide), std::nullopt);
  EXPECT_EQ(simt().refusal(at({{"SPLIT_K", 4}}), wide),
            "the grid would need 4294967296 CTAs (over 2^31 - 1)");
}

TEST(GemmSimtRefusal, BaseAlignmentMustHoldAWholeVector) {
  // VEC floats per load: A's and B's base addresses must be multiples of 4 * VEC bytes.
  for (const auto& [vec, needed] : {std::pair<int64_t, int64_t>{4, 16}, {2, 8}, {1, 4}}) {
    for (const bool spoil_a : {true, false}) {
      SCOPED_TRACE("VEC=" + std::to_string(vec) + (spoil_a ? " A" : " B"));
      GemmShape s = shape(256, 256, 256);
      (spoil_a ? s.a_alignment : s.b_alignment) = needed;
      EXPECT_EQ(simt().refusal(at({{"VEC", vec}}), s), std::nullopt);
      if (needed == 4) continue;  // an fp32 operand is always 4-byte aligned
      (spoil_a ? s.a_alignment : s.b_alignment) = needed / 2;
      const auto why = simt().refusal(at({{"VEC", vec}}), s);
      ASSERT_TRUE(why.has_value());
      EXPECT_TRUE(contains(*why, "aligned to " + std::to_string(needed) + " bytes")) << *why;
    }
  }
}

TEST(GemmSimtRefusal, ShapesLayoutsAndGridsItCannotCompute) {
  const Point p = at({});
  EXPECT_EQ(simt().refusal(p, shape(0, 4, 4)), std::nullopt) << "a zero size is a quick return";
  EXPECT_EQ(simt().refusal(p, shape(-1, 4, 4)), "M, N and K must not be negative (M=-1, N=4, K=4)");
  GemmShape short_rows = shape(8, 8, 8);
  short_rows.lda = 4;
  EXPECT_TRUE(
      contains(*simt().refusal(p, short_rows), "leading dimensions must be at least the stored row lengths"));
  GemmShape misaligned_c = shape(8, 8, 8);
  misaligned_c.c_alignment = 2;
  EXPECT_EQ(simt().refusal(p, misaligned_c), "C's base address is not aligned to its element size");
  // (2^23 / 128)^2 = 2^32 tiles: more CTAs than a grid holds; 2^22 rows fit (2^30 tiles).
  GemmShape huge = shape(int64_t{1} << 23, int64_t{1} << 23, 4);
  EXPECT_EQ(simt().refusal(p, huge), "the grid would need 4294967296 CTAs (over 2^31 - 1)");
  EXPECT_EQ(simt().refusal(p, shape(int64_t{1} << 22, int64_t{1} << 22, 4)), std::nullopt);
}

// ---- 5. NVRTC: every shipped point compiles into the kernel the host describes --------------------------

/// `point` with LAYOUTS naming one storage order, the i-th of RR, RC, CR, CC (round robin): an image of one
/// order compiles in about a third of the time of one with all four, and a list of points taken in turn
/// compiles each order at a quarter of them.
Point one_order(Point point, size_t i) {
  std::vector<std::pair<std::string, int64_t>> values = point.values();
  for (auto& [name, value] : values)
    if (name == kLayoutsParameter) value = layout_bit(all_layouts()[i % 4]);
  return Point(std::move(values));
}

TEST(GemmSimtCompile, EveryPointOfTheShippedSpacesCompilesAsDeclared) {
  std::vector<Point> shipped = shipped_points("h100.yaml");
  for (const Point& p : shipped_points("h200.yaml"))
    if (std::find(shipped.begin(), shipped.end(), p) == shipped.end()) shipped.push_back(p);
  ASSERT_EQ(shipped.size(),
            66u);  // 26 + 2 + 4 + 2 + 4 + 16 + 12, as worked out in ShippedSpacesPruneAsWorkedOutByHand
  for (size_t i = 0; i < shipped.size(); ++i) {
    const Point point = one_order(shipped[i], i);
    const std::string entry = gemm_entry_name(all_layouts()[i % 4]);
    SCOPED_TRACE(point.str());
    const CompiledKernel& kernel = compiled(point);
    EXPECT_FALSE(kernel.image.empty());
    ASSERT_TRUE(kernel.resources.count(entry)) << kernel.log;
    EXPECT_EQ(kernel.resources.count("tf_gemm_split_" + entry.substr(8)), 1u);
    EXPECT_GT(kernel.resources.at(entry).registers, 0);
    EXPECT_TRUE(contains(kernel.ptx, ".entry " + entry));
    EXPECT_EQ(std::count_if(kernel.resources.begin(), kernel.resources.end(),
                            [](const auto& r) { return r.first.starts_with("tf_gemm_"); }),
              2)
        << "LAYOUTS names one order: its kernel and its split-K form, no other";
    EXPECT_TRUE(kernel.resources.count("tf_scale_c")) << "the quick return of K = 0 (scale_c.h)";
    for (const std::string& instruction : simt().expected_instructions(point))
      EXPECT_TRUE(contains(kernel.ptx, instruction)) << "missing " << instruction;
    // CUDA cores only: no tensor-core instruction, no asynchronous copy.
    for (const char* absent : {"mma.", "wgmma", "ldmatrix", "cp.async"})
      EXPECT_FALSE(contains(kernel.ptx, absent)) << absent;
    // The kernel's own record of its shape is the host's.
    const auto meta = kernel_meta(kernel.ptx);
    ASSERT_TRUE(meta.has_value()) << "no tf_kernel_meta initialiser in the PTX";
    EXPECT_EQ((*meta)[0], simt().threads_per_block(point));
    EXPECT_EQ((*meta)[1], simt().shared_memory_bytes(point));
    EXPECT_EQ((*meta)[2], point["BM"]);
    EXPECT_EQ((*meta)[3], point["BN"]);
    // MIN_BLOCKS caps registers at what that many CTAs leave each thread.
    const int64_t cap =
        std::min<int64_t>(255, 65536 / (simt().threads_per_block(point) * point["MIN_BLOCKS"]));
    EXPECT_LE(kernel.resources.at(entry).registers, cap);
  }
}

// Each storage order has its own kernels, fixed at compile time: at the default point (LAYOUTS=15) the image
// exports all eight, and the classic shape fits two CTAs per SM without spilling in every order. No order
// pays for the others' addressing: at BM=64, BN=128, BK=16 each plain kernel takes about the registers of
// the RR image alone (162), where one kernel that read the orders at run time took 185
// (templates/gemm_simt.cu).
TEST(GemmSimtCompile, EachOrderHasItsOwnKernels) {
  const CompiledKernel& all = compiled(at({}));
  for (const Layout& layout : all_layouts())
    for (const char* kernel : {"tf_gemm", "tf_gemm_split"}) {
      const std::string entry = gemm_entry_name(layout, kernel);
      SCOPED_TRACE(entry);
      ASSERT_TRUE(all.resources.count(entry)) << all.log;
      if (std::string(kernel) == "tf_gemm") {
        EXPECT_FALSE(all.resources.at(entry).spills()) << all.log;
      }
    }
  const Point wide = at({{"BM", 64}, {"BK", 16}});
  const CompiledKernel& every = compiled(wide);
  const CompiledKernel& rr = compiled(one_order(wide, 0));
  ASSERT_TRUE(rr.resources.count("tf_gemm_rr")) << rr.log;
  const int64_t alone = rr.resources.at("tf_gemm_rr").registers;
  EXPECT_LT(alone, 170) << "three CTAs of 128 threads per SM";
  for (const Layout& layout : all_layouts()) {
    SCOPED_TRACE(to_string(layout));
    ASSERT_TRUE(every.resources.count(gemm_entry_name(layout))) << every.log;
    EXPECT_LE(every.resources.at(gemm_entry_name(layout)).registers, alone + 8);
  }
}

// The PTX of one entry of a module: from its `.entry NAME(` to the next entry or the end.
std::string entry_ptx(const std::string& ptx, const std::string& name) {
  const size_t start = ptx.find(".entry " + name + "(");
  if (start == std::string::npos) return "";
  const size_t next = ptx.find(".entry ", start + 1);
  return ptx.substr(start, next == std::string::npos ? std::string::npos : next - start);
}

TEST(GemmSimtCompile, ExpectedInstructionsFollowVec) {
  // B tiles stored to shared memory as float4 at VEC=4, 8-byte global loads at VEC=2, single floats at VEC=1;
  // the thread tile is read from shared memory as float4 at every VEC. The GEMM's own entry is read: the
  // module's split-K reduce stores float4 lane sums to shared memory at every VEC.
  for (int64_t vec : {1, 2, 4}) {
    SCOPED_TRACE("VEC=" + std::to_string(vec));
    const Point point = at({{"VEC", vec}, {"LAYOUTS", 1}});
    const CompiledKernel& kernel = compiled(point);
    for (const std::string& instruction : simt().expected_instructions(point))
      EXPECT_TRUE(contains(kernel.ptx, instruction)) << instruction;
    const std::string gemm = entry_ptx(kernel.ptx, gemm_entry_name(Layout{Order::row, Order::row}));
    ASSERT_FALSE(gemm.empty()) << "no tf_gemm_rr entry in the module";
    EXPECT_TRUE(contains(gemm, "ld.shared.v4.f32"));
    EXPECT_EQ(contains(gemm, "st.shared.v4.f32"), vec == 4);
    EXPECT_EQ(contains(gemm, "ld.global.v2.f32"), vec == 2);
    EXPECT_TRUE(contains(gemm, "ld.global.v4.f32"));  // C, in the epilogue, where aligned
  }
}

TEST(GemmSimtCompile, KernelMetaFollowsEveryShapeParameter) {
  // Points that differ from the defaults in one shape parameter each record different geometry.
  const std::vector<Point> points = {at({{"LAYOUTS", 1}}),
                                     at({{"BK", 16}, {"LAYOUTS", 1}}),
                                     at({{"STAGES", 3}, {"LAYOUTS", 1}}),
                                     at({{"BM", 64}, {"LAYOUTS", 1}}),
                                     at({{"BN", 64}, {"TN", 4}, {"LAYOUTS", 1}}),
                                     at({{"TM", 4}, {"MIN_BLOCKS", 1}, {"LAYOUTS", 1}})};
  std::set<std::array<int64_t, 4>> distinct;
  for (const Point& point : points) {
    SCOPED_TRACE(point.str());
    const auto meta = kernel_meta(compiled(point).ptx);
    ASSERT_TRUE(meta.has_value());
    EXPECT_EQ(*meta, (std::array<int64_t, 4>{simt().threads_per_block(point),
                                             simt().shared_memory_bytes(point), point["BM"], point["BN"]}));
    distinct.insert(*meta);
  }
  EXPECT_EQ(distinct.size(), points.size());
}

// ---- 6. impossible combinations stop at their own static_assert ---------------------------------------

TEST(GemmSimtStaticAsserts, EachImpossibleCombinationFailsWithItsOwnMessage) {
  struct Impossible {
    std::string assignment;  ///< tunables changed from the defaults
    TypePair types;
    std::string message;     ///< the static_assert that must fire (and no other)
    std::string constraint;  ///< the host rule that prunes the same point; empty for the element types
  };
  const std::vector<Impossible> cases = {
      {"", {Precision::fp8e4m3, Precision::bf16}, "gemm_simt computes fp32, fp16 or bf16 inputs", ""},
      {"", {Precision::fp32, Precision::fp8e4m3}, "gemm_simt writes an fp32, fp16 or bf16 C", ""},
      {"TM=12", kFp32, "the thread tile TMxTN must divide the CTA tile BMxBN", "thread_tiling"},
      {"BM=32,TM=2", kFp32, "TM and TN must be multiples of 4 (thread tiles are read as float4 vectors)",
       "thread_tile_vectors"},
      {"BM=132,TM=4,TN=4,MIN_BLOCKS=1", kFp32, "more than 1024 threads per CTA: (BM/TM)*(BN/TN) > 1024",
       "threads"},
      {"STAGES=1", kFp32, "STAGES must be at least 2 (one stage read while the next is written)", "stages"},
      {"VEC=8", kFp32, "VEC must be 1, 2, 4 or 8 elements, at most 16 bytes", "vector_width"},
      {"BK=2", kFp32, "VEC must divide BK, BM and BN (a load stays within one stored row of a tile)",
       "vector_in_tile"},
      {"MIN_BLOCKS=0", kFp32, "MIN_BLOCKS must be at least 1", "positive"},
      {"GROUP_M=0", kFp32, "GROUP_M must be at least 1", "positive"},
      {"LAYOUTS=16", kFp32, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC", "layouts"},
  };
  const std::vector<std::string> all_messages = static_assert_messages(simt_source().text);
  ASSERT_EQ(all_messages.size(), 11u);
  const Space space(simt(), search({}), h100());
  std::set<std::string> fired;
  for (const Impossible& c : cases) {
    const Point point = test::explain_anywhere(space, c.assignment).point;
    SCOPED_TRACE(point.str() + " " + to_string(c.types.input) + "-" + to_string(c.types.output));
    ASSERT_NE(std::find(all_messages.begin(), all_messages.end(), c.message), all_messages.end())
        << "no static_assert says '" << c.message << "'";
    EXPECT_TRUE(stops_at_static_assert(compiler(), request_for(point, c.types), all_messages, c.message));
    fired.insert(c.message);
    // The host never sends such a point to the compiler: the rule of the same meaning prunes it (and element
    // types neither registration declares are never paired with this source).
    if (c.constraint.empty()) {
      for (const KernelTemplate* t : {&simt(), &gemm_simt_16bit_template()})
        EXPECT_EQ(std::find(t->supported_types.begin(), t->supported_types.end(), c.types),
                  t->supported_types.end());
    } else {
      const auto& rules = simt().constraints;
      const auto rule = std::find_if(rules.begin(), rules.end(),
                                     [&](const Constraint& r) { return r.name == c.constraint; });
      ASSERT_NE(rule, rules.end());
      EXPECT_FALSE(rule->holds(point, h100())) << rule->name;
    }
  }
  EXPECT_EQ(fired, std::set<std::string>(all_messages.begin(), all_messages.end()));  // every rule exercised
}

// ---- 7. injected bugs ----------------------------------------------------------------------------------

TEST(GemmSimtMutants, EveryMutantCompilesToDifferentCodeUnderItsOwnKey) {
  const std::vector<std::string>& names = gemm_simt_mutant_names();
  ASSERT_EQ(names.size(), 12u);  // 0 = none, 1..11 = TF_MUTANT_* in templates/gemm_simt.cu
  EXPECT_EQ(names[0], "none");
  // CC: the column-major load paths that mutants 10 and 11 break; the others break every order alike.
  const Point point = at({{"LAYOUTS", 8}});
  const CompiledKernel& original = compiled(point);
  std::set<std::string> keys = {original.key};
  for (int code = 1; code < static_cast<int>(names.size()); ++code) {
    SCOPED_TRACE(std::to_string(code) + " " + names[code]);
    std::string upper = names[code];
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_TRUE(contains(simt_source().text, "#define TF_MUTANT_" + upper + " " + std::to_string(code)));
    const CompiledKernel& mutant = compiled(point, code);
    EXPECT_FALSE(mutant.image.empty());
    EXPECT_NE(mutant.ptx, original.ptx) << "the mutant changes nothing in the code";
    EXPECT_TRUE(keys.insert(mutant.key).second) << "key shared with another mutant or the original";
  }
  // The barrier mutant really drops the GEMM kernel's barrier (tf_pack_transposed, also in the module, keeps
  // its own).
  const auto gemm_body = [](const std::string& ptx) {
    const size_t at = ptx.find(".entry tf_gemm_cc(");
    return at == std::string::npos ? std::string() : ptx.substr(at, ptx.find(".entry", at + 1) - at);
  };
  EXPECT_TRUE(contains(gemm_body(original.ptx), "bar.sync"));
  EXPECT_FALSE(contains(gemm_body(compiled(point, 5).ptx), "bar.sync"));
  EXPECT_FALSE(gemm_body(compiled(point, 5).ptx).empty());
}

// ---- 8. gemm_simt_16bit: the same source on fp16 and bf16 inputs ----------------------------------------

const KernelTemplate& simt16() {
  return gemm_simt_16bit_template();
}

TEST(GemmSimt16bit, IsTheSameSourceOnSixteenBitInputs) {
  EXPECT_EQ(&find_template("gemm_simt_16bit"), &simt16());
  EXPECT_EQ(simt16().source_file, simt().source_file);
  EXPECT_EQ(simt16().entry_points, simt().entry_points);
  EXPECT_EQ(simt16().supported_types, sixteen_bit_type_pairs());
  EXPECT_EQ(simt16().layouts, all_layouts());
  EXPECT_EQ(simt16().default_point()["VEC"], 8) << "16 bytes of 16-bit elements";
  // The same formulas: the stages hold fp32 whatever the input.
  const Point small = test::point_with(simt16(), {{"BM", 32}, {"BN", 32}, {"TM", 4}, {"TN", 4}});
  EXPECT_EQ(simt16().shared_memory_bytes(small), 2 * 8 * (36 + 36) * 4);
  EXPECT_EQ(simt16().threads_per_block(small), 64);
  EXPECT_EQ(simt16().shared_memory_bytes(simt16().default_point()), simt().shared_memory_bytes(at({})));
}

TEST(GemmSimt16bit, VectorRulesCountTwoByteElements) {
  GemmShape s = shape(64, 64, 64);
  EXPECT_EQ(simt16().refusal(simt16().default_point(), s), std::nullopt);
  s.a_alignment = 8;  // an 8-element vector of 16-bit values is 16 bytes
  EXPECT_TRUE(contains(simt16().refusal(simt16().default_point(), s).value_or(""), "aligned to 16 bytes"));
  EXPECT_EQ(simt16().refusal(test::point_with(simt16(), {{"VEC", 4}}), s), std::nullopt);
  // VEC=1 takes any shape, layout and element alignment.
  const Point p = test::point_with(simt16(), {{"VEC", 1}});
  for (const char* name : {"RR", "RC", "CR", "CC"}) {
    GemmShape odd = shape_of(problem(7, 5, 3, *parse_layout(name)));
    odd.a_alignment = odd.b_alignment = odd.c_alignment = 2;
    EXPECT_EQ(simt16().refusal(p, odd), std::nullopt) << name;
  }
  // VEC=8 at 4 bytes a float is 32 bytes: the fp32 registration prunes it, this one keeps it.
  const Point vec8 = test::point_with(simt16(), {{"VEC", 8}});
  const auto& rules = simt().constraints;
  const auto width =
      std::find_if(rules.begin(), rules.end(), [](const Constraint& r) { return r.name == "vector_width"; });
  ASSERT_NE(width, rules.end());
  EXPECT_FALSE(width->holds(vec8, h100()));
  for (const Constraint& r : simt16().constraints) EXPECT_TRUE(r.holds(vec8, h100())) << r.name;
}

TEST(GemmSimt16bit, ShippedPointsCompileForEveryTypePair) {
  std::vector<Point> points;
  for (const char* file : {"h100.yaml", "h200.yaml", "smoke.yaml"}) {
    const Config config = load_config(std::string(TUNEFUZZ_SOURCE_DIR "/configs/") + file);
    for (const TemplateSearch& t : config.templates)
      if (t.name == "gemm_simt_16bit")
        for (const Point& p : Space(simt16(), t, config.gpu.limits).prune().kept)
          if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
  }
  ASSERT_GE(points.size(), 6u);  // 16, 32 and 64 rows against 32 and 64 columns
  // The default point (16-byte loads) too: it reaches the VEC=8 load path.
  // (RR: in the orders that stage a vector element by element, 128x128 at VEC=8 spills at MIN_BLOCKS=2's
  // cap.)
  const size_t shipped = points.size();
  points.push_back(simt16().default_point());
  size_t compiles = 0;  // one storage order per image of a shipped point, in turn (one_order)
  for (size_t i = 0; i < points.size(); ++i)
    for (const TypePair& types : simt16().supported_types) {
      const size_t order = i < shipped ? compiles++ % 4 : 0;
      const Point point = one_order(points[i], order);
      const std::string entry = gemm_entry_name(all_layouts()[order]);
      SCOPED_TRACE(point.str() + " " + to_string(types.input) + "-" + to_string(types.output));
      const CompiledKernel kernel =
          compiler().compile(CompileRequest{&simt_source(), simt16().defines(point, types), "sm_90"});
      ASSERT_TRUE(kernel.resources.count(entry)) << kernel.log;
      EXPECT_FALSE(kernel.resources.at(entry).spills()) << kernel.log;
      for (const std::string& instruction : simt16().expected_instructions(point))
        EXPECT_TRUE(contains(kernel.ptx, instruction)) << "missing " << instruction;
      for (const char* absent : {"mma.", "wgmma", "ldmatrix", "cp.async"})
        EXPECT_FALSE(contains(kernel.ptx, absent)) << absent;
      // fp16 inputs are converted by cvt (as an fp16 C is read back), bf16 by a shift; outputs other than
      // fp32 are stored by cvt.rn.
      EXPECT_EQ(contains(kernel.ptx, "cvt.f32.f16"),
                types.input == Precision::fp16 || types.output == Precision::fp16);
      if (types.output != Precision::fp32) {
        EXPECT_TRUE(
            contains(kernel.ptx, types.output == Precision::bf16 ? "cvt.rn.bf16x2.f32" : "cvt.rn.f16x2.f32"));
      }
      const auto meta = kernel_meta(kernel.ptx);
      ASSERT_TRUE(meta.has_value());
      EXPECT_EQ((*meta)[0], simt16().threads_per_block(point));
      EXPECT_EQ((*meta)[1], simt16().shared_memory_bytes(point));
    }
}

// ---- 8. portability ------------------------------------------------------------------------------------

TEST(GemmSimtPortability, SourceUsesNothingHipLacks) {
  // No inline assembly, no warp-level intrinsics or warp-size constants, no CUDA-only address-space or
  // asynchronous-copy builtins: the same text must compile under hiprtc for AMD GPUs (wavefronts of 64).
  // The same holds for scale_c.h (tf_scale_c, the launch for K = 0), which it includes: the header reaches
  // output_types.h's PTX conversions only where that is included first, which is on CUDA alone.
  std::string text = simt_source().text;
  for (const auto& [name, header] : simt_source().headers)
    if (name == "scale_c.h" || name == "split_k.h")
      text += header;  // (perturb.h groups threads by 32 to hash its delays, nothing more:
                       // on a 64-wide wavefront two halves may sleep apart, which is fine)
  EXPECT_TRUE(contains(text, "tf_scale_c"));
  for (const char* forbidden : {"asm", "__shfl", "__ballot", "__activemask", "warpSize", "__syncwarp",
                                "__cvta", "cp.async", "__ldg", "% 32", "/ 32", "& 31", ">> 5"})
    EXPECT_FALSE(contains(text, forbidden)) << forbidden;
  // Only the shared portable headers are included.
  for (size_t at = text.find("#include"); at != std::string::npos; at = text.find("#include", at + 1)) {
    const std::string line = text.substr(at, text.find('\n', at) - at);
    EXPECT_TRUE(line == "#include \"tunefuzz_rtc.h\"" || line == "#include \"gemm_params.h\"" ||
                line == "#include \"tile_map.h\"" || line == "#include \"perturb.h\"" ||
                line == "#include \"split_k.h\"" || line.starts_with("#include \"scale_c.h\"") ||
                line.starts_with("#include \"pack.h\"") || line.starts_with("#include \"input_types.h\"") ||
                line.starts_with("#include \"output_types.h\""))
        << line;
  }
  // pack.h (PACK=1's tf_pack) and the 16-bit conversions (input_types.h, output_types.h: PTX) are CUDA's
  // alone: hiprtc never reads them, and a HIP build of anything but fp32 stops at an #error.
  const std::string& source = simt_source().text;
  for (const char* header : {"pack.h", "input_types.h", "output_types.h"}) {
    SCOPED_TRACE(header);
    const size_t at = source.find(std::string("#include \"") + header + "\"");
    ASSERT_NE(at, std::string::npos);
    const size_t guard = source.rfind("#if !defined(__HIPCC_RTC__)", at);
    ASSERT_NE(guard, std::string::npos);
    EXPECT_EQ(source.find("#endif", guard), source.find("#endif", at)) << "outside the guard";
  }
  EXPECT_TRUE(contains(
      source, "#if defined(__HIPCC_RTC__) && (TF_INPUT != TF_TYPE_FP32 || TF_OUTPUT != TF_TYPE_FP32)"));
}

}  // namespace
}  // namespace tunefuzz
