// GPU laws (run through tests/gpu_guard.sh; skipped with the reason where there is no GPU):
//  - the default gemm_mma and gemm_simt candidates are right on the edge cases each bug class lives in;
//  - the injected bugs that a single chosen case must expose are caught, with the expected class.
// The fuzz campaign (`fuzz mutants`) covers the rest with generated cases; this is the fixed floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/backend/nvrtc_compiler.hpp"
#include "runtime/cuda/cuda.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/gemm_simt.hpp"
#include "runtime/templates/gemm_skinny.hpp"
#include "runtime/templates/gemm_wgmma.hpp"
#include "tuner/common/precision.hpp"
#include "tuner/device/case_executor.hpp"

namespace tunefuzz {
namespace {

using fuzz::CaseRecord;
using fuzz::Distribution;

class GpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    device_ = std::make_unique<DeviceInfo>(device::query_device());
    context_ = std::make_unique<device::Context>();
    stream_ = std::make_unique<device::Stream>();
  }
  static void TearDownTestSuite() {
    stream_.reset();
    context_.reset();
  }

  // Compiles and runs one case on a gemm_mma candidate: the default point with some parameters overridden.
  static device::CaseOutcome run(const CaseRecord& record,
                                 std::vector<std::pair<std::string, int64_t>> overrides, TypePair types = {},
                                 int mutant = 0) {
    return run_on(gemm_mma_template(), record, std::move(overrides), types, mutant);
  }

  // The same on a gemm_simt candidate (fp32 in and out).
  static device::CaseOutcome run_simt(const CaseRecord& record,
                                      std::vector<std::pair<std::string, int64_t>> overrides,
                                      int mutant = 0) {
    return run_on(gemm_simt_template(), record, std::move(overrides), {Precision::fp32, Precision::fp32},
                  mutant);
  }

  // `perturb`: the seed of the schedule-perturbed twin's image (templates/perturb.h), 0 for the plain image.
  static device::CaseOutcome run_on(const KernelTemplate& t, const CaseRecord& record,
                                    std::vector<std::pair<std::string, int64_t>> overrides, TypePair types,
                                    int mutant, int64_t perturb = 0) {
    Candidate candidate = candidate_at(t, std::move(overrides), types, mutant);
    candidate.perturb = perturb;
    const auto runner = device::load_candidate(candidate, image_of(candidate));
    device::CaseExecutor executor(candidate, *runner, stream_->get());
    return executor.run(record);
  }

  // The code of the injected bug `name` among a template's mutant names (TF_MUTANT_* in its source).
  static int mutant_code(const std::vector<std::string>& names, const char* name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  }

  // `t`'s default point with some parameters overridden.
  static Candidate candidate_at(const KernelTemplate& t, std::vector<std::pair<std::string, int64_t>> overrides,
                                TypePair types, int mutant) {
    auto values = t.default_point().values();
    for (auto& [name, value] : values)
      for (const auto& [override_name, override_value] : overrides)
        if (name == override_name) value = override_value;
    return Candidate{&t, Point(values), types, mutant};
  }

