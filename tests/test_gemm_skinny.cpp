// Tests of the gemm_skinny template (templates/gemm_skinny.cu and its declaration,
// runtime/templates/gemm_skinny.cpp), stated as laws: the shared-memory, thread and workspace formulas give the
// figures worked out by hand; the units of a launch cover every (tile, K split) exactly once and the splits of
// a tile cover its K tiles exactly once; every constraint can be the one that fires, and a point on either side
// of it falls on the side the rule says; a problem is refused exactly when a rule says so, naming the field to
// blame and what serves the problem instead; every point the shipped configs keep compiles under NVRTC into
// four entry points with the promised instructions and records the geometry the host computes; every
// impossible combination stops at its own static_assert, and the host rule of the same meaning prunes it
// first. NVRTC needs no GPU, so all of this runs anywhere (tests/test_gpu.cpp runs the kernel).
#include <gtest/gtest.h>

#include <algorithm>
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

#include "templates/tile_map.h"
#include "tests/support/compile_checks.hpp"
#include "tests/support/space_checks.hpp"
#include "runtime/backend/nvrtc_compiler.hpp"
#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"
#include "tuner/space/space.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_skinny.hpp"

namespace tunefuzz {
namespace {

using test::failing;
using test::h100;
using test::kernel_meta;
using test::pruned_counts;
using test::static_assert_messages;
using test::stops_at_static_assert;

// ---- helpers ------------------------------------------------------------------------------------------

const KernelTemplate& skinny() {
  return gemm_skinny_template();
}

/// The template's default point with `overrides` applied.
Point at(std::initializer_list<std::pair<const char*, int64_t>> overrides) {
  return test::point_with(skinny(), overrides);
}

TemplateSearch search(std::vector<ParameterValues> space) {
  return test::search_of("gemm_skinny", std::move(space));
}

const TypePair kBf16{Precision::bf16, Precision::bf16};

const KernelSource& skinny_source() {
  static const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_skinny.cu");
  return source;
}

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

CompileRequest request_for(const Point& point, TypePair types = kBf16) {
  return CompileRequest{&skinny_source(), skinny().defines(point, types), "sm_90"};
}

/// Compiles each distinct request once per test run.
const CompiledKernel& compiled(const Point& point, TypePair types = kBf16, int mutant = 0) {
  static std::map<std::string, CompiledKernel> memo;
  const CompileRequest request{&skinny_source(), skinny().defines(point, types, mutant), "sm_90"};
  const std::string key = compiler().key(request);
  auto it = memo.find(key);
  if (it == memo.end()) it = memo.emplace(key, compiler().compile(request)).first;
  return it->second;
}

/// A bf16 problem of this shape, A and B stored as `layout` says.
Problem problem(int64_t m, int64_t n, int64_t k, Layout layout = {}) {
  Problem p;
  p.name = "p";
  p.m = m;
  p.n = n;
  p.k = k;
  p.input = p.output = Precision::bf16;
  p.layout = layout;
  return p;
}

GemmShape shape(int64_t m, int64_t n, int64_t k, Layout layout = {}) {
  return shape_of(problem(m, n, k, layout));
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// The points a shipped config's gemm_skinny spaces keep, in config order, without repeats.
std::vector<Point> shipped_points(const std::string& config_file) {
  const Config config = load_config(std::string(TUNEFUZZ_SOURCE_DIR "/configs/") + config_file);
  std::vector<Point> points;
  for (const TemplateSearch& s : config.templates) {
    if (s.name != "gemm_skinny") continue;
    for (const Point& p : Space(skinny(), s, config.gpu.limits).prune().kept)
      if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
  }
  return points;
}

/// An H100 with four times its registers per SM and up to 1024 per thread: a device on which the rules that
/// count threads and accumulators can fire without the register budget firing too (every tile parameter is
/// a power of two, so more than 1024 threads means 2048, which leaves a real H100 32 registers a thread).
GpuLimits roomy() {
  GpuLimits limits = h100();
  limits.registers_per_sm = 4 * 65536;
  limits.max_registers_per_thread = 1024;
  return limits;
}

// ---- 1. the declaration ---------------------------------------------------------------------------------

TEST(GemmSkinnyDeclaration, IsRegisteredForSixteenBitInputsAndEveryLayout) {
  EXPECT_EQ(&find_template("gemm_skinny"), &skinny());
  EXPECT_NE(std::find(all_templates().begin(), all_templates().end(), &skinny()), all_templates().end());
  EXPECT_EQ(skinny().source_file, "gemm_skinny.cu");
  EXPECT_EQ(skinny().entry_points,
            (std::vector<std::string>{"tf_gemm_rr", "tf_gemm_rc", "tf_gemm_cr", "tf_gemm_cc", "tf_scale_c"}));
  EXPECT_EQ(skinny().supported_types, sixteen_bit_type_pairs());
  EXPECT_EQ(skinny().layouts, all_layouts());
  EXPECT_EQ(skinny().mutants, gemm_skinny_mutant_names());
  // The parameters the fuzz and time stages read by name are all there: the fuzzer varies the split count
  // because SPLIT_K exists, and never imposes a persistent grid because PERSISTENT does not.
  for (const char* name : {"BM", "BN", "BK", "STAGES", "VEC", "SPLIT_K"}) EXPECT_NE(skinny().parameter(name), nullptr);
  EXPECT_EQ(skinny().parameter("PERSISTENT"), nullptr);
  const Candidate candidate{&skinny(), at({{"BM", 8}, {"WM", 8}, {"SPLIT_K", 3}}), kBf16};
  const Candidate parsed = parse_candidate_id(candidate.id());
  EXPECT_EQ(parsed.kernel_template, &skinny());
  EXPECT_EQ(parsed.point, candidate.point);
}

TEST(GemmSkinnyDeclaration, EveryCompileTimeParameterIsADefineOfTheKernel) {
  // `#define NAME DEFAULT` stands in the kernel for each compile-time parameter; SPLIT_K is the launcher's.
  std::set<std::string> defined;
  for (const Define& d : skinny().defines(skinny().default_point(), kBf16)) defined.insert(d.name);
  for (const ParameterDecl& decl : skinny().parameters) {
    SCOPED_TRACE(decl.name);
    EXPECT_EQ(decl.compile_time, decl.name != "SPLIT_K");
    EXPECT_EQ(defined.count(decl.name), decl.compile_time ? 1u : 0u);
    EXPECT_EQ(contains(skinny_source().text, "#define " + decl.name + " " + std::to_string(decl.default_value)),
              decl.compile_time);
  }
}

// ---- 2. the formulas, by hand ---------------------------------------------------------------------------

TEST(GemmSkinnyFormulas, SharedMemoryThreadsAndWorkspaceMatchHandArithmetic) {
  // shared memory = STAGES * (BN + BM) * BK * 2 bytes; threads = (BN/WN) * (BM/WM) * 32;
  // workspace (splits > 1) = tiles * splits * BM * BN * 4 bytes, tiles = ceil(M/BM) * ceil(N/BN).
  struct Case {
    Point point;
    int64_t shared_memory_bytes, threads;
  };
  const std::vector<Case> cases = {
      // defaults: 4 * (64 + 16) * 128 * 2 = 81920; (64/16) * (16/16) * 32 = 128
      {at({}), 81920, 128},
      // 4 * (32 + 8) * 128 * 2 = 40960; (32/16) * (8/8) * 32 = 64
      {at({{"BM", 8}, {"WM", 8}, {"BN", 32}}), 40960, 64},
      // 6 * (64 + 16) * 64 * 2 = 61440; 128
      {at({{"BK", 64}, {"STAGES", 6}}), 61440, 128},
      // 4 * (64 + 128) * 64 * 2 = 98304; (64/32) * (128/32) * 32 = 256
      {at({{"BM", 128}, {"WM", 32}, {"WN", 32}, {"BK", 64}}), 98304, 256},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.point.str());
    EXPECT_EQ(skinny().shared_memory_bytes(c.point), c.shared_memory_bytes);
    EXPECT_EQ(skinny().threads_per_block(c.point), c.threads);
    const LaunchGeometry g = skinny().geometry(c.point, shape(100, 1000, 300));
    EXPECT_EQ(g.block_x, c.threads);
    EXPECT_EQ(g.shared_memory_bytes, c.shared_memory_bytes);
    EXPECT_EQ(g.workspace_bytes, 0);  // SPLIT_K = 1: no partials
  }
  // 100 x 1000 at BM = 16, BN = 64: 7 x 16 = 112 tiles; 3 splits: 336 CTAs, 112 * 3 * 16 * 64 * 4 bytes.
  const GemmShape s = shape(100, 1000, 300);
  EXPECT_EQ(gemm_skinny_tiles(at({}), s), 112);
  const LaunchGeometry split = gemm_skinny_geometry(at({{"SPLIT_K", 3}}), s, {});
  EXPECT_EQ(split.grid_x, 336);
  EXPECT_EQ(split.workspace_bytes, 112 * 3 * 16 * 64 * 4);
  // A fuzz case's split count replaces the candidate's; its grid is not used (no persistent mode).
  const LaunchGeometry overridden = gemm_skinny_geometry(at({{"SPLIT_K", 3}}), s, {5, 7});
  EXPECT_EQ(overridden.grid_x, 112 * 5);
  EXPECT_EQ(overridden.workspace_bytes, 112 * 5 * 16 * 64 * 4);
  EXPECT_EQ(gemm_skinny_geometry(at({{"SPLIT_K", 3}}), s, {1, 0}).workspace_bytes, 0);
}

TEST(GemmSkinnyFormulas, UnitsCoverEveryTileAndSplitOnceAndSplitsCoverK) {
  // The kernel's mapping: unit u is split u % S of tile u / S; tile t is (t % tiles_m, t / tiles_m), which
  // is tf_tile_map with one group of all tile rows; split s takes tf_k_range(k_tiles, S, s).
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 8, 16}, {128, 1000, 1000},
                                {100, 8192, 8192}, {17, 136, 40}}) {
    for (const Point& p : {at({}), at({{"BM", 8}, {"WM", 8}, {"BN", 32}}), at({{"BM", 64}, {"WM", 32}})})
      for (const int64_t splits : {1, 2, 3, 7, 100}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + p.str() +
                     " splits " + std::to_string(splits));
        const GemmShape s = shape(m, n, k);
        const int64_t tiles_m = (m + p["BM"] - 1) / p["BM"], tiles_n = (n + p["BN"] - 1) / p["BN"];
        const int64_t k_tiles = (k + p["BK"] - 1) / p["BK"];
        const LaunchGeometry g = gemm_skinny_geometry(p, s, {splits, 0});
        ASSERT_EQ(g.grid_x, tiles_m * tiles_n * splits);
        std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> k_tiles_seen;  // by tile: K tiles added
        std::set<std::tuple<int64_t, int64_t, int64_t>> units;
        for (int64_t unit = 0; unit < g.grid_x; ++unit) {
          const int64_t split = unit % splits, tile = unit / splits;
          const TfTile t = tf_tile_map(tile, tiles_m, tiles_n, tiles_m, 1);
          ASSERT_TRUE(t.m >= 0 && t.m < tiles_m && t.n >= 0 && t.n < tiles_n);
          EXPECT_EQ(t.m + tiles_m * t.n, tile);  // the counter index is the tile index
          EXPECT_TRUE(units.emplace(t.m, t.n, split).second) << "unit visited twice";
          const TfKRange r = tf_k_range(k_tiles, splits, split, 0);
          for (int64_t kt = r.begin; kt < r.end; ++kt) k_tiles_seen[{t.m, t.n}].push_back(kt);
        }
        EXPECT_EQ(static_cast<int64_t>(units.size()), tiles_m * tiles_n * splits);
        for (const auto& [tile, seen] : k_tiles_seen) {
          std::vector<int64_t> sorted = seen;
          std::sort(sorted.begin(), sorted.end());
          std::vector<int64_t> all(static_cast<size_t>(k_tiles));
          for (int64_t kt = 0; kt < k_tiles; ++kt) all[static_cast<size_t>(kt)] = kt;
          EXPECT_EQ(sorted, all);
        }
        // The workspace holds a whole partial tile for every unit.
        EXPECT_EQ(g.workspace_bytes, splits > 1 ? g.grid_x * p["BM"] * p["BN"] * 4 : 0);
      }
  }
}

