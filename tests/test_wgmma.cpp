// Compile-time laws of templates/gemm_wgmma.cu (the Hopper template), none of which need a GPU:
//  - every gemm_wgmma candidate the shipped H100/H200 configs search compiles for sm_90a through the compile
//    stage, without spills or serialised wgmma, and its PTX has wgmma.mma_async, cp.async.bulk.tensor and the
//    mbarrier waits the template promises;
//  - the host's threads and shared memory are what the kernel records in tf_kernel_meta;
//  - every impossible combination stops at its own static_assert, and the host rule of the same meaning
//    prunes it first; every injected bug compiles to its own code;
//  - a candidate whose ptxas log says wgmma was serialised is pruned with that line as the reason;
//  - the template refuses what TMA cannot read, and configs for GPUs without sm_90a features;
//  - templates/wgmma_ops.h is what scripts/gen_wgmma_ops.py writes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/compile_checks.hpp"
#include "tests/support/space_checks.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "runtime/backend/nvrtc_compiler.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"
#include "tuner/device/fuzzing.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_wgmma.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;
using test::h100;
using test::kernel_meta;
using test::static_assert_messages;

const KernelSource& source() {
  static const KernelSource s = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_wgmma.cu");
  return s;
}

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

Point at(const KernelTemplate& t, std::vector<std::pair<std::string, int64_t>> overrides) {
  std::vector<std::pair<std::string, int64_t>> values = t.default_point().values();
  for (const auto& [name, value] : overrides) {
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    if (it == values.end()) throw Error(ErrorKind::internal, "test names no parameter " + name);
    it->second = value;
  }
  return Point(std::move(values));
}