  // The candidate's image, compiled once per suite.
  static const std::string& image_of(const Candidate& candidate) {
    const KernelTemplate& t = *candidate.kernel_template;
    const NvrtcCompiler compiler;
    std::unique_ptr<KernelSource>& source = sources_[t.source_file];
    if (!source)
      source =
          std::make_unique<KernelSource>(KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", t.source_file));
    const CompileRequest request{
        source.get(), t.defines(candidate.point, candidate.types, candidate.mutant, candidate.perturb),
        t.compile_arch(device_->arch)};
    std::string& image = images_[compiler.key(request)];  // compile each distinct image once per suite
    if (image.empty()) image = compiler.compile(request).image;
    return image;
  }

  static CaseRecord with_layout(CaseRecord r, const char* layout) {
    r.layout = *parse_layout(layout);
    return r;
  }

  static CaseRecord record(int64_t m, int64_t n, int64_t k, Distribution d = Distribution::small_int,
                           double alpha = 1, double beta = 0) {
    CaseRecord r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.alpha = alpha;
    r.beta = beta;
    r.distribution = d;
    r.seed = 1234;
    return r;
  }

  // `r` with its launch overridden: `splits` K splits, a grid of `grid` CTAs (0: the candidate's own).
  static CaseRecord padded_a(CaseRecord r, int64_t lda_pad) {
    r.lda_pad = lda_pad;
    return r;
  }

  static CaseRecord with(CaseRecord r, int64_t splits, int64_t grid) {
    r.splits = splits;
    r.grid = grid;
    return r;
  }

  static inline std::unique_ptr<DeviceInfo> device_;
  static inline std::unique_ptr<device::Context> context_;
  static inline std::unique_ptr<device::Stream> stream_;
  static inline std::map<std::string, std::unique_ptr<KernelSource>> sources_;  // by template file
  static inline std::map<std::string, std::string> images_;
};

TEST_F(GpuTest, EdgeCasesPassOnEveryTypePair) {
  const std::vector<CaseRecord> cases = {
      record(1, 8, 8),                                         // one row, one vector of K
      record(129, 136, 40),                                    // one past a tile in M, partial N and K tiles
      record(128, 128, 32),                                    // exactly one tile
      record(7, 24, 16, Distribution::ones),                   // K below BK: every output is K
      record(33, 40, 65536, Distribution::small_int),          // large K, exact
      record(200, 72, 1000, Distribution::normal, 2.0, -1.0),  // bounded mode, C read and scaled
      record(1100, 264, 24, Distribution::sequential),         // 9 tile rows: a short last GROUP_M group
  };
  for (const TypePair types : gemm_mma_template().supported_types)
    for (CaseRecord c : cases) {
      c.ldc_pad = 3;
      const device::CaseOutcome outcome = run(c, {}, types);
      EXPECT_TRUE(outcome.passed) << to_string(types.input) << "->" << to_string(types.output) << " "
                                  << fuzz::to_string(c) << ": " << outcome.message;
    }
}

// Regressions: cases a campaign once failed, kept forever.
TEST_F(GpuTest, RegressionCases) {
  // 2026-11-26, first H200 smoke campaign: 9 x 8 tiles of 128 (72 CTAs, half a wave), K == BK, padded A and
  // B. "unwritten" elements on the last tile row: the C upload (pageable, legacy stream) was still landing
  // when the kernel ran on a non-blocking stream. Fixed by ordering device work after the copies.
  // RapidCheck: reproduce=BQgZ1pneokg1BdBiAAAKJYdQXgIAAgSCWH0FICAAokg1BdBiAAAgAiAASsCAAAQAOA (seed
  // 149633470171432)
  CaseRecord race = record(1088, 960, 32);
  race.lda_pad = 8;
  race.ldb_pad = 8;
  race.seed = 331344;
  for (int repeat = 0; repeat < 20; ++repeat) {
    const device::CaseOutcome outcome = run(race, {});
    ASSERT_TRUE(outcome.passed) << "repeat " << repeat << ": " << outcome.message;
  }
}

TEST_F(GpuTest, PackedAndElementwisePathsHandleMisalignedOperands) {
  CaseRecord odd = record(97, 131, 1031, Distribution::small_int, 1.0, 1.0);
  odd.lda_pad = 3;
  odd.ldb_pad = 1;
  const device::CaseOutcome packed = run(odd, {{"PACK", 1}});
  EXPECT_TRUE(packed.passed) << packed.message;
  const device::CaseOutcome elementwise = run(odd, {{"VEC", 1}, {"WM", 32}, {"BM", 64}});
  EXPECT_TRUE(elementwise.passed) << elementwise.message;
  const device::CaseOutcome refused = run(odd, {});
  EXPECT_TRUE(refused.refused) << "VEC=8 without packing must refuse K=1031, not compute it";
}

// Every storage order of A and B, on tails in every dimension, with padded leading dimensions, through the
// in-place, packed and element-wise load paths.
TEST_F(GpuTest, EveryLayoutIsRightOnEveryLoadPath) {
  const std::vector<Layout> layouts = {
      {Order::row, Order::row}, {Order::row, Order::col}, {Order::col, Order::row}, {Order::col, Order::col}};
  for (const Layout layout : layouts) {
    CaseRecord aligned = record(136, 200, 72, Distribution::sequential, 1.0, 0.5);
    aligned.layout = layout;
    aligned.lda_pad = 8;
    aligned.ldb_pad = 16;
    CaseRecord odd = record(97, 131, 103, Distribution::identity);
    odd.layout = layout;
    odd.lda_pad = 3;
    odd.ldb_pad = 1;
    const std::string name = to_string(layout);
    const device::CaseOutcome in_place = run(aligned, {});
    EXPECT_TRUE(in_place.passed) << name << " VEC=8: " << in_place.message;
    const device::CaseOutcome padded = run(aligned, {{"SWIZZLE", 0}});
    EXPECT_TRUE(padded.passed) << name << " SWIZZLE=0: " << padded.message;
    const device::CaseOutcome packed = run(odd, {{"PACK", 1}});
    EXPECT_TRUE(packed.passed) << name << " PACK=1: " << packed.message;
    const device::CaseOutcome elementwise = run(odd, {{"VEC", 1}, {"WM", 32}, {"BM", 64}});
    EXPECT_TRUE(elementwise.passed) << name << " VEC=1: " << elementwise.message;
  }
}

// VEC=2 with one operand aligned for 16-byte copies and the other not, in every storage order, with split-K,
// and with a base two elements off 16 bytes: the aligned operand takes whole chunks, the other VEC-element
// copies, and a misaligned base keeps its operand on VEC.
TEST_F(GpuTest, NarrowVecTakesChunksWhereAnOperandAllows) {
  const std::vector<Layout> layouts = {
      {Order::row, Order::row}, {Order::row, Order::col}, {Order::col, Order::row}, {Order::col, Order::col}};
  for (const Layout layout : layouts)
    for (const auto& [m, n, k] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{136, 200, 74}, {138, 202, 72}})
      for (const int64_t offset : {0, 2}) {
        CaseRecord c = with(record(m, n, k, Distribution::sequential, 1.0, 0.5), 3, 0);
        c.layout = layout;
        c.lda_pad = 8;
        c.ldb_pad = 2;
        c.a_offset = offset;
        const device::CaseOutcome outcome = run(c, {{"VEC", 2}});
        EXPECT_TRUE(outcome.passed) << to_string(layout) << " " << fuzz::to_string(c) << ": "
                                    << outcome.message;
      }
}

// Split-K with 1, 2, 3, all and more than all K tiles as splits, and persistent grids of 1, 2 and 3 CTAs and
// a fraction of a wave, on a shape with tails everywhere: the same bits as the plain launch is not required
// (the summation order differs), the oracle's verdict is.
TEST_F(GpuTest, SplitKAndPersistentGridsAreRight) {
  CaseRecord c = record(257, 136, 1000, Distribution::small_int, 1.5, -1.0);  // 32 K tiles of 32
  for (const int64_t splits : {1, 2, 3, 32, 33, 40}) {
    c.splits = splits;
    for (const int64_t grid : {0, 1, 2, 3, 7}) {
      c.grid = grid;
      const device::CaseOutcome outcome = run(c, {});
      EXPECT_TRUE(outcome.passed) << fuzz::to_string(c) << ": " << outcome.message;
    }
  }
  CaseRecord normal = record(64, 8192, 8192, Distribution::normal);  // decode-like, bounded check
  normal.splits = 4;
  const device::CaseOutcome decode =
      run(normal, {{"BM", 16}, {"WM", 16}, {"WN", 32}, {"BK", 64}, {"STAGES", 4}});
  EXPECT_TRUE(decode.passed) << decode.message;
}