// ---- 3. the space: the shipped configs, and each rule on both sides -----------------------------------

TEST(GemmSkinnySpace, ShippedSpacesKeepEveryPointAndServeTheDecodeProblems) {
  // Three entries: BM = WM = 8 with BN 32 or 64 and SPLIT_K 1 or 2 (4 points); BM = WM = 16 with BN 32 or 64,
  // WN 16 or 32, BK 64 or 128, four stages, SPLIT_K 1 or 2 (16); BM 64 or 128 with 32 x 32 warp tiles,
  // SPLIT_K 2 or 3 (4). The largest needs 4 * (64 + 128) * 64 * 2 = 98304 bytes and 256 threads: no rule
  // prunes anything.
  for (const char* file : {"h100.yaml", "h200.yaml"}) {
    SCOPED_TRACE(file);
    const Config config = load_config(std::string(TUNEFUZZ_SOURCE_DIR "/configs/") + file);
    std::vector<SpaceReport> reports;
    for (const TemplateSearch& s : config.templates)
      if (s.name == "gemm_skinny") reports.push_back(Space(skinny(), s, config.gpu.limits).prune());
    ASSERT_EQ(reports.size(), 3u);
    const std::vector<size_t> sizes = {4, 16, 4};
    for (size_t i = 0; i < reports.size(); ++i) {
      EXPECT_EQ(reports[i].enumerated, static_cast<int64_t>(sizes[i]));
      EXPECT_EQ(reports[i].kept.size(), sizes[i]);
      for (const auto& [rule, count] : pruned_counts(reports[i])) EXPECT_EQ(count, 0) << rule;
    }
    // Every point computes every decode problem (M <= 128), several tile rows where M > BM.
    int decode = 0;
    for (const Problem& problem : config.problems) {
      if (problem.m > 128 || problem.input != Precision::bf16) continue;
      ++decode;
      for (const SpaceReport& r : reports)
        for (const Point& p : r.kept)
          EXPECT_EQ(skinny().refusal(p, shape_of(problem)), std::nullopt) << problem.name << " " << p.str();
    }
    EXPECT_EQ(decode, 4);
  }
}

