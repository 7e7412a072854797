// LAYOUTS, the storage orders an image has a kernel for (runtime/templates/gemm_rules.hpp). A campaign
// compiles each candidate for the orders its element types' problems use; the refusal, the compiled image,
// the compile stage's judgement and the fuzz domain agree on them.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "runtime/backend/kernel_cache.hpp"
#include "runtime/backend/nvrtc_compiler.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "tests/support/shipped_gpu.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/config/config.hpp"
#include "tuner/device/fuzzing.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

constexpr Layout kRR{Order::row, Order::row}, kRC{Order::row, Order::col}, kCR{Order::col, Order::row},
    kCC{Order::col, Order::col};

/// A config for the H200 (the shipped config's gpu block) with these problems and template searches.
Config config_with(const std::string& problems, const std::string& templates) {
  return test::h200_config_with(problems, templates, "layouts");
}

const std::string kProblems =
    "  - {name: rr, m: 256, n: 256, k: 256, precision: bf16}\n"
    "  - {name: cc, m: 256, n: 256, k: 256, precision: bf16, layout: CC}\n"
    "  - {name: half, m: 256, n: 256, k: 256, precision: fp16}\n"
    "  - {name: single, m: 256, n: 256, k: 256, precision: fp32}\n";

TEST(Layouts, ACandidateExportsTheOrdersItsElementTypesProblemsUse) {
  const Config config = config_with(kProblems,
                                    "  - {name: gemm_wgmma, space: {BM: [128], BN: [128], A_REGS: [0, 1]}}\n"
                                    "  - {name: gemm_mma, space: {BM: [128], BN: [128]}}\n"
                                    "  - {name: gemm_skinny, space: {}}\n"
                                    "  - {name: gemm_simt, space: {}}\n"
                                    "  - {name: gemm_mma, space: {BM: [64], LAYOUTS: [15]}}\n");
  const std::vector<Candidate> candidates = space_stage(config).candidates;
  int narrowed = 0, listed = 0;
  for (const Candidate& c : candidates) {
    SCOPED_TRACE(c.id());
    ASSERT_TRUE(c.kernel_template->parameter(kLayoutsParameter)) << "every template has a kernel per order";
    if (c.point["BM"] == 64 &&
        c.kernel_template->name ==
            "gemm_mma") {  // the config lists LAYOUTS for this space: the campaign keeps it
      EXPECT_EQ(c.point[kLayoutsParameter], kAllLayouts);
      ++listed;
      continue;
    }
    const int64_t expected =
        c.types.input == Precision::bf16 ? layout_bit(kRR) | layout_bit(kCC) : layout_bit(kRR);
    EXPECT_EQ(c.point[kLayoutsParameter], expected);
    EXPECT_NE(c.id().find("LAYOUTS=" + std::to_string(expected)), std::string::npos);
    ++narrowed;
  }
  // gemm_wgmma: 2 points x (bf16, fp16); gemm_mma: 1 x 2; gemm_simt: 1 x fp32. gemm_skinny takes M up to 128,
  // none of these 256-row problems: it is no candidate.
  EXPECT_EQ(narrowed, 7);
  EXPECT_TRUE(std::none_of(candidates.begin(), candidates.end(),
                           [](const Candidate& c) { return c.kernel_template->name == "gemm_skinny"; }));
  EXPECT_EQ(listed, 2);
}

TEST(Layouts, APointThatComputesNoneOfTheOrdersAskedForIsNoCandidate) {
  struct Case {
    std::string problem, search, parameter;
    int64_t kept_value, mask;
  };
  const std::vector<Case> cases = {
      // A_REGS=1 reads row-major A: with column-major A alone asked for, only the A_REGS=0 point serves.
      {"{name: cc, m: 256, n: 256, k: 256, precision: bf16, layout: CC}",
       "{name: gemm_wgmma, space: {BM: [128], BN: [128], A_REGS: [0, 1]}}", "A_REGS", 0, layout_bit(kCC)},
      // fp8 on wgmma reads K-major tiles: without PACK it computes RC alone, so with RR asked for only the
      // PACK=1 point (which transposes B first) serves.
      {"{name: rr, m: 256, n: 256, k: 256, precision: fp8e4m3}",
       "{name: gemm_wgmma_fp8, space: {BM: [128], BN: [128], PACK: [0, 1]}}", "PACK", 1, layout_bit(kRR)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.search);
    const std::vector<Candidate> candidates =
        space_stage(config_with("  - " + c.problem + "\n", "  - " + c.search + "\n")).candidates;
    ASSERT_EQ(candidates.size(), 1u);
    EXPECT_EQ(candidates[0].point[c.parameter], c.kept_value);
    EXPECT_EQ(candidates[0].point[kLayoutsParameter], c.mask);
  }
}