// tf32 (every storage order: two of them through scalar fragment loads) and fp8 (RC only), on tails, a K
// tail shorter than one mma step, split-K, a small persistent grid and packed operands.
TEST_F(GpuTest, Tf32AndFp8AreRightOnTheirLayouts) {
  struct Family {
    const KernelTemplate* t;
    std::vector<TypePair> types;
  };
  const std::vector<Family> families = {
      {&gemm_mma_tf32_template(), {{Precision::tf32, Precision::fp32}}},
      {&gemm_mma_fp8_template(),
       {{Precision::fp8e4m3, Precision::bf16},
        {Precision::fp8e5m2, Precision::fp32},
        {Precision::fp8e4m3, Precision::fp8e4m3},  // fp8 C: saturating stores, C read as fp8
        {Precision::fp8e5m2, Precision::fp8e5m2}}}};
  for (const Family& f : families)
    for (const TypePair& types : f.types)
      for (const Layout& layout : f.t->layouts) {
        const std::string name = f.t->name + " " + to_string(types.input) + " " + to_string(layout);
        const int64_t unit = 16 / size_of(types.input);  // K multiple of one 16-byte load
        // M one past a tile, or one load past it when A is stored along M
        const int64_t m = layout.a == Order::col ? 128 + unit : 129;
        CaseRecord tails = record(m, 136, 3 * unit, Distribution::sequential, 1.0, 0.5);
        tails.layout = layout;
        CaseRecord normal = record(200, 72, 40 * unit, Distribution::normal);
        normal.layout = layout;
        normal.splits = 3;
        normal.grid = 2;
        CaseRecord odd = record(97, 131, 101, Distribution::small_int);
        odd.layout = layout;
        odd.ldb_pad = 1;
        for (const auto& [what, c, overrides] :
             std::vector<std::tuple<std::string, CaseRecord, std::vector<std::pair<std::string, int64_t>>>>{
                 {"tails", tails, {}}, {"split and grid", normal, {}}, {"packed", odd, {{"PACK", 1}}}}) {
          const device::CaseOutcome outcome = run_on(*f.t, c, overrides, types, 0);
          EXPECT_TRUE(outcome.passed)
              << name << " " << what << " " << fuzz::to_string(c) << ": " << outcome.message;
        }
      }
}

// Each injected bug, on a case chosen to expose it, is caught and classified.
TEST_F(GpuTest, InjectedBugsAreCaught) {
  struct Expectation {
    const char* mutant;
    CaseRecord c;
    std::string subtype;  // empty: any incorrect subtype
    std::vector<std::pair<std::string, int64_t>> point = {};
  };
  const auto code = [](const char* name) { return mutant_code(gemm_mma_mutant_names(), name); };
  const std::vector<Expectation> expectations = {
      {"skip_last_k_tile", record(128, 128, 64), ""},
      {"drop_tail", record(129, 136, 32), "unwritten"},
      {"beta0_reads_c", record(64, 64, 32), ""},
      {"group_drop", record(1100, 264, 32), ""},  // 9 x 3 tiles: the short last group loses tiles
      {"fp16_acc", record(64, 64, 4096, Distribution::large), ""},  // partial sums pass fp16's 65504
      // two K tiles over three splits: the third split writes no partial, and the NaN workspace shows
      {"empty_split_skips", with(record(64, 64, 64), 3, 0), ""},
      // five K tiles over two splits of two: the fifth tile is lost
      {"split_drops_remainder", with(record(64, 64, 160), 2, 0), ""},
      // two CTAs walk nine tiles: every tile after a CTA's first starts from the previous tile's sums
      {"unit_keeps_acc", with(record(384, 384, 64), 0, 2), ""},
      // a 64x64 output in four splits: tf_reduce gives each quad four lanes, three of whose sums are lost
      {"reduce_first_lane_only", with(record(64, 64, 256), 4, 0), ""},
      // VEC=2 with K = 36 and lda = 40: A's rows pass the leading dimension's and the base's checks for
      // 16-byte copies, so the mutant copies each row's last chunk whole, four NaN elements of padding too
      {"chunks_ignore_extent", padded_a(record(64, 64, 36), 4), "", {{"VEC", 2}}},
  };
  for (const Expectation& e : expectations) {
    const device::CaseOutcome outcome = run(e.c, e.point, {}, code(e.mutant));
    EXPECT_FALSE(outcome.passed) << e.mutant << " survived " << fuzz::to_string(e.c);
    EXPECT_EQ(outcome.failure_class, fuzz::FailureClass::incorrect) << e.mutant << ": " << outcome.message;
    if (!e.subtype.empty()) {
      EXPECT_EQ(outcome.subtype, e.subtype) << e.mutant;
    }
  }
}

// ---- gemm_simt (fp32 on CUDA cores) ----

TEST_F(GpuTest, SimtEdgeCasesPassAtSeveralPoints) {
  const std::vector<CaseRecord> cases = {
      record(1, 4, 4),                                         // one row, one vector of K
      record(129, 136, 40),                                    // one past a tile in M, partial N and K tiles
      record(128, 128, 8),                                     // exactly one tile, one K step
      record(7, 24, 4, Distribution::ones),                    // K below BK: every output is K
      record(33, 40, 65536, Distribution::small_int),          // large K, exact
      record(200, 72, 1000, Distribution::normal, 2.0, -1.0),  // bounded mode, C read and scaled
      record(1100, 264, 24, Distribution::sequential),         // 9 tile rows: a short last GROUP_M group
      record(300, 260, 516, Distribution::denormal),           // subnormal inputs: no flush to zero
  };
  const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
      {},                                               // 128x128x8, 8x8 per thread, two CTAs per SM
      {{"BK", 16}, {"MIN_BLOCKS", 1}},                  // deeper K tile, registers uncapped
      {{"BM", 64}, {"TN", 4}, {"STAGES", 3}},           // 8 x 32 threads, a three-stage ring
      {{"BN", 64}, {"TM", 4}, {"VEC", 2}, {"BK", 16}},  // 8-byte loads
  };
  for (const auto& point : points)
    for (CaseRecord c : cases) {
      c.ldc_pad = 3;  // rows of C start at every alignment: the epilogue's single-float path
      const device::CaseOutcome outcome = run_simt(c, point);
      EXPECT_TRUE(outcome.passed) << fuzz::to_string(c) << " at point " << ::testing::PrintToString(point)
                                  << ": " << outcome.message;
    }
}