CompileRequest request(const KernelTemplate& t, const Point& point, TypePair types, int mutant = 0) {
  return CompileRequest{&source(), t.defines(point, types, mutant), t.compile_arch("sm_90")};
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

const TypePair kBf16{Precision::bf16, Precision::bf16};
const TypePair kFp8{Precision::fp8e4m3, Precision::bf16};
const TypePair kTf32{Precision::tf32, Precision::fp32};

// The declaration that computes an element type pair: fp8 and tf32 inputs have their own.
const KernelTemplate& template_for(const TypePair& types) {
  if (is_fp8(types.input)) return gemm_wgmma_fp8_template();
  return types.input == Precision::tf32 ? gemm_wgmma_tf32_template() : gemm_wgmma_template();
}

// A temporary compile cache, removed afterwards.
struct TempCache {
  fs::path directory = fs::temp_directory_path() / ("tunefuzz-test-wgmma-" + std::to_string(getpid()));
  TempCache() { fs::remove_all(directory); }
  ~TempCache() { fs::remove_all(directory); }
};

TEST(WgmmaTemplate, CompilesForSm90aOnlyAndAConfigForAnotherGpuIsRefusedAtTheTemplate) {
  EXPECT_EQ(gemm_wgmma_template().compile_arch("sm_90"), "sm_90a");
  try {
    gemm_wgmma_template().compile_arch("sm_80", SourceLocation{"configs/a100.yaml", 60, 5, "gpu.arch"});
    ADD_FAILURE() << "sm_80 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
    EXPECT_TRUE(contains(e.what(), "runs on sm_90 only")) << e.what();
    EXPECT_TRUE(contains(e.what(), "configs/a100.yaml")) << e.what();
  }
  // Templates without an arch list compile for the GPU's own arch.
  for (const KernelTemplate* t : all_templates())
    if (t->archs.empty()) {
      EXPECT_EQ(t->compile_arch("sm_80"), "sm_80") << t->name;
    }
}

TEST(WgmmaTemplate, EveryCandidateOfTheShippedSpacesCompilesWithTheInstructionsItPromises) {
  const TempCache temp;  // one cache: the H100 config's candidates are the H200's, judged on its own limits
  const KernelCache cache(temp.directory);
  for (const char* file : {"/configs/h200.yaml", "/configs/h100.yaml"}) {
    SCOPED_TRACE(file);
    Config config = load_config(std::string(TUNEFUZZ_SOURCE_DIR) + file);
    // Only the Hopper template's spaces: the others have their own compile tests.
    config.templates.erase(
        std::remove_if(config.templates.begin(), config.templates.end(),
                       [](const TemplateSearch& s) { return s.name.rfind("gemm_wgmma", 0) != 0; }),
        config.templates.end());
    ASSERT_FALSE(config.templates.empty()) << "the config searches no gemm_wgmma space";
    const SpaceStage space = space_stage(config);
    ASSERT_FALSE(space.candidates.empty());
    const std::vector<CompiledCandidate> compiled =
        compile_stage(space.candidates, config, compiler(), cache, {TUNEFUZZ_SOURCE_DIR "/templates", 0});
    for (const CompiledCandidate& c : compiled) {
      SCOPED_TRACE(c.candidate.id());
      EXPECT_EQ(c.status, CompileStatus::compiled) << to_string(c.status) << ": " << c.message;
      EXPECT_FALSE(c.resources.spills());
      EXPECT_GE(c.occupancy.blocks_per_sm, 1);
      const CompiledKernel kernel = *cache.load(c.key);
      EXPECT_TRUE(contains(kernel.ptx, ".target sm_90a"));
      for (const char* instruction :
           {"wgmma.mma_async.sync.aligned.m64n", "cp.async.bulk.tensor.2d.shared::cluster",
            "mbarrier.try_wait.parity", "mbarrier.arrive.expect_tx"})
        EXPECT_TRUE(contains(kernel.ptx, instruction)) << instruction;
      EXPECT_FALSE(contains(kernel.log, "wgmma.mma_async instructions are serialized")) << kernel.log;
    }
  }
}

TEST(WgmmaTemplate, HostFormulasEqualTheKernelsOwnRecord) {
  const std::vector<std::pair<const KernelTemplate*, Point>> points = {
      {&gemm_wgmma_template(), gemm_wgmma_template().default_point()},
      {&gemm_wgmma_template(), at(gemm_wgmma_template(), {{"BM", 256}, {"BN", 128}, {"STAGES", 3}})},
      {&gemm_wgmma_template(),
       at(gemm_wgmma_template(), {{"BM", 64}, {"BN", 64}, {"CONSUMERS", 1}, {"BK", 128}})},
      {&gemm_wgmma_fp8_template(), gemm_wgmma_fp8_template().default_point()},
      {&gemm_wgmma_template(), at(gemm_wgmma_template(), {{"A_REGS", 1}})},
      {&gemm_wgmma_fp8_template(), at(gemm_wgmma_fp8_template(), {{"A_REGS", 1}})},
      {&gemm_wgmma_tf32_template(), gemm_wgmma_tf32_template().default_point()},
      {&gemm_wgmma_tf32_template(), at(gemm_wgmma_tf32_template(), {{"BK", 64}, {"BN", 128}})},
  };
  for (const auto& [t, point] : points) {
    SCOPED_TRACE(t->name + " " + point.str());
    const TypePair types = t->supported_types.front();
    const CompiledKernel kernel = compiler().compile(request(*t, point, types));
    const auto meta = kernel_meta(kernel.ptx);
    ASSERT_TRUE(meta.has_value());
    EXPECT_EQ((*meta)[0], t->threads_per_block(point));
    EXPECT_EQ((*meta)[1], t->shared_memory_bytes(point));
    EXPECT_EQ((*meta)[2], point["BM"]);
    EXPECT_EQ((*meta)[3], point["BN"]);
    // One entry per storage order it has a kernel for, and none for the others.
    const std::vector<Layout> kernels = gemm_wgmma_kernel_layouts(size_of(types.input));
    for (const Layout& layout : all_layouts()) {
      std::string entry = "tf_gemm_" + to_string(layout);
      std::transform(entry.begin(), entry.end(), entry.begin(), [](char c) { return std::tolower(c); });
      EXPECT_EQ(kernel.resources.count(entry),
                std::find(kernels.begin(), kernels.end(), layout) != kernels.end() &&
                    gemm_wgmma_computes(point, layout))
          << to_string(layout);
    }
    EXPECT_EQ(kernel.resources.count("tf_scale_c"), 1u) << "the quick return of K = 0 (scale_c.h)";
  }
}

struct Impossible {
  std::vector<std::pair<std::string, int64_t>> overrides;
  TypePair types;
  std::string message;     ///< the static_assert that must fire, and no other
  std::string constraint;  ///< the host rule that prunes the same point ("" for type codes)
};

TEST(WgmmaTemplate, EachImpossibleCombinationFailsWithItsOwnMessageAndTheHostPrunesIt) {
  const std::vector<Impossible> cases = {
      {{{"BM", 192}, {"CONSUMERS", 3}}, kBf16, "CONSUMERS must be 1 or 2 warpgroups", "consumers"},
      {{{"BM", 96}},
       kBf16,
       "BM must be a multiple of 64*CONSUMERS (m64 wgmma blocks), at most 256 rows per consumer",
       "wgmma_m"},
      {{{"BN", 100}, {"CLUSTER_M", 1}},
       kBf16,
       "BN must be a multiple of 8 from 8 to 256 (the wgmma's N)",
       "wgmma_n"},
      {{{"BN", 264}, {"LAYOUTS", 2}, {"CLUSTER_M", 1}},
       kBf16,
       "BN must be a multiple of 8 from 8 to 256 (the wgmma's N)",
       "wgmma_n"},
      {{{"BN", 24}, {"LAYOUTS", 1 | 4}, {"CLUSTER_M", 1}},
       kBf16,
       "BN not a multiple of 64 computes RC and CC only (K-major B): LAYOUTS names neither",
       "k_major_b_layouts"},
      {{{"BN", 24}, {"LAYOUTS", 2}, {"CLUSTER_M", 2}},
       kBf16,
       "CLUSTER_M = 2 loads B in halves of 8-row groups: BN a multiple of 16",
       "cluster_halves"},
      {{{"SWAP_AB", 2}}, kBf16, "SWAP_AB is a switch: 0 or 1", "switch"},
      {{{"BK", 32}}, kBf16, "BK must be a multiple of 128 bytes of input, at most 256", "tma_box"},
      {{{"BK", 64}}, kFp8, "BK must be a multiple of 128 bytes of input, at most 256", "tma_box"},
      {{{"STAGES", 1}},
       kBf16,
       "STAGES must be at least 2 (one stage loading while one is consumed)",
       "stages"},
      {{{"GROUP_M", 0}}, kBf16, "GROUP_M must be at least 1", "positive"},
      // one consumer of 256 rows (four m64 blocks) x 256 columns: 512 accumulators
      {{{"BM", 256}, {"CONSUMERS", 1}},
       kBf16,
       "more than 256 accumulators per consumer thread",
       "accumulators"},
      // fp8 keeps two sets (each K tile is summed apart): 2 x 128 rows x 256 columns over one consumer
      {{{"BM", 128}, {"BN", 256}, {"CONSUMERS", 1}},
       kFp8,
       "more than 256 accumulators per consumer thread",
       "accumulators"},
      {{{"CLUSTER_M", 2}, {"CLUSTER_N", 2}},
       kBf16,
       "CLUSTER_M x CLUSTER_N must be 1x1, 2x1 or 1x2",
       "cluster"},
      {{{"CLUSTER_N", 3}, {"CLUSTER_M", 1}},
       kBf16,
       "CLUSTER_M x CLUSTER_N must be 1x1, 2x1 or 1x2",
       "cluster"},
      {{{"A_REGS", 2}}, kBf16, "A_REGS is a switch: 0 or 1", "switch"},
      {{{"A_REGS", 1}}, kTf32, "A_REGS=1 is for 16-bit and fp8 inputs, not tf32", "a_regs_tf32"},
      // 128 accumulators, and a BK of four 128-byte rows rewrites row-major B's whole 256x128 tile at once
      // over 256 threads: 32 groups of 4 registers each
      {{{"BK", 128}},
       kTf32,
       "tf32: accumulators plus the registers that rewrite M/N-major tiles K-major exceed 192 per thread",
       "transpose_registers"},
      {{{"LAYOUTS", 16}}, kBf16, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC", "layouts"},
      {{{"A_REGS", 1}, {"LAYOUTS", 12}},
       kBf16,
       "A_REGS=1 computes RR and RC only: LAYOUTS names neither",
       "a_regs_layouts"},
      {{}, {Precision::fp32, Precision::fp32}, "TF_INPUT must be fp16, bf16, tf32, fp8e4m3 or fp8e5m2", ""},
  };
  const std::vector<std::string> all_messages = static_assert_messages(source().text);
  std::set<std::string> fired;
  for (const Impossible& c : cases) {
    const KernelTemplate& t = template_for(c.types);
    const Point point = at(t, c.overrides);
    SCOPED_TRACE(t.name + " " + point.str());
    ASSERT_NE(std::find(all_messages.begin(), all_messages.end(), c.message), all_messages.end())
        << c.message;
    try {
      compiler().compile(request(t, point, c.types));
      ADD_FAILURE() << "compiled";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::compile);
      for (const std::string& message : all_messages)
        EXPECT_EQ(contains(error.detail(), message), message == c.message) << message << "\n"
                                                                           << error.detail();
    }
    fired.insert(c.message);
    if (c.constraint.empty()) continue;
    const auto rule = std::find_if(t.constraints.begin(), t.constraints.end(),
                                   [&](const Constraint& r) { return r.name == c.constraint; });
    ASSERT_NE(rule, t.constraints.end()) << c.constraint;
    EXPECT_FALSE(rule->holds(point, h100())) << c.constraint;
  }
  std::vector<Define> defines = gemm_wgmma_template().defines(gemm_wgmma_template().default_point(), kBf16);
  // fp8 output with 16-bit inputs (fp8 C is offered in the input type only).
  for (Define& d : defines)
    if (d.name == "TF_OUTPUT") d.value = template_code(Precision::fp8e4m3);
  const std::string output_rule =
      "TF_OUTPUT must be fp16, bf16, fp32 or (fp8 inputs) the input type; fp32 for tf32 inputs";
  try {
    compiler().compile(CompileRequest{&source(), defines, "sm_90a"});
    ADD_FAILURE() << "bf16 in, fp8e4m3 out compiled";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.detail(), output_rule)) << error.detail();
  }
  fired.insert(output_rule);
  EXPECT_EQ(fired, std::set<std::string>(all_messages.begin(), all_messages.end()));  // every rule exercised
}