// A point that accepts none of the config's problems of its element types could never be timed: it is no
// candidate, whether the campaign narrows its LAYOUTS or the config lists them. Here: a packing point where
// every problem is aligned, and a transposed point (one tile across M) where every M is above its BN.
TEST(Layouts, APointThatServesNoneOfTheProblemsIsNoCandidate) {
  const std::string problems =
      "  - {name: rr, m: 256, n: 256, k: 256, precision: bf16}\n"
      "  - {name: odd, m: 257, n: 129, k: 1031, precision: fp16}\n";
  const std::vector<Candidate> candidates =
      space_stage(
          config_with(problems,
                      "  - {name: gemm_mma, space: {BM: [128], BN: [128], PACK: [0, 1]}}\n"
                      "  - {name: gemm_mma, space: {BM: [64], PACK: [0, 1], LAYOUTS: [15]}}\n"
                      "  - {name: gemm_wgmma, space: {BN: [64, 256], CLUSTER_M: [1], SWAP_AB: [1]}}\n"))
          .candidates;
  std::set<std::string> kept;
  for (const Candidate& c : candidates) {
    kept.insert(c.kernel_template->name + (c.point["PACK"] ? " packs " : " in place ") +
                to_string(c.types.input));
    if (c.kernel_template->name == "gemm_wgmma") {
      EXPECT_EQ(c.point["BN"], 256) << c.id();
    }
  }
  // bf16: aligned, so no packing point; fp16: K = 1031 (odd rows of A), so no point that reads in place.
  EXPECT_EQ(kept, (std::set<std::string>{"gemm_mma in place bf16", "gemm_mma packs fp16",
                                         "gemm_wgmma in place bf16"}));
}

TEST(Layouts, TheRefusalNamesTheOrderThePointLeavesOut) {
  const KernelTemplate& t = gemm_mma_template();
  std::vector<std::pair<std::string, int64_t>> values = t.default_point().values();
  for (auto& [name, value] : values)
    if (name == kLayoutsParameter) value = layout_bit(kRR) | layout_bit(kCC);
  const Point point(values);
  for (const Layout& layout : all_layouts()) {
    SCOPED_TRACE(to_string(layout));
    GemmShape s;
    s.m = s.n = s.k = 256;
    s.lda = s.ldb = s.ldc = 256;
    s.layout = layout;
    const auto why = t.refusal(point, s);
    if (layout == kRR || layout == kCC) {
      EXPECT_FALSE(why) << *why;
    } else {
      ASSERT_TRUE(why);
      EXPECT_EQ(*why, "LAYOUTS=9 compiles layouts RR, CC only, not " + to_string(layout) +
                          "; the same point with " + to_string(layout) + " in LAYOUTS serves it");
    }
  }
  EXPECT_EQ(layout_names(kAllLayouts), "RR, RC, CR, CC");
  EXPECT_EQ(layout_bit(kRR) | layout_bit(kRC) | layout_bit(kCR) | layout_bit(kCC), kAllLayouts);
}

// A kernel cache of its own, removed at the end.
class LayoutsImage : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tunefuzz-layouts-XXXXXX";
    directory_ = ::mkdtemp(pattern);
    cache_ = KernelCache(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  /// The candidates through the compile stage, into this test's cache.
  std::vector<CompiledCandidate> compile(const std::vector<Candidate>& candidates,
                                         const Config& config) const {
    return compile_stage(candidates, config, compiler_, cache_, {TUNEFUZZ_SOURCE_DIR "/templates", 1, 0});
  }
  /// The image the cache holds for a candidate of the template in `source_file`.
  std::optional<CompiledKernel> image(const Candidate& c, const std::string& source_file) const {
    const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", source_file);
    return cache_.load(compiler_.key({&source, c.kernel_template->defines(c.point, c.types), "sm_90"}));
  }

  fs::path directory_;
  const NvrtcCompiler compiler_;
  KernelCache cache_{"/nonexistent"};
};