TEST_F(GpuTest, SimtElementwiseLoadsServeMisalignedOperands) {
  CaseRecord odd = record(97, 131, 1031, Distribution::small_int, 1.0, 1.0);
  odd.lda_pad = 3;
  odd.ldb_pad = 1;
  odd.a_offset = 1;  // A starts 4 bytes past an aligned address
  const device::CaseOutcome elementwise = run_simt(odd, {{"VEC", 1}});
  EXPECT_TRUE(elementwise.passed) << elementwise.message;
  const device::CaseOutcome refused = run_simt(odd, {});
  EXPECT_TRUE(refused.refused) << "VEC=4 must refuse K=1031, not compute it";
}

// Every storage order read in place, at each load width, partial tiles in M, N and K (fp32), and the 16-bit
// registration on every order at one-element loads, misaligned bases included.
TEST_F(GpuTest, SimtReadsEveryLayoutInPlace) {
  for (const char* layout : {"RR", "RC", "CR", "CC"})
    for (const int64_t vec : {1, 2, 4}) {
      SCOPED_TRACE(std::string(layout) + " VEC=" + std::to_string(vec));
      const device::CaseOutcome outcome = run_simt(with_layout(record(132, 136, 44), layout), {{"VEC", vec}});
      EXPECT_TRUE(outcome.passed) << outcome.message;
      CaseRecord beta = with_layout(record(65, 72, 20), layout);
      beta.beta = 0.5;
      const device::CaseOutcome scaled =
          run_simt(beta, {{"VEC", vec}, {"BM", 64}, {"BN", 64}, {"TM", 4}, {"TN", 4}});
      EXPECT_EQ(scaled.passed, vec == 1 || std::string(layout) == "RR" || std::string(layout) == "RC")
          << (scaled.refused ? "refused" : scaled.message);
    }
  for (const char* layout : {"RR", "RC", "CR", "CC"})
    for (const TypePair types :
         {TypePair{Precision::bf16, Precision::bf16}, TypePair{Precision::fp16, Precision::fp32}}) {
      SCOPED_TRACE(std::string(layout) + " " + to_string(types.input) + "-" + to_string(types.output));
      CaseRecord odd = with_layout(record(7, 5, 3), layout);
      odd.a_offset = odd.b_offset = odd.c_offset = 1;
      odd.beta = 1.0;
      for (const CaseRecord& c : {odd, with_layout(record(129, 70, 300), layout)}) {
        const device::CaseOutcome outcome =
            run_on(gemm_simt_16bit_template(), c, {{"VEC", 1}, {"BM", 32}, {"BN", 32}, {"TM", 4}, {"TN", 4}},
                   types, 0);
        EXPECT_TRUE(outcome.passed) << fuzz::to_string(c) << ": " << outcome.message;
      }
    }
}

TEST_F(GpuTest, SimtInjectedBugsAreCaught) {
  const auto code = [](const char* name) { return mutant_code(gemm_simt_mutant_names(), name); };
  CaseRecord k_tail =
      record(64, 64, 36);  // K = 36: the last K tile of 8 holds 4 columns of A's padding (NaN)
  k_tail.lda_pad = 4;
  const std::vector<std::tuple<const char*, CaseRecord, std::string>> expectations = {
      {"skip_last_k_tile", record(128, 128, 64), ""},
      {"drop_tail", record(129, 136, 32), "unwritten"},
      {"beta0_reads_c", record(64, 64, 32), ""},
      {"group_drop", record(1100, 264, 32), ""},  // 9 x 3 tiles: the short last group loses tiles
      {"no_k_guard", k_tail, ""},
      {"col_guard_stored", with_layout(record(100, 64, 36), "CR"), ""},  // M != K: rows past K are read
      {"col_b_step", with_layout(record(64, 64, 32), "RC"), ""},         // VEC=4 along K stored along N
  };
  for (const auto& [mutant, c, subtype] : expectations) {
    const device::CaseOutcome outcome = run_simt(c, {}, code(mutant));
    EXPECT_FALSE(outcome.passed) << mutant << " survived " << fuzz::to_string(c);
    EXPECT_EQ(outcome.failure_class, fuzz::FailureClass::incorrect) << mutant << ": " << outcome.message;
    if (!subtype.empty()) {
      EXPECT_EQ(outcome.subtype, subtype) << mutant;
    }
  }
}

// ---- gemm_wgmma (Hopper: wgmma, TMA, warp specialisation; sm_90 only) ----

// Skips the test where the GPU cannot run sm_90a code.
#define SKIP_UNLESS_SM90() \
  if (device_->arch != "sm_90") GTEST_SKIP() << "gemm_wgmma runs on sm_90 only, this GPU is " << device_->arch