// Each mutant changes the 16-bit default point's code; a bug in tf32's own code (the K-major rewrite), the
// tf32 default point's (which has every storage order); a bug in the transposed store, a SWAP_AB point's.
TEST(WgmmaTemplate, EveryInjectedBugCompilesToItsOwnCode) {
  const std::vector<std::string>& names = gemm_wgmma_mutant_names();
  ASSERT_EQ(names, gemm_wgmma_template().mutants);
  ASSERT_EQ(names, gemm_wgmma_tf32_template().mutants);
  const std::vector<std::pair<const KernelTemplate*, Point>> probes = {
      {&gemm_wgmma_template(), gemm_wgmma_template().default_point()},
      {&gemm_wgmma_tf32_template(), gemm_wgmma_tf32_template().default_point()},
      {&gemm_wgmma_template(),
       at(gemm_wgmma_template(), {{"SWAP_AB", 1}, {"BN", 24}, {"LAYOUTS", 2}, {"CLUSTER_M", 1}})}};
  std::vector<std::set<std::string>> ptx;
  for (const auto& [t, point] : probes)
    ptx.push_back({compiler().compile(request(*t, point, t->supported_types.front())).ptx});
  for (int code = 1; code < static_cast<int>(names.size()); ++code) {
    SCOPED_TRACE(names[code]);
    std::string upper = names[code];
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    EXPECT_TRUE(contains(source().text, "#define TF_MUTANT_" + upper + " " + std::to_string(code)));
    bool changes = false;
    for (size_t i = 0; i < probes.size() && !changes; ++i) {
      const auto& [t, point] = probes[i];
      changes =
          ptx[i].insert(compiler().compile(request(*t, point, t->supported_types.front(), code)).ptx).second;
    }
    EXPECT_TRUE(changes) << "the mutant changes nothing in the code";
  }
}