// The compile stage judges the kernel a point launches: gemm_simt's split points run tf_gemm_split_*, so its
// registers and spills are theirs; the plain points' are tf_gemm_*'s (of the one order here, RR).
TEST_F(LayoutsImage, TheCompileStageJudgesTheKernelAPointLaunches) {
  const Config config =
      config_with("  - {name: f, m: 8, n: 5000, k: 3000, precision: fp32}\n",
                  "  - {name: gemm_simt, space: {BM: [64], BN: [128], BK: [16], SPLIT_K: [1, 4]}}\n");
  const std::vector<Candidate> candidates = space_stage(config).candidates;
  ASSERT_EQ(candidates.size(), 2u);
  const std::vector<CompiledCandidate> compiled = compile(candidates, config);
  ASSERT_EQ(compiled.size(), 2u);
  for (const CompiledCandidate& c : compiled) {
    SCOPED_TRACE(c.candidate.id());
    ASSERT_EQ(c.status, CompileStatus::compiled) << c.message;
    const std::optional<CompiledKernel> kernel = image(c.candidate, "gemm_simt.cu");
    ASSERT_TRUE(kernel);  // one image for both: SPLIT_K is the launcher's
    EXPECT_EQ(c.candidate.point[kLayoutsParameter], layout_bit(kRR));
    const std::string entry = c.candidate.point["SPLIT_K"] > 1 ? "tf_gemm_split_rr" : "tf_gemm_rr";
    ASSERT_EQ(kernel->resources.count(entry), 1u);
    EXPECT_EQ(c.resources.registers, kernel->resources.at(entry).registers);
    EXPECT_EQ(c.resources.spill_store_bytes, kernel->resources.at(entry).spill_store_bytes);
  }
  // The two kernels differ, so the judged figures do not coincide by accident.
  EXPECT_NE(compiled[0].resources.registers, compiled[1].resources.registers);
}

TEST_F(LayoutsImage, HasAKernelForEachOrderOfItsMaskAloneAndTheFuzzerDrawsThoseOrders) {
  const Config config = config_with(
      "  - {name: rr, m: 256, n: 256, k: 256, precision: bf16}\n"
      "  - {name: cc, m: 256, n: 256, k: 256, precision: bf16, layout: CC}\n",
      "  - {name: gemm_mma, space: {}}\n");
  const std::vector<Candidate> candidates = space_stage(config).candidates;
  ASSERT_EQ(candidates.size(), 1u);
  const std::vector<CompiledCandidate> compiled = compile(candidates, config);
  ASSERT_EQ(compiled.size(), 1u);
  // The template lists tf_gemm_rc first, which this image lacks: the first GEMM kernel it has, tf_gemm_rr,
  // judges it.
  ASSERT_EQ(compiled[0].status, CompileStatus::compiled)
      << to_string(compiled[0].status) << ": " << compiled[0].message;
  const std::optional<CompiledKernel> kernel = image(candidates[0], "gemm_mma.cu");
  ASSERT_TRUE(kernel);
  for (const char* entry : {"tf_gemm_rr", "tf_gemm_cc"})
    EXPECT_EQ(kernel->resources.count(entry), 1u) << entry;
  for (const char* entry : {"tf_gemm_rc", "tf_gemm_cr"})
    EXPECT_EQ(kernel->resources.count(entry), 0u) << entry;
  ASSERT_EQ(kernel->resources.count("tf_gemm_rr"), 1u);
  EXPECT_EQ(compiled[0].resources.registers, kernel->resources.at("tf_gemm_rr").registers);
  // The fuzzer draws the orders the image has, and no other.
  const fuzz::CaseSpace space = case_space_for(candidates[0], 132);
  EXPECT_EQ(space.layouts, (std::vector<Layout>{kRR, kCC}));
}

}  // namespace
}  // namespace tunefuzz