TEST_F(GpuTest, WgmmaEdgeCasesPassOnEveryLayoutPointAndGrid) {
  SKIP_UNLESS_SM90();
  // Extents that are multiples of 8 (TMA's 16-byte strides in every layout), tiles partial in M, N and K.
  const std::vector<CaseRecord> cases = {
      record(8, 8, 8),                                 // one small tile: almost all of it out of bounds
      record(136, 264, 40),                            // one past a tile in M and N, K below BK
      record(128, 256, 64),                            // exactly one tile, one K tile
      record(8, 24, 16, Distribution::ones),           // every output is K
      record(40, 48, 65536, Distribution::small_int),  // large K, exact
      record(200, 72, 1000, Distribution::normal, 2.0, -1.0),  // C read and scaled: the register epilogue
      record(1096, 520, 24, Distribution::sequential),         // 9 tile rows: a short last GROUP_M group
  };
  // Grids of 1 and 3 CTAs become 2 and 4 (whole clusters) where the point clusters.
  const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
      {},  // 128 x 256, two consumers, four stages, 2x1 clusters sharing B
      {{"BN", 128}, {"STAGES", 3}, {"CLUSTER_M", 1}},  // narrower N, a three-stage ring, no cluster
      // one consumer, two K slabs per stage, 1x2 clusters sharing A
      {{"BM", 64}, {"BN", 64}, {"CONSUMERS", 1}, {"BK", 128}, {"CLUSTER_M", 1}, {"CLUSTER_N", 2}},
      {{"BM", 256}, {"BN", 128}, {"STAGES", 3}},  // two m64 blocks per consumer, 2x1 clusters
      {{"A_REGS", 1}},                            // A from registers (ldmatrix), 2x1 clusters
      {{"A_REGS", 1},
       {"BM", 256},
       {"BN", 128},
       {"STAGES", 3},
       {"CLUSTER_M", 1}},  // two m64 blocks, no cluster
  };
  const TypePair types[] = {{Precision::bf16, Precision::bf16}, {Precision::fp16, Precision::fp32}};
  for (const auto& point : points)
    for (const Layout& layout : gemm_wgmma_template().layouts)
      for (const TypePair& t : types)
        for (CaseRecord c : cases)
          for (const int64_t grid : {0, 1, 3}) {
            c.layout = layout;
            c.grid = grid;
            c.ldc_pad = grid == 1 ? 3 : 0;  // an odd ldc: no TMA store, the register epilogue
            const device::CaseOutcome outcome = run_on(gemm_wgmma_template(), c, point, t, 0);
            const bool a_regs = std::find(point.begin(), point.end(),
                                          std::pair<std::string, int64_t>{"A_REGS", 1}) != point.end();
            if (a_regs && layout.a == Order::col) {  // A from registers: row-major A only
              EXPECT_TRUE(outcome.refused) << fuzz::to_string(c) << ": " << outcome.message;
              continue;
            }
            EXPECT_TRUE(outcome.passed)
                << ::testing::PrintToString(point) << " " << to_string(t.input) << "->" << to_string(t.output)
                << " " << fuzz::to_string(c) << ": " << outcome.message;
          }
}

TEST_F(GpuTest, WgmmaFp8AndRefusals) {
  SKIP_UNLESS_SM90();
  for (CaseRecord c : {record(136, 264, 128), record(200, 72, 1024, Distribution::normal, 1.0, 0.5)}) {
    c.layout = {Order::row, Order::col};
    // 2x1 clusters or none, A from shared memory or registers, and BN = 64, whose fp8 C tiles are half a
    // 128-byte slab (stored from registers, not through TMA).
    const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
        {{"CLUSTER_M", 1}},
        {{"CLUSTER_M", 2}},
        {{"A_REGS", 1}},
        {{"A_REGS", 1}, {"CLUSTER_M", 1}},
        {{"BN", 64}}};
    for (const TypePair t : gemm_wgmma_fp8_template().supported_types)
      for (const auto& point : points) {
        const device::CaseOutcome outcome = run_on(gemm_wgmma_fp8_template(), c, point, t, 0);
        EXPECT_TRUE(outcome.passed) << to_string(t.input) << "->" << to_string(t.output) << " "
                                    << ::testing::PrintToString(point) << " " << fuzz::to_string(c) << ": "
                                    << outcome.message;
      }
  }
  // TMA cannot read rows that are not 16-byte aligned: refused, so another template serves the problem.
  CaseRecord odd = record(97, 131, 1031);
  const device::CaseOutcome refused = run_on(gemm_wgmma_template(), odd, {}, {}, 0);
  EXPECT_TRUE(refused.refused) << "K = 1031 (2062-byte rows) must be refused: " << refused.message;
}

// Split-K, packing and the K-major-only instructions (fp8, tf32) with their transposing pack: every K split
// count including empty splits, persistent grids, odd K and misaligned operands, every layout. Of a point's
// PACK=0 and PACK=1 twins one at least accepts each problem (PACK=0 what TMA reads in place, PACK=1 the
// rest; for tf32, whose PACK=0 kernels rewrite M/N-major tiles in shared memory, both take an aligned problem
// stored other than RC), the other only where tf32 allows both, and each that accepts computes it.
TEST_F(GpuTest, WgmmaSplitKPackingAndTransposedOperands) {
  SKIP_UNLESS_SM90();
  CaseRecord misaligned = record(136, 200, 1031, Distribution::normal, 1.0, 0.5);  // odd K
  misaligned.b_offset = 2;                                                          // and B off 16 bytes
  const std::vector<CaseRecord> cases = {
      with(record(64, 64, 4096), 4, 0),          // tiny output, K split four ways
      with(record(200, 72, 1000), 3, 1),         // splits of unequal length on a one-CTA grid
      with(record(8, 24, 64), 5, 3),             // more splits than K tiles: empty splits store zeros
      with(record(136, 264, 520, Distribution::normal, 2.0, -1.0), 2, 0),  // C read by the second pass
      misaligned,
      with(misaligned, 4, 0),
  };
  using Overrides = std::vector<std::pair<std::string, int64_t>>;
  const auto check = [&](const KernelTemplate& t, const TypePair& types, Overrides point) {
    point.push_back({"PACK", 0});
    Overrides packed = point;
    packed.back().second = 1;
    for (const Layout& layout : t.layouts)
      for (CaseRecord c : cases) {
        c.layout = layout;
        const device::CaseOutcome in_place = run_on(t, c, point, types, 0);
        const device::CaseOutcome copied = run_on(t, c, packed, types, 0);
        const std::string what = t.name + " " + ::testing::PrintToString(point) + " " + fuzz::to_string(c);
        const bool both = t.name == "gemm_wgmma_tf32" && layout != Layout{Order::row, Order::col};
        if (both) {
          EXPECT_FALSE(in_place.refused && copied.refused) << what << ": " << in_place.message;
        } else {
          EXPECT_NE(in_place.refused, copied.refused)
              << what << ": " << in_place.message << " / " << copied.message;
        }
        if (!in_place.refused) {
          EXPECT_TRUE(in_place.passed) << what << ": " << in_place.message;
        }
        if (!copied.refused) {
          EXPECT_TRUE(copied.passed) << what << " PACK=1: " << copied.message;
        }
      }
  };
  check(gemm_wgmma_template(), {Precision::bf16, Precision::bf16}, {{"CLUSTER_M", 1}, {"SPLIT_K", 2}});
  check(gemm_wgmma_template(), {Precision::fp16, Precision::fp32},
        {{"BM", 64}, {"BN", 128}, {"CONSUMERS", 1}, {"CLUSTER_M", 1}});
  check(gemm_wgmma_template(), {Precision::bf16, Precision::bf16}, {{"CLUSTER_M", 2}});
  check(gemm_wgmma_tf32_template(), {Precision::tf32, Precision::fp32}, {{"CLUSTER_M", 1}});
  check(gemm_wgmma_fp8_template(), {Precision::fp8e4m3, Precision::bf16}, {{"CLUSTER_M", 1}});
}