TEST(GemmSkinnySpace, EveryConstraintCanFireAlone) {
  // For each rule, an assignment that breaks that rule and no other (arithmetic in the comments), on an
  // H100 or, for the rules an H100's register budget always shadows, on roomy().
  struct Break {
    std::string rule, assignment;
    bool roomy;
  };
  const std::vector<Break> breaks = {
      {"positive", "SPLIT_K=0", false},  // read by no other rule
      // 64 % 48 = 16; 48 % 16 = 0; one warp (64/48 = 1), 24 accumulators
      {"warp_tiling", "WN=48", false},
      {"mma_shape", "WN=8", false},            // 64 % 8 = 0: eight warps of 4 accumulators
      {"mma_shape", "BK=8", false},            // a power of two, not a multiple of 16
      {"mma_shape", "BM=16,WM=4", false},      // 16 % 4 = 0, but 4 is neither 8 nor a multiple of 16
      {"power_of_two", "BN=96,WN=32", false},  // 96 % 32 = 0: three warps
      // 4 * (16 + 256) * 64 * 2 = 139264 bytes; (16/16) * (256/64) * 32 = 128 threads; 32 accumulators
      {"tile_rows", "BM=256,WM=64,BN=16,BK=64", false},
      // (1024/16) * 32 = 2048 threads; 2 * (1024 + 16) * 16 * 2 = 66560 bytes; roomy: 128 registers each
      {"threads", "BN=1024,BK=16,STAGES=2", true},
      {"shared_memory", "STAGES=12", false},  // 12 * 80 * 128 * 2 = 245760 > 232448
      // 512 * 16 / 32 = 256 accumulators > 128; one warp: roomy leaves it 1024 >= 288 registers;
      // 4 * (512 + 16) * 32 * 2 = 135168 bytes
      {"accumulators", "BN=512,WN=512,BK=32", true},
      // (512/64) * (128/32) * 32 = 1024 threads: 64 registers each < 64 * 32 / 32 + 32 = 96;
      // 2 * (512 + 128) * 16 * 2 = 40960 bytes
      {"register_budget", "BN=512,WN=64,BM=128,WM=32,BK=16,STAGES=2", false},
      {"stages", "STAGES=1", false},
      {"vector_width", "VEC=1", false},
      {"vector_width", "VEC=16", false},
      {"layouts", "LAYOUTS=16", false},
  };
  const Space on_h100(skinny(), search({}), h100());
  const Space on_roomy(skinny(), search({}), roomy());
  std::set<std::string> covered;
  for (const Break& b : breaks) {
    SCOPED_TRACE(b.rule + ": " + b.assignment);
    const Explanation e = test::explain_anywhere(b.roomy ? on_roomy : on_h100, b.assignment);
    EXPECT_FALSE(e.kept());
    EXPECT_EQ(failing(e), std::vector<std::string>{b.rule});
    covered.insert(b.rule);
  }
  for (const Constraint& c : skinny().constraints) EXPECT_EQ(covered.count(c.name), 1u) << "no point breaks " << c.name;
  EXPECT_TRUE(on_h100.explain("").kept());  // the default point breaks nothing
}