// The PTX instructions between the end of one wgmma's inline asm and the start of the next one's, for each
// pair of consecutive wgmma in the text (the unrolled K tile), directives and comments left out.
std::vector<int> instructions_between_wgmma(const std::string& ptx) {
  std::vector<int> out;
  std::istringstream lines(ptx);
  std::string line;
  bool after_wgmma = false, in_asm_tail = false;
  int count = 0;
  while (std::getline(lines, line)) {
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string text = line.substr(first);
    if (text.rfind("wgmma.mma_async", 0) == 0) {
      if (after_wgmma) out.push_back(count);
      after_wgmma = in_asm_tail = true;
      count = 0;
      continue;
    }
    if (!after_wgmma) continue;
    if (in_asm_tail) {  // the rest of this wgmma's asm block, up to its closing brace
      if (text == "}") in_asm_tail = false;
      continue;
    }
    if (text == "{") {  // the next asm block begins: what it holds is its own
      in_asm_tail = true;
      continue;
    }
    if (text[0] == '.' || text[0] == '/' || text.rfind("$L", 0) == 0) continue;
    if (text.rfind("ret", 0) == 0 || text.rfind("bra", 0) == 0 || text.rfind("@", 0) == 0) {
      after_wgmma = false;  // the K tile ended: the next wgmma starts another one
      continue;
    }
    ++count;
  }
  return out;
}