// tf32 wgmma reads K-major tiles alone, and the consumers rewrite column-major A and row-major B K-major in
// shared memory: in rounds of 32-row blocks (BK = 32: 128x256 with two consumers, 256x128 with two m64 blocks
// each) or a whole tile at once (BK = 64, one consumer), with and without clusters, on tails in M, N and K,
// large K, persistent grids, C read and scaled, and K splits, in every storage order.
TEST_F(GpuTest, WgmmaTf32RewritesEveryStorageOrderKMajor) {
  SKIP_UNLESS_SM90();
  const std::vector<CaseRecord> cases = {
      record(8, 8, 8),                                          // one tile, almost all of it out of bounds
      record(136, 264, 40, Distribution::sequential),           // one past a tile in M and N, K below BK
      record(40, 48, 16384, Distribution::small_int),           // large K, exact
      record(200, 72, 1000, Distribution::normal, 2.0, -1.0),   // C read and scaled
      with(record(264, 520, 200, Distribution::normal), 3, 0),  // K split three ways
      with(record(1096, 520, 96, Distribution::sequential), 0, 3),  // three CTAs walk 45 tiles
  };
  const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
      {},  // 128 x 256, BK 32, two consumers, four stages, 2x1 clusters sharing B
      {{"BM", 256}, {"BN", 128}, {"STAGES", 3}, {"CLUSTER_M", 1}},
      {{"BM", 64}, {"BN", 64}, {"CONSUMERS", 1}, {"BK", 64}, {"CLUSTER_M", 1}, {"CLUSTER_N", 2}},
  };
  const TypePair tf32{Precision::tf32, Precision::fp32};
  for (const auto& point : points)
    for (const Layout& layout : gemm_wgmma_tf32_template().layouts)
      for (CaseRecord c : cases) {
        c.layout = layout;
        const device::CaseOutcome outcome = run_on(gemm_wgmma_tf32_template(), c, point, tf32, 0);
        EXPECT_TRUE(outcome.passed) << ::testing::PrintToString(point) << " " << fuzz::to_string(c) << ": "
                                    << outcome.message;
      }
  // Without the barrier between a round's reads and writes, or between the last writes and the wgmma, a
  // consumer overwrites what another has yet to read, or a wgmma reads what another has yet to write: on the
  // schedule-perturbed image (warps sleep before their writes) the 16 K tiles of each of these tiles lose.
  const auto code = [](const char* name) { return mutant_code(gemm_wgmma_mutant_names(), name); };
  for (const char* mutant : {"transpose_early_write", "transpose_unsynced"})
    for (const char* layout : {"RR", "CC"}) {
      const CaseRecord c = with_layout(record(512, 512, 512, Distribution::normal), layout);
      const device::CaseOutcome outcome =
          run_on(gemm_wgmma_tf32_template(), c, {{"CLUSTER_M", 1}}, tf32, code(mutant), 20261129);
      EXPECT_FALSE(outcome.passed) << mutant << " survived " << fuzz::to_string(c);
    }
}

// The injected bugs that give wrong results (the others hang, which only a worker's watchdog survives:
// `fuzz mutants` covers those), each on a case chosen to expose it.
TEST_F(GpuTest, WgmmaInjectedBugsThatComputeWrongResultsAreCaught) {
  SKIP_UNLESS_SM90();
  const auto code = [](const char* name) { return mutant_code(gemm_wgmma_mutant_names(), name); };
  const std::vector<std::pair<const char*, CaseRecord>> expectations = {
      {"beta0_reads_c", record(64, 64, 64)},
      {"no_acc_init", with(record(384, 512, 64), 0, 1)},  // one CTA walks six tiles: sums carry over
      {"store_not_drained", record(256, 256, 64)},        // four slabs rewritten while TMA reads them
  };
  for (const auto& [mutant, c] : expectations) {
    const device::CaseOutcome outcome = run_on(gemm_wgmma_template(), c, {}, {}, code(mutant));
    EXPECT_FALSE(outcome.passed) << mutant << " survived " << fuzz::to_string(c);
  }
}