TEST(GemmSkinnySpace, PointsOnEitherSideOfEachRuleFallOnTheirSide) {
  struct Edge {
    std::string rule, inside, outside;
    bool roomy;
  };
  const std::vector<Edge> edges = {
      {"positive", "SPLIT_K=1", "SPLIT_K=0", false},
      {"warp_tiling", "WN=32", "WN=48", false},
      {"mma_shape", "WN=16", "WN=8", false},
      {"mma_shape", "BK=16", "BK=8", false},
      {"mma_shape", "BM=16,WM=8", "BM=16,WM=4", false},
      {"power_of_two", "BN=128,WN=32", "BN=96,WN=32", false},
      {"tile_rows", "BM=128,WM=64,BN=16,BK=64", "BM=256,WM=64,BN=16,BK=64", false},
      // 512/16 = 32 warps (1024 threads) against 64 (2048)
      {"threads", "BN=512,BK=16,STAGES=2", "BN=1024,BK=16,STAGES=2", true},
      // 11 * 80 * 256 = 225280 <= 232448 < 12 * 80 * 256 = 245760
      {"shared_memory", "STAGES=11", "STAGES=12", false},
      {"accumulators", "BN=256,WN=256,BK=32", "BN=512,WN=512,BK=32", true},  // 128 against 256
      // 512 threads: 128 registers >= 96; 1024 threads: 64 < 96
      {"register_budget", "BN=256,WN=64,BM=128,WM=32,BK=16,STAGES=2",
       "BN=512,WN=64,BM=128,WM=32,BK=16,STAGES=2", false},
      {"stages", "STAGES=2", "STAGES=1", false},
      {"vector_width", "VEC=2", "VEC=1", false},
      {"vector_width", "VEC=8", "VEC=16", false},
      {"layouts", "LAYOUTS=15", "LAYOUTS=16", false},
      {"layouts", "LAYOUTS=1", "LAYOUTS=16", false},
  };
  const Space on_h100(skinny(), search({}), h100());
  const Space on_roomy(skinny(), search({}), roomy());
  std::set<std::string> covered;
  for (const Edge& edge : edges) {
    SCOPED_TRACE(edge.rule + ": " + edge.inside + " | " + edge.outside);
    const Space& space = edge.roomy ? on_roomy : on_h100;
    EXPECT_TRUE(test::explain_anywhere(space, edge.inside).kept());
    EXPECT_EQ(failing(test::explain_anywhere(space, edge.outside)), std::vector<std::string>{edge.rule});
    covered.insert(edge.rule);
  }
  for (const Constraint& c : skinny().constraints) EXPECT_EQ(covered.count(c.name), 1u) << c.name;
}