// Each K tile builds its stages' descriptors once; a wgmma's descriptors are the stage's plus a constant
// offset. Rebuilding them per wgmma (mask, shifts, 64-bit composition) cost 29.5 instructions per HGMMA
// against cuBLAS's 12.5 (results/profile-h200-e4a050c/): at most three PTX instructions may sit between two
// wgmma of a K tile, for every element type, A from shared memory or registers, and both storage orders of A.
TEST(WgmmaTemplate, AKTilesWgmmaAreSeparatedOnlyByTheirDescriptorOffsets) {
  struct Case {
    TypePair types;
    std::vector<std::pair<std::string, int64_t>> point;
  };
  const std::vector<Case> cases = {
      {kBf16, {{"BN", 64}, {"LAYOUTS", 1}}},                  // RR, A from shared memory
      {kBf16, {{"BN", 128}, {"LAYOUTS", 8}}},                 // CC: A stored along M
      {kBf16, {{"BN", 128}, {"A_REGS", 1}, {"LAYOUTS", 1}}},  // A from registers
      {kTf32, {{"BN", 128}}},
      {kFp8, {{"BN", 128}}},
  };
  for (const Case& c : cases) {
    const KernelTemplate& t = template_for(c.types);
    const Point point = at(t, c.point);
    SCOPED_TRACE(t.name + " " + point.str());
    const CompiledKernel kernel = compiler().compile(request(t, point, c.types));
    const std::vector<int> between = instructions_between_wgmma(kernel.ptx);
    ASSERT_FALSE(between.empty()) << "no two wgmma in one K tile";
    EXPECT_LE(*std::max_element(between.begin(), between.end()), 3);
  }
}

