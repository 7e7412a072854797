// GPU laws (run through tests/gpu_guard.sh; skipped with the reason where there is no GPU):
//  - the default gemm_mma candidates are right on the edge cases each bug class lives in;
//  - the injected bugs that a single chosen case must expose are caught, with the expected class.
// The fuzz campaign (`fuzz mutants`) covers the rest with generated cases; this is the fixed floor.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "tuner/backend/nvrtc_compiler.hpp"
#include "tuner/device/case_executor.hpp"
#include "tuner/device/cuda.hpp"
#include "tuner/templates/gemm_mma.hpp"

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
    source_ =
        std::make_unique<KernelSource>(KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_mma.cu"));
  }
  static void TearDownTestSuite() {
    stream_.reset();
    context_.reset();
  }

  // Compiles and runs one case on a candidate: the default point with some parameters overridden.
  static device::CaseOutcome run(const CaseRecord& record,
                                 std::vector<std::pair<std::string, int64_t>> overrides, TypePair types = {},
                                 int mutant = 0) {
    const KernelTemplate& t = gemm_mma_template();
    auto values = t.default_point().values();
    for (auto& [name, value] : values)
      for (const auto& [override_name, override_value] : overrides)
        if (name == override_name) value = override_value;
    const Candidate candidate{&t, Point(values), types, mutant};
    const NvrtcCompiler compiler;
    const CompileRequest request{source_.get(), t.defines(candidate.point, types, mutant), device_->arch};
    std::string& image = images_[compiler.key(request)];  // compile each distinct image once per suite
    if (image.empty()) image = compiler.compile(request).image;
    const auto runner = device::load_candidate(candidate, image);
    device::CaseExecutor executor(candidate, *runner, stream_->get());
    return executor.run(record);
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

  static inline std::unique_ptr<DeviceInfo> device_;
  static inline std::unique_ptr<device::Context> context_;
  static inline std::unique_ptr<device::Stream> stream_;
  static inline std::unique_ptr<KernelSource> source_;
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

// Each injected bug, on a case chosen to expose it, is caught and classified.
TEST_F(GpuTest, InjectedBugsAreCaught) {
  struct Expectation {
    const char* mutant;
    CaseRecord c;
    std::string subtype;  // empty: any incorrect subtype
  };
  const auto code = [](const char* name) {
    const auto& names = gemm_mma_mutant_names();
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const std::vector<Expectation> expectations = {
      {"skip_last_k_tile", record(128, 128, 64), ""},
      {"drop_tail", record(129, 136, 32), "unwritten"},
      {"beta0_reads_c", record(64, 64, 32), ""},
      {"group_drop", record(1100, 264, 32), ""},  // 9 x 3 tiles: the short last group loses tiles
      {"fp16_acc", record(64, 64, 4096, Distribution::large), ""},  // partial sums pass fp16's 65504
  };
  for (const Expectation& e : expectations) {
    const device::CaseOutcome outcome = run(e.c, {}, {}, code(e.mutant));
    EXPECT_FALSE(outcome.passed) << e.mutant << " survived " << fuzz::to_string(e.c);
    EXPECT_EQ(outcome.failure_class, fuzz::FailureClass::incorrect) << e.mutant << ": " << outcome.message;
    if (!e.subtype.empty()) {
      EXPECT_EQ(outcome.subtype, e.subtype) << e.mutant;
    }
  }
}

}  // namespace
}  // namespace tunefuzz