// ---- 4. refusals ---------------------------------------------------------------------------------------

TEST(GemmSkinnyRefusal, AcceptsEveryMUpTo128InEveryLayout) {
  for (const Layout& layout : all_layouts())
    for (const int64_t m : {1, 8, 9, 16, 64, 100, 128}) {
      SCOPED_TRACE(to_string(layout) + " M=" + std::to_string(m));
      // Column-major A is stored along M: at VEC = 2, M must be even.
      const Point p = layout.a == Order::col ? at({{"VEC", 2}}) : at({});
      const int64_t rows = layout.a == Order::col && m % 2 ? m + 1 : m;
      EXPECT_EQ(skinny().refusal(p, shape(rows, 8192, 8192, layout)), std::nullopt);
    }
  // An odd N where B is stored along K (column-major B), with padded leading dimensions and C at any
  // element alignment.
  GemmShape rc = shape(5, 131, 4104, {Order::row, Order::col});
  rc.lda = 4112;
  rc.ldb = 4120;
  rc.ldc = 133;
  rc.c_alignment = 2;
  EXPECT_EQ(skinny().refusal(at({}), rc), std::nullopt);
}

TEST(GemmSkinnyRefusal, MoreThan128RowsNamesTheTemplatesThatServeThem) {
  const auto why = skinny().refusal(at({{"BM", 128}, {"WM", 32}}), shape(129, 8192, 8192));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "gemm_skinny serves M <= 128 (decode and skinny shapes), not M=129; gemm_mma and gemm_wgmma "
                  "serve larger M");
  // Rows beyond BM but within 128 take several tile rows: accepted, each reading B again.
  EXPECT_EQ(skinny().refusal(at({{"BM", 8}, {"WM", 8}}), shape(128, 8192, 8192)), std::nullopt);
}