// A compiler that reports what NVRTC reports plus one more log line.
class LogAppendingCompiler final : public Compiler {
 public:
  explicit LogAppendingCompiler(std::string line) : line_(std::move(line)) {}
  std::string version() const override { return inner_.version() + " (log appended)"; }
  void require_target(const std::string& arch) const override { inner_.require_target(arch); }
  std::string key(const CompileRequest& r) const override {
    return inner_.key(r) + "-" + std::to_string(std::hash<std::string>{}(line_));  // one entry per log
  }
  CompiledKernel compile(const CompileRequest& r) const override {
    CompiledKernel kernel = inner_.compile(r);
    kernel.key = key(r);
    kernel.log += line_ + "\n";
    return kernel;
  }

 private:
  NvrtcCompiler inner_;
  std::string line_;
};

TEST(WgmmaTemplate, SerialisedWgmmaInTheLogPrunesTheCandidateWithThatLine) {
  const std::string warning =
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due "
      "to "
      "the presence of Extern calls in the function 'tf_gemm_rr'.";
  Config config = load_config(TUNEFUZZ_SOURCE_DIR "/configs/h200.yaml");
  const Candidate candidate{&gemm_wgmma_template(), gemm_wgmma_template().default_point(), kBf16};
  const TempCache temp;
  const KernelCache cache(temp.directory);
  const CompileOptions options{TUNEFUZZ_SOURCE_DIR "/templates", 1};
  const auto serialised = compile_stage({candidate}, config, LogAppendingCompiler(warning), cache, options);
  ASSERT_EQ(serialised.size(), 1u);
  EXPECT_EQ(serialised[0].status, CompileStatus::slow_path);
  EXPECT_TRUE(
      contains(serialised[0].message, "instructions are serialized due to the presence of Extern calls"))
      << serialised[0].message;
  // The same code without the warning is kept: the line, not the code, pruned it.
  const auto plain =
      compile_stage({candidate}, config, LogAppendingCompiler("ptxas info    : all good"), cache, options);
  EXPECT_EQ(plain[0].status, CompileStatus::compiled) << plain[0].message;
}

TEST(WgmmaTemplate, RefusesWhatTmaCannotReadAndLayoutsItDoesNotCompute) {
  const KernelTemplate& t = gemm_wgmma_template();
  const Point p = t.default_point();
  GemmShape s;
  s.m = 1000;
  s.n = 1000;
  s.k = 1000;
  s.lda = 1000;
  s.ldb = 1000;
  s.ldc = 1000;
  EXPECT_EQ(t.refusal(p, s), std::nullopt);  // 2000-byte rows: 16-byte multiples
  GemmShape odd = s;
  odd.k = odd.lda = 1001;
  ASSERT_TRUE(t.refusal(p, odd).has_value());
  EXPECT_TRUE(contains(*t.refusal(p, odd), "TMA needs 16-byte row strides")) << *t.refusal(p, odd);
  GemmShape shifted = s;
  shifted.b_alignment = 8;
  ASSERT_TRUE(t.refusal(p, shifted).has_value());
  EXPECT_TRUE(contains(*t.refusal(p, shifted), "aligned to 16 bytes"));
  GemmShape cc = s;
  cc.layout = {Order::col, Order::col};
  EXPECT_EQ(t.refusal(p, cc), std::nullopt);  // 16-bit inputs: every storage order
  ASSERT_TRUE(gemm_wgmma_fp8_template().refusal(gemm_wgmma_fp8_template().default_point(), cc).has_value());
  // A from registers: row-major A only.
  const Point a_regs = at(t, {{"A_REGS", 1}});
  EXPECT_EQ(t.refusal(a_regs, s), std::nullopt);
  GemmShape cr = s;
  cr.layout = {Order::col, Order::row};
  for (const GemmShape& a_col : {cc, cr}) {
    ASSERT_TRUE(t.refusal(a_regs, a_col).has_value());
    EXPECT_TRUE(contains(*t.refusal(a_regs, a_col), "A_REGS=1 loads A into registers from row-major A only"));
  }
  // An odd ldc is fine: the epilogue then stores from registers instead of through TMA.
  GemmShape odd_c = s;
  odd_c.ldc = 1003;
  EXPECT_EQ(t.refusal(p, odd_c), std::nullopt);
}