// The transposed form (SWAP_AB = 1): Cᵀ = Bᵀ·Aᵀ with the problem's M as the wgmma's N and C stored
// transposed, on every M up to the point's BN that a fragment edge (8 columns) makes interesting, in every
// storage order (a BN off whole 64-column slabs reads its B, the problem's Aᵀ, K-major only: column-major A
// is refused there), with tails in N and K, padded leading dimensions (so C's column step is ldc, not M), C
// read and scaled, K splits (the reduce stores transposed too), empty splits, and persistent grids of 1
// and 3.
TEST_F(GpuTest, WgmmaSwappedIsRightForEveryMLayoutSplitAndGrid) {
  SKIP_UNLESS_SM90();
  const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
      {{"SWAP_AB", 1}, {"BM", 64}, {"BN", 8}, {"CONSUMERS", 1}, {"STAGES", 8}, {"CLUSTER_M", 1}},
      {{"SWAP_AB", 1}, {"BM", 128}, {"BN", 24}, {"CONSUMERS", 1}, {"STAGES", 6}, {"CLUSTER_M", 1}},
      {{"SWAP_AB", 1}, {"BM", 64}, {"BN", 80}, {"CONSUMERS", 1}, {"BK", 128}, {"CLUSTER_M", 1}},
      {{"SWAP_AB", 1},
       {"BM", 128},
       {"BN", 128},
       {"CONSUMERS", 2},
       {"CLUSTER_M", 2}},  // slabs whole: every order
  };
  const std::vector<int64_t> ms = {1, 2, 3, 7, 8, 9, 17, 23, 24, 63, 64, 77, 100, 127, 128};
  int ran = 0;
  for (const auto& point : points) {
    const Candidate candidate = candidate_at(gemm_wgmma_template(), point, {}, 0);
    const int64_t bn = candidate.point["BN"];
    for (const Layout& layout : gemm_wgmma_template().layouts)
      for (size_t i = 0; i < ms.size() && ms[i] <= bn; ++i) {
        const int64_t m = ms[i];
        CaseRecord c =
            record(m, 200 + 8 * static_cast<int64_t>(i), 1000,
                   m % 2 ? Distribution::small_int : Distribution::sequential, 1.5, m % 3 ? 0.0 : -1.0);
        c.layout = layout;
        // A column-major A is the transposed form's B, its rows M long: padded to 16 bytes, as TMA needs (a
        // stride off 16 bytes is refused and served by the PACK=1 twin; the refusal is tested elsewhere).
        c.lda_pad = layout.a == Order::col ? 8 + (8 - m % 8) % 8 : 8;
        c.ldb_pad = 8;
        c.ldc_pad = i % 2 ? 5 : 0;
        const int64_t k_tiles = (1000 + candidate.point["BK"] - 1) / candidate.point["BK"];
        const int64_t splits[] = {0, 2, 3, k_tiles + 1};
        const int64_t grids[] = {0, 1, 3};
        c.splits = splits[i % 4];
        c.grid = grids[i % 3];
        const device::CaseOutcome outcome = run_on(gemm_wgmma_template(), c, point, {}, 0);
        const std::string what = ::testing::PrintToString(point) + " " + fuzz::to_string(c);
        if (bn % 64 != 0 && layout.a == Order::col) {
          EXPECT_TRUE(outcome.refused) << what << ": BN off whole slabs reads Aᵀ K-major only";
          continue;
        }
        EXPECT_TRUE(outcome.passed) << what << ": " << outcome.message;
        ++ran;
      }
  }
  EXPECT_GT(ran, 40);
}

// The transposed store's injected bugs, each on a case chosen to expose it: C's columns stepped by M instead
// of ldc (a padded C), and a pair's second element stored past C's last column (an odd M, so a pair's second
// column lies outside).
TEST_F(GpuTest, WgmmaSwappedStoreBugsAreCaught) {
  SKIP_UNLESS_SM90();
  const auto code = [](const char* name) { return mutant_code(gemm_wgmma_mutant_names(), name); };
  const std::vector<std::pair<std::string, int64_t>> point = {
      {"SWAP_AB", 1}, {"BM", 64}, {"BN", 24}, {"CONSUMERS", 1}, {"CLUSTER_M", 1}};
  CaseRecord padded = record(24, 520, 256);
  padded.ldc_pad = 8;
  CaseRecord odd = record(23, 520, 256);
  for (const auto& [mutant, c] :
       {std::pair{"swap_steps_by_rows", padded}, std::pair{"swap_last_column", odd}}) {
    EXPECT_TRUE(run_on(gemm_wgmma_template(), c, point, {}, 0).passed) << "unmutated, " << fuzz::to_string(c);
    const device::CaseOutcome outcome = run_on(gemm_wgmma_template(), c, point, {}, code(mutant));
    EXPECT_FALSE(outcome.passed) << mutant << " survived " << fuzz::to_string(c);
  }
}

// ---- gemm_skinny (decode: M <= 128, split-K finished in the same launch) ----

// Points of gemm_skinny: one n8 fragment of rows per warp, two, and the widest tile (four warps of 32 x 64).
const std::vector<std::vector<std::pair<std::string, int64_t>>>& skinny_points() {
  static const std::vector<std::vector<std::pair<std::string, int64_t>>> points = {
      {{"BM", 8}, {"WM", 8}},
      {},  // BM = WM = 16, BN = 64 over four warps of 16 columns, BK = 128, four stages
      {{"BM", 128}, {"WM", 64}, {"BN", 64}, {"WN", 32}, {"BK", 64}, {"STAGES", 3}},
  };
  return points;
}

// Every M from 1 to 128 that a tile edge or a fragment edge makes interesting, on every storage order, with
// tails in N and K, padded leading dimensions, C read and scaled, and K split 1, 2, 3, all K tiles, one more
// and far more ways than there are K tiles (empty splits). Column-major A is stored along M, so there M must
// be a multiple of VEC: those points run at VEC = 2 and odd M is refused.
TEST_F(GpuTest, SkinnyIsRightForEveryMLayoutAndSplit) {
  const std::vector<int64_t> ms = {1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 48, 63, 64, 65, 96, 100, 127, 128};
  for (const auto& base : skinny_points())
    for (const Layout& layout : gemm_skinny_template().layouts)
      for (size_t i = 0; i < ms.size(); ++i) {
        const int64_t m = ms[i];
        auto point = base;
        if (layout.a == Order::col) point.emplace_back("VEC", 2);
        // K = 1000: ceil(1000 / BK) K tiles, the last one partial
        const int64_t k_tiles = (1000 + candidate_at(gemm_skinny_template(), point, {}, 0).point["BK"] - 1) /
                                candidate_at(gemm_skinny_template(), point, {}, 0).point["BK"];
        const int64_t split_counts[] = {1, 2, 3, k_tiles, k_tiles + 1, 40};
        for (const int64_t splits : {split_counts[i % 6], split_counts[(i + 3) % 6]}) {
          CaseRecord c = record(m, 200, 1000, m % 2 ? Distribution::small_int : Distribution::sequential, 1.5,
                                m % 3 ? 0.0 : -1.0);
          c.layout = layout;
          c.splits = splits;
          c.lda_pad = layout.a == Order::col ? 2 : 8;
          c.ldb_pad = 8;
          c.ldc_pad = 3;
          const device::CaseOutcome outcome = run_on(gemm_skinny_template(), c, point, {}, 0);
          const std::string what = ::testing::PrintToString(point) + " " + fuzz::to_string(c);
          if (layout.a == Order::col && m % 2) {
            EXPECT_TRUE(outcome.refused) << what << ": column-major A with odd M must be refused at VEC=2";
            continue;
          }
          EXPECT_TRUE(outcome.passed) << what << ": " << outcome.message;
        }
      }
}