TEST(GemmSkinnyRefusal, VectorWidthNamesTheFieldAndWhatServesTheProblem) {
  struct Case {
    std::string field;
    Layout layout;
    std::function<void(GemmShape&)> spoil;
  };
  const Layout rr{}, rc{Order::row, Order::col}, cr{Order::col, Order::row};
  const std::vector<Case> cases = {
      {"K", rr, [](GemmShape& s) { s.k = 4097, s.lda = 4104; }},  // row-major A is stored along K
      {"N", rr, [](GemmShape& s) { s.n = 4093, s.ldb = 4096, s.ldc = 4093; }},  // row-major B along N
      {"K", rc, [](GemmShape& s) { s.k = 4097, s.lda = 4104, s.ldb = 4104; }},
      {"M", cr, [](GemmShape& s) { s.m = 7; }},  // column-major A is stored along M
      {"lda", rr, [](GemmShape& s) { s.lda = 4097; }},
      {"ldb", rc, [](GemmShape& s) { s.ldb = 4099; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field + " " + to_string(c.layout));
    GemmShape s = shape(16, 4096, 4096, c.layout);
    c.spoil(s);
    for (const int64_t vec : {2, 4, 8}) {
      const auto why = skinny().refusal(at({{"VEC", vec}}), s);
      ASSERT_TRUE(why.has_value());
      const std::string want = "VEC=" + std::to_string(vec) + " needs " + c.field + " to be a multiple of " +
                               std::to_string(vec) + " (" + c.field + "=";
      EXPECT_TRUE(contains(*why, want)) << *why;
      EXPECT_TRUE(contains(*why, "a smaller VEC, or gemm_mma with VEC=1 or PACK=1, serves this problem")) << *why;
    }
  }
  // An even extent is taken at VEC = 2.
  GemmShape even = shape(16, 4094, 4094);
  EXPECT_EQ(skinny().refusal(at({{"VEC", 2}}), even), std::nullopt);
  EXPECT_TRUE(skinny().refusal(at({{"VEC", 4}}), even).has_value());
}

TEST(GemmSkinnyRefusal, BaseAlignmentMustHoldAWholeVector) {
  for (const auto& [vec, needed] : {std::pair<int64_t, int64_t>{8, 16}, {4, 8}, {2, 4}})
    for (const bool spoil_a : {true, false}) {
      SCOPED_TRACE("VEC=" + std::to_string(vec) + (spoil_a ? " A" : " B"));
      GemmShape s = shape(16, 256, 256);
      (spoil_a ? s.a_alignment : s.b_alignment) = needed;
      EXPECT_EQ(skinny().refusal(at({{"VEC", vec}}), s), std::nullopt);
      (spoil_a ? s.a_alignment : s.b_alignment) = needed / 2;
      const auto why = skinny().refusal(at({{"VEC", vec}}), s);
      ASSERT_TRUE(why.has_value());
      EXPECT_EQ(*why, "VEC=" + std::to_string(vec) + " needs A and B base addresses aligned to " +
                          std::to_string(needed) + " bytes");
    }
}

TEST(GemmSkinnyRefusal, ShapesAndGridsItCannotCompute) {
  const Point p = at({});
  EXPECT_FALSE(skinny().refusal(p, shape(0, 4, 8)).has_value()) << "a zero size is a quick return";
  EXPECT_TRUE(contains(*skinny().refusal(p, shape(-1, 4, 8)), "must not be negative"));
  GemmShape short_rows = shape(8, 8, 8);
  short_rows.lda = 4;
  EXPECT_TRUE(contains(*skinny().refusal(p, short_rows), "leading dimensions must be at least"));
  GemmShape misaligned_c = shape(8, 8, 8);
  misaligned_c.c_alignment = 1;
  EXPECT_EQ(skinny().refusal(p, misaligned_c), "C's base address is not aligned to its element size");
  // 2^31 columns at BN = 64: 2^25 tiles; 64 splits make 2^31 CTAs, one more than a grid holds.
  const GemmShape wide = shape(1, int64_t{1} << 31, 8);
  EXPECT_EQ(skinny().refusal(at({{"SPLIT_K", 64}}), wide),
            "the grid would need 2147483648 CTAs (over 2^31 - 1); a smaller SPLIT_K serves it");
  EXPECT_EQ(skinny().refusal(at({{"SPLIT_K", 63}}), wide), std::nullopt);
}

// ---- 5. NVRTC: every shipped point compiles into the kernel the host describes --------------------------

TEST(GemmSkinnyCompile, EveryPointOfTheShippedSpacesCompilesAsDeclared) {
  std::vector<Point> points = shipped_points("h100.yaml");
  for (const Point& p : shipped_points("h200.yaml"))
    if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
  ASSERT_EQ(points.size(), 24u);
  std::set<std::string> images;
  for (const Point& point : points) {
    SCOPED_TRACE(point.str());
    const CompiledKernel& kernel = compiled(point);
    images.insert(kernel.key);
    EXPECT_FALSE(kernel.image.empty());
    for (const std::string& entry : skinny().entry_points) {
      ASSERT_TRUE(kernel.resources.count(entry)) << entry << "\n" << kernel.log;
      EXPECT_FALSE(kernel.resources.at(entry).spills()) << entry << "\n" << kernel.log;
      EXPECT_TRUE(contains(kernel.ptx, ".entry " + entry)) << entry;
    }
    for (const std::string& instruction : skinny().expected_instructions(point))
      EXPECT_TRUE(contains(kernel.ptx, instruction)) << "missing " << instruction;
    EXPECT_FALSE(contains(kernel.ptx, "wgmma")) << "mma.sync only: the template runs on sm_80 and later";
    const auto meta = kernel_meta(kernel.ptx);
    ASSERT_TRUE(meta.has_value()) << "no tf_kernel_meta initialiser in the PTX";
    EXPECT_EQ((*meta)[0], skinny().threads_per_block(point));
    EXPECT_EQ((*meta)[1], skinny().shared_memory_bytes(point));
    EXPECT_EQ((*meta)[2], point["BM"]);
    EXPECT_EQ((*meta)[3], point["BN"]);
  }
  // SPLIT_K is the launcher's: twins that differ in it share one image.
  EXPECT_EQ(images.size(), 12u);
}

TEST(GemmSkinnyCompile, EveryTypePairAndVectorWidthCompilesWithItsInstructions) {
  // fp16 and bf16 mma; the output conversion of each C type; 16-byte copies bypass L1 (.cg), narrower ones
  // cannot (.ca).
  for (const TypePair& types : skinny().supported_types) {
    SCOPED_TRACE(std::string(to_string(types.input)) + "-" + to_string(types.output));
    const CompiledKernel& kernel = compiled(at({}), types);
    EXPECT_TRUE(contains(kernel.ptx, std::string("mma.sync.aligned.m16n8k16.row.col.f32.") +
                                         (types.input == Precision::bf16 ? "bf16.bf16" : "f16.f16")));
    if (types.output != Precision::fp32) {
      EXPECT_TRUE(contains(kernel.ptx, types.output == Precision::bf16 ? "cvt.rn.bf16x2.f32" : "cvt.rn.f16x2.f32"));
    }
  }
  for (const int64_t vec : {2, 4, 8}) {
    SCOPED_TRACE("VEC=" + std::to_string(vec));
    const Point point = at({{"VEC", vec}});
    const CompiledKernel& kernel = compiled(point);
    for (const std::string& instruction : skinny().expected_instructions(point))
      EXPECT_TRUE(contains(kernel.ptx, instruction)) << instruction;
    EXPECT_EQ(contains(kernel.ptx, "cp.async.cg.shared.global"), vec == 8);
    EXPECT_EQ(contains(kernel.ptx, "cp.async.ca.shared.global"), vec != 8);
  }
  // One n8 fragment of rows per warp loads it with ldmatrix .x2.
  EXPECT_TRUE(contains(compiled(at({{"BM", 8}, {"WM", 8}})).ptx, "ldmatrix.sync.aligned.m8n8.x2"));
}

// Each injected bug (fuzz mutants) is a TF_MUTANT_* code of the kernel under its declared name, and changes
// the code it compiles to.
TEST(GemmSkinnyCompile, EveryInjectedBugCompilesToItsOwnCode) {
  const std::vector<std::string>& names = gemm_skinny_mutant_names();
  ASSERT_GE(names.size(), 4u);
  const Point point = at({{"SPLIT_K", 2}});
  std::set<std::string> ptx = {compiled(point).ptx};
  for (int code = 1; code < static_cast<int>(names.size()); ++code) {
    SCOPED_TRACE(names[code]);
    std::string upper = names[code];
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_TRUE(contains(skinny_source().text, "#define TF_MUTANT_" + upper + " " + std::to_string(code)));
    EXPECT_TRUE(ptx.insert(compiled(point, kBf16, code).ptx).second) << "the mutant changes nothing in the code";
  }
}

// ---- 6. impossible combinations stop at their own static_assert ---------------------------------------

TEST(GemmSkinnyStaticAsserts, EachImpossibleCombinationFailsWithItsOwnMessage) {
  struct Impossible {
    std::string assignment;  ///< tunables changed from the defaults
    TypePair types;
    std::string message;     ///< the static_assert that must fire (and no other)
    std::string constraint;  ///< the host rule that prunes the same point; empty for the element types
    bool roomy = false;      ///< judged against roomy() rather than an H100
  };
  const std::vector<Impossible> cases = {
      {"", {Precision::fp32, Precision::fp32}, "gemm_skinny computes fp16 or bf16 inputs", ""},
      {"", {Precision::bf16, Precision::fp8e4m3}, "TF_OUTPUT must be fp16, bf16 or fp32", ""},
      {"WN=48", kBf16, "the warp tile WMxWN must divide the CTA tile BMxBN", "warp_tiling"},
      {"WN=8", kBf16, "WN must be a multiple of 16 (m16 fragments of B transposed)", "mma_shape"},
      {"BM=16,WM=4", kBf16, "WM must be 8 or a multiple of 16 (ldmatrix loads one or two n8 fragments)",
       "mma_shape"},
      {"BK=8", kBf16, "BK must be a multiple of 16 (mma.sync k16 steps)", "mma_shape"},
      {"BN=96,WN=32", kBf16,
       "BM, BN and BK must be powers of two (16-byte chunks are XOR-swizzled within a stored row)",
       "power_of_two"},
      {"BM=256,WM=64,BN=16,BK=64", kBf16, "BM must be at most 128 (the template serves M <= 128)",
       "tile_rows"},
      {"BN=1024,BK=16,STAGES=2", kBf16, "more than 1024 threads per CTA: (BN/WN)*(BM/WM)*32 > 1024",
       "threads", true},
      {"STAGES=1", kBf16, "STAGES must be at least 2 (one stage loading while one is consumed)", "stages"},
      {"VEC=1", kBf16, "VEC must be 2, 4 or 8 elements (cp.async copies 4, 8 or 16 bytes)", "vector_width"},
      {"LAYOUTS=16", kBf16, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC", "layouts"},
  };
  const std::vector<std::string> all_messages = static_assert_messages(skinny_source().text);
  ASSERT_EQ(all_messages.size(), 12u);
  const Space space(skinny(), search({}), h100());
  std::set<std::string> fired;
  for (const Impossible& c : cases) {
    const Point point = space.explain(c.assignment).point;
    SCOPED_TRACE(point.str() + " " + to_string(c.types.input) + "-" + to_string(c.types.output));
    ASSERT_NE(std::find(all_messages.begin(), all_messages.end(), c.message), all_messages.end())
        << "no static_assert says '" << c.message << "'";
    EXPECT_TRUE(stops_at_static_assert(compiler(), request_for(point, c.types), all_messages, c.message));
    fired.insert(c.message);
    if (c.constraint.empty()) {
      EXPECT_EQ(std::find(skinny().supported_types.begin(), skinny().supported_types.end(), c.types),
                skinny().supported_types.end());
    } else {
      const auto& rules = skinny().constraints;
      const auto rule = std::find_if(rules.begin(), rules.end(),
                                     [&](const Constraint& r) { return r.name == c.constraint; });
      ASSERT_NE(rule, rules.end());
      EXPECT_FALSE(rule->holds(point, c.roomy ? roomy() : h100())) << rule->name;
    }
  }
  EXPECT_EQ(fired, std::set<std::string>(all_messages.begin(), all_messages.end()));  // every assert exercised
}

}  // namespace
}  // namespace tunefuzz