// fp8 wgmma sums inside the tensor core with about 14 significant bits until the kernel adds a K tile into
// fp32, so the oracle judges gemm_wgmma_fp8 with runs of BK products at 2^-14; the 16-bit family is fp32.
TEST(WgmmaTemplate, Fp8DeclaresEachKTileAsANarrowAccumulationRun) {
  const KernelTemplate& fp8 = gemm_wgmma_fp8_template();
  for (const int64_t bk : {128, 256}) {
    const Candidate candidate{&fp8, at(fp8, {{"BK", bk}}), kFp8};
    const fuzz::ArithmeticModel model = device::arithmetic_model(candidate, Precision::bf16, 4096);
    EXPECT_EQ(model.group, bk);
    EXPECT_EQ(model.group_unit_roundoff, 0x1p-14);
    EXPECT_EQ(model.accumulator, Precision::fp32);
    EXPECT_EQ(model.k, 4096);
  }
  const KernelTemplate& wide = gemm_wgmma_template();
  const fuzz::ArithmeticModel model =
      device::arithmetic_model({&wide, wide.default_point(), kBf16}, Precision::bf16, 4096);
  EXPECT_EQ(model.group, 0);
  EXPECT_EQ(fuzz::accumulation_factor(model), 2.0 * 4098 * 0x1p-24);
}

// A source's hash (and its cache keys) cover the headers it includes and no others, so adding the wgmma
// wrappers left gemm_mma's hash, and the tables that record it, as they were.
TEST(WgmmaTemplate, ASourceCarriesOnlyTheHeadersItIncludes) {
  const auto names = [](const KernelSource& s) {
    std::set<std::string> out;
    for (const auto& [name, text] : s.headers) out.insert(name);
    return out;
  };
  EXPECT_EQ(names(source()),
            (std::set<std::string>{"gemm_params.h", "output_types.h", "pack.h", "perturb.h", "scale_c.h",
                                   "split_k.h", "tile_map.h", "tunefuzz_rtc.h", "wgmma_ops.h"}));
  const KernelSource mma = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_mma.cu");
  EXPECT_EQ(names(mma), (std::set<std::string>{"gemm_params.h", "output_types.h", "pack.h", "perturb.h", "scale_c.h",
                                               "split_k.h", "tile_map.h", "tunefuzz_rtc.h"}));
}

TEST(WgmmaTemplate, TheGeneratedWrappersAreCurrent) {
  const std::string command = "python3 " TUNEFUZZ_SOURCE_DIR "/scripts/gen_wgmma_ops.py --check";
  EXPECT_EQ(std::system(command.c_str()), 0)
      << "templates/wgmma_ops.h differs from what " << command << " would write";
}