// Every element type pair, on a decode-like shape in the layout decode uses (x·Wᵀ: B column-major) and an odd
// N, which only column-major B takes (its stored rows run along K).
TEST_F(GpuTest, SkinnyIsRightOnEveryTypePairAndOddN) {
  for (const TypePair types : gemm_skinny_template().supported_types)
    for (const int64_t splits : {1, 4}) {
      CaseRecord c = record(5, 131, 4104, Distribution::normal, 1.0, 0.5);
      c.layout = {Order::row, Order::col};
      c.splits = splits;
      const device::CaseOutcome outcome = run_on(gemm_skinny_template(), c, {}, types, 0);
      EXPECT_TRUE(outcome.passed) << to_string(types.input) << "->" << to_string(types.output) << " "
                                  << fuzz::to_string(c) << ": " << outcome.message;
    }
  // Odd K is a stored row length of row-major A in every layout here: no VEC takes it.
  CaseRecord odd_k = record(4, 64, 1031);
  for (const int64_t vec : {2, 4, 8}) {
    const device::CaseOutcome outcome = run_on(gemm_skinny_template(), odd_k, {{"VEC", vec}}, {}, 0);
    EXPECT_TRUE(outcome.refused) << "VEC=" << vec << " must refuse K = 1031";
  }
  // Large: the decode shape itself, checked by projections.
  CaseRecord decode = record(16, 8192, 8192, Distribution::normal);
  decode.splits = 3;
  const device::CaseOutcome outcome = run_on(gemm_skinny_template(), decode, {}, {}, 0);
  EXPECT_TRUE(outcome.passed) << fuzz::to_string(decode) << ": " << outcome.message;
}

// The split-K counters are left at zero by every launch: one runner, launched again and again on cases whose
// tile counts differ (so the counter buffer is reused, then grown), stays right every time. Each case runs
// twice inside run (the determinism check), and the workspace is refilled with NaN before every launch.
TEST_F(GpuTest, SkinnySplitCountersResetAfterEveryLaunch) {
  const Candidate candidate = candidate_at(gemm_skinny_template(), {}, {}, 0);
  const auto runner = device::load_candidate(candidate, image_of(candidate));
  device::CaseExecutor executor(candidate, *runner, stream_->get());
  const std::vector<std::pair<CaseRecord, int64_t>> cases = {
      {record(16, 200, 1000), 3}, {record(16, 200, 1000), 3}, {record(1, 64, 128), 2},
      {record(9, 2000, 520), 5},  {record(16, 200, 1000), 8}, {record(16, 200, 1000), 1},
      {record(33, 136, 256), 4},  {record(9, 2000, 520), 5}};
  for (int repeat = 0; repeat < 3; ++repeat)
    for (auto [c, splits] : cases) {
      c.splits = splits;
      const device::CaseOutcome outcome = executor.run(c);
      ASSERT_TRUE(outcome.passed) << "repeat " << repeat << " " << fuzz::to_string(c) << ": " << outcome.message;
    }
}

}  // namespace
}  // namespace tunefuzz

namespace tunefuzz {
namespace {

// Quick return: a zero size is a valid GEMM on every template, element type pair and layout it computes.
// M or N = 0 touches nothing (C's padding and the canaries stay), K = 0 makes C = beta·C (zeros without
// reading the NaN C when beta == 0), whatever the alignment of operands no one reads, and whatever split
// count or grid the case asks for.
TEST_F(GpuTest, ZeroSizesAreQuickReturnsOnEveryTemplate) {
  std::vector<CaseRecord> cases;
  for (const auto& [m, n, k] : {std::tuple{0, 40, 24}, {40, 0, 24}, {40, 24, 0}, {0, 0, 0}, {300, 264, 0}})
    for (const double beta : {0.0, -0.5}) {
      CaseRecord c = record(m, n, k, Distribution::small_int, 2.0, beta);
      c.ldc_pad = 3;
      c.c_offset = 1;
      c.lda_pad = 1;  // rows no vector load or TMA map could take: nothing may read them
      c.b_offset = 1;
      cases.push_back(c);
    }
  for (const KernelTemplate* t : all_templates()) {
    if (!t->archs.empty() && std::find(t->archs.begin(), t->archs.end(), device_->arch) == t->archs.end())
      continue;
    if (t == &gemm_mma_fp8_template() && std::stoi(device_->arch.substr(3)) < 89)
      continue;  // fp8 mma: sm_89+
    for (const TypePair& types : t->supported_types)
      for (const Layout& layout : t->layouts)
        for (CaseRecord c : cases) {
          c.layout = layout;
          if (t->parameter("SPLIT_K")) c = with(c, c.k == 0 ? 3 : 0, c.m == 0 ? 1 : 0);
          device::CaseOutcome outcome = run_on(*t, c, {}, types, 0);
          // fp8 wgmma computes layout RC in place and the others through its PACK=1 twin, which
          // must then serve the zero-size problem (one of the twins at least accepts any problem).
          if (outcome.refused && t->parameter("PACK")) outcome = run_on(*t, c, {{"PACK", 1}}, types, 0);
          EXPECT_TRUE(outcome.passed)
              << t->name << " " << to_string(types.input) << "->" << to_string(types.output) << " "
              << fuzz::to_string(c) << ": " << outcome.message;
        }
  }
}

}  // namespace
}  // namespace tunefuzz