// The TMA epilogue only where C's base, rows and row ends are whole 16-byte units: the fuzz run at 4bc0226
// saw a TMA store overwrite C's row padding up to the next 16-byte unit when N was off one.
TEST(WgmmaTemplate, TheTmaEpilogueTakesOnlyRowsEndingOnSixteenByteUnits) {
  const Point point = gemm_wgmma_template().default_point();
  for (const int64_t output_bytes : {1, 2, 4})
    for (int64_t n = 1; n <= 40; ++n) {
      GemmShape s{64, n, 64, 64, n, (n + 15) / 16 * 16, Layout{}};
      EXPECT_EQ(gemm_wgmma_tma_epilogue(point, s, output_bytes, 4096), (n * output_bytes) % 16 == 0)
          << "N=" << n << " of " << output_bytes << "-byte elements";
      EXPECT_FALSE(gemm_wgmma_tma_epilogue(point, s, output_bytes, 4096 + 8)) << "a base off 16 bytes";
      s.ldc = (n + 15) / 16 * 16 + 1;
      EXPECT_FALSE(gemm_wgmma_tma_epilogue(point, s, output_bytes, 4096)) << "rows off 16 bytes";
    }
}

// Points that store C from registers alone have no staging slab: C stored transposed (SWAP_AB), or a BN that
// is not whole 64-column slabs. The kernel compiles the TMA store out for them (TF_TMA_STORE).
TEST(WgmmaTemplate, OnlyPointsThatStageCStoreItByTma) {
  const GemmShape aligned{256, 256, 64, 64, 256, 256, Layout{}};
  const KernelTemplate& t = gemm_wgmma_template();
  EXPECT_TRUE(gemm_wgmma_tma_epilogue(t.default_point(), aligned, 2, 4096));
  EXPECT_FALSE(gemm_wgmma_tma_epilogue(at(t, {{"SWAP_AB", 1}}), aligned, 2, 4096));
  EXPECT_FALSE(gemm_wgmma_tma_epilogue(at(t, {{"BN", 96}, {"LAYOUTS", 2}}), aligned, 2, 4096));
  GemmShape column = aligned;
  column.c_order = Order::col;
  EXPECT_FALSE(gemm_wgmma_tma_epilogue(t.default_point(), column, 2, 4096));
  // The staging slab is in the shared memory only where it is used.
  const Point staged = at(t, {{"BN", 128}, {"LAYOUTS", 2}}),
              transposed = at(t, {{"BN", 128}, {"LAYOUTS", 2}, {"SWAP_AB", 1}});
  EXPECT_EQ(t.shared_memory_bytes(staged) - t.shared_memory_bytes(transposed), 2 * 64 * 128);
}

// The fuzzer reaches the TMA epilogue: within a fuzz job's default budget (100 cases) a fair share of the
// cases of each default point is one the launcher stores C by TMA for (no split, C's base, rows and row ends
// on 16 bytes). At 48461b4 hardly any were (each residue drawn apart), and store_not_drained, a race in that
// epilogue, survived 100 cases on an H200.
TEST(WgmmaTemplate, TheFuzzCasesReachTheTmaEpilogue) {
  for (const KernelTemplate* t : {&gemm_wgmma_template(), &gemm_wgmma_fp8_template(), &gemm_wgmma_tf32_template()}) {
    SCOPED_TRACE(t->name);
    Candidate c;
    c.kernel_template = t;
    c.point = t->default_point();
    c.types = t->supported_types.front();
    const fuzz::CaseSpace space = case_space_for(c, 132);
    const rc::Gen<fuzz::CaseRecord> gen = fuzz::gen_case(space);
    rc::Random random(20261126);
    const int input_bytes = static_cast<int>(size_of(c.types.input)), output_bytes = static_cast<int>(size_of(c.types.output));
    int tma = 0;
    for (int i = 0; i < 100; ++i) {
      const fuzz::CaseRecord r = gen(random.split(), i % 101).value();
      if (r.m == 0 || r.n == 0 || r.k == 0 || r.splits > 1) continue;
      const GemmShape s = shape_of(r, input_bytes, output_bytes);
      tma += gemm_wgmma_tma_epilogue(c.point, s, output_bytes,
                                     4096 + static_cast<uint64_t>(r.c_offset * output_bytes));
    }
    EXPECT_GE(tma, 12) << "of 100 cases (21 when written; 6 or 7 without the aligned regime)";
  }
}

}  // namespace
}  // namespace tunefuzz
