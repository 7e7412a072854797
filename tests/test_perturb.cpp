// Schedule perturbation (templates/perturb.h) without a GPU:
//  - a perturbed candidate is its own id (`.../perturb=S`), parses back, and compiles with TF_PERTURB;
//  - every NVIDIA template's perturbed image sleeps at its hand-off points (nanosleep in the PTX) and its
//    plain image does not;
//  - the compile stage gives each kept candidate a perturbed twin with its own non-zero seed, and a twin that
//    does not compile leaves its candidate out; it starts the compiles that took longest the last time first;
//  - the fuzz stage runs a third of a candidate's cases on the twin, after the plain cases, and a failure
//    there fails the candidate, marked with the twin's seed (through the fake GPU worker).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "runtime/backend/kernel_cache.hpp"
#include "runtime/backend/nvrtc_compiler.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/gemm_simt.hpp"
#include "runtime/templates/gemm_wgmma.hpp"
#include "tuner/campaign/confirm_stage.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/common/error.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/config/config.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

Candidate candidate_of(const KernelTemplate& t, TypePair types) {
  Candidate c;
  c.kernel_template = &t;
  c.point = t.default_point();
  c.types = types;
  return c;
}

TEST(PerturbedCandidate, IdRoundTripsAndNamesTheSeed) {
  Candidate c = candidate_of(gemm_mma_template(), {Precision::bf16, Precision::bf16});
  c.perturb = 4000000000;
  EXPECT_TRUE(c.id().ends_with("/perturb=4000000000"));
  EXPECT_EQ(parse_candidate_id(c.id()).id(), c.id());
  EXPECT_EQ(parse_candidate_id(c.id()).perturb, c.perturb);
  c.mutant = 3;
  EXPECT_TRUE(c.id().ends_with("/mutant=3/perturb=4000000000"));
  EXPECT_EQ(parse_candidate_id(c.id()).mutant, 3);
  EXPECT_EQ(c.unperturbed().perturb, 0);
  EXPECT_EQ(c.unperturbed().mutant, 3);
  const std::string plain = candidate_of(gemm_mma_template(), {}).id();
  for (const std::string bad : {"/perturb=0", "/perturb=-1", "/perturb=4294967296", "/perturb=1/mutant=2",
                                "/perturb=1/perturb=2", "/shake=1"})
    EXPECT_THROW(parse_candidate_id(plain + bad), Error) << bad;
}

TEST(PerturbedCandidate, CompilesWithTheSeedAsADefine) {
  const KernelTemplate& t = gemm_mma_template();
  const auto defines = t.defines(t.default_point(), {}, 0, 77);
  ASSERT_FALSE(defines.empty());
  EXPECT_EQ(defines.back().name, "TF_PERTURB");
  EXPECT_EQ(defines.back().value, 77);
  for (const Define& d : t.defines(t.default_point(), {}, 0, 0)) EXPECT_NE(d.name, "TF_PERTURB");
}

// Each NVIDIA template, at its default point, for one of its type pairs and the arch it compiles for.
struct TemplateCase {
  const KernelTemplate* kernel_template;
  TypePair types;
  std::string arch;
};

std::vector<TemplateCase> nvidia_templates() {
  return {{&gemm_mma_template(), {Precision::bf16, Precision::bf16}, "sm_90"},
          {&gemm_mma_tf32_template(), {Precision::tf32, Precision::fp32}, "sm_90"},
          {&gemm_mma_fp8_template(), {Precision::fp8e4m3, Precision::bf16}, "sm_90"},
          {&gemm_wgmma_template(), {Precision::bf16, Precision::bf16}, "sm_90a"},
          {&gemm_wgmma_fp8_template(), {Precision::fp8e4m3, Precision::bf16}, "sm_90a"},
          {&gemm_simt_template(), {Precision::fp32, Precision::fp32}, "sm_90"}};
}

TEST(PerturbedImage, SleepsAtHandOffsWhereThePlainImageDoesNot) {
  for (const TemplateCase& tc : nvidia_templates()) {
    const KernelTemplate& t = *tc.kernel_template;
    SCOPED_TRACE(t.name);
    const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", t.source_file);
    const Point point = t.default_point();
    const CompiledKernel shaken = compiler().compile({&source, t.defines(point, tc.types, 0, 12345), tc.arch});
    EXPECT_NE(shaken.ptx.find("nanosleep"), std::string::npos);
    // The delays' seed is in the code: another seed is another image.
    EXPECT_NE(compiler().key({&source, t.defines(point, tc.types, 0, 12345), tc.arch}),
              compiler().key({&source, t.defines(point, tc.types, 0, 54321), tc.arch}));
    // Without TF_PERTURB the hooks compile to nothing (one template per source file is enough to see it).
    if (tc.types.input == Precision::bf16 || tc.types.input == Precision::fp32) {
      const CompiledKernel plain = compiler().compile({&source, t.defines(point, tc.types), tc.arch});
      EXPECT_EQ(plain.ptx.find("nanosleep"), std::string::npos);
    }
  }
}

Config smoke_config() { return load_config(TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml"); }

// Two of the smoke config's candidates: enough to see seeds differ, few enough to compile quickly.
std::vector<Candidate> two_candidates(const Config& config) {
  std::vector<Candidate> all = space_stage(config).candidates;
  std::vector<Candidate> out;
  for (const Candidate& c : all)
    if (c.point["VEC"] == 8 && out.size() < 2) out.push_back(c);
  return out;
}

class TempDirectory {
 public:
  TempDirectory() {
    char pattern[] = "/tmp/tunefuzz-perturb-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDirectory() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// One cache for the compile-stage tests: the plain images compile once.
const KernelCache& shared_cache() {
  static const TempDirectory directory;
  static const KernelCache cache(directory.path());
  return cache;
}

TEST(CompileStage, GivesEveryKeptCandidateAPerturbedTwinWithItsOwnSeed) {
  const Config config = smoke_config();
  const std::vector<Candidate> candidates = two_candidates(config);
  ASSERT_EQ(candidates.size(), 2u);
  const KernelCache& cache = shared_cache();
  const auto compiled = compile_stage(candidates, config, compiler(), cache, {TUNEFUZZ_SOURCE_DIR "/templates", 0, 99});
  std::set<int64_t> seeds;
  for (const CompiledCandidate& c : compiled) {
    SCOPED_TRACE(c.candidate.id());
    if (c.status != CompileStatus::compiled) continue;
    ASSERT_FALSE(c.perturbed_image.empty());
    EXPECT_TRUE(fs::is_regular_file(c.perturbed_image));
    EXPECT_NE(c.perturbed_image, c.image);
    EXPECT_GT(c.perturb, 0);
    EXPECT_LE(c.perturb, int64_t{0xFFFFFFFF});
    EXPECT_EQ(c.perturb, perturb_seed(99, c.candidate.id()));
    seeds.insert(c.perturb);
  }
  EXPECT_EQ(seeds.size(), 2u);
  // Without a seed no twin is built.
  for (const CompiledCandidate& c :
       compile_stage(candidates, config, compiler(), cache, {TUNEFUZZ_SOURCE_DIR "/templates", 0, 0}))
    EXPECT_TRUE(c.perturbed_image.empty());
}

// NVRTC, except that a perturbed source fails to compile (and has a key of its own).
class PerturbBreaksCompiler final : public Compiler {
 public:
  static bool perturbed(const CompileRequest& request) {
    for (const Define& d : request.defines)
      if (d.name == "TF_PERTURB") return true;
    return false;
  }
  std::string version() const override { return compiler().version(); }
  std::string key(const CompileRequest& request) const override {
    return compiler().key(request) + (perturbed(request) ? "-broken" : "");
  }
  CompiledKernel compile(const CompileRequest& request) const override {
    if (perturbed(request)) throw Error(ErrorKind::compile, "injected: the perturbed source is broken");
    return compiler().compile(request);
  }
  void require_target(const std::string& arch) const override { compiler().require_target(arch); }
};

TEST(CompileStage, ACandidateWhoseTwinDoesNotCompileIsOut) {
  const Config config = smoke_config();
  const auto compiled = compile_stage(two_candidates(config), config, PerturbBreaksCompiler(), shared_cache(),
                                      {TUNEFUZZ_SOURCE_DIR "/templates", 0, 5});
  ASSERT_EQ(compiled.size(), 2u);
  for (const CompiledCandidate& c : compiled) {
    EXPECT_EQ(c.status, CompileStatus::compile_failed) << c.candidate.id();
    EXPECT_NE(c.message.find("schedule-perturbed twin"), std::string::npos) << c.message;
  }
}

// Compiles nothing: records the BM of each request in the order it came, and reports a compile time that
// depends on BM alone (not slept); `generation` stands for the template's source, in the key alone.
class OrderRecordingCompiler final : public Compiler {
 public:
  static double seconds_for(int64_t bm) {
    static const std::map<int64_t, double> seconds = {{16, 0.5}, {32, 3}, {64, 1}, {128, 4}, {256, 2}};
    return seconds.at(bm);
  }
  static int64_t bm_of(const CompileRequest& request) {
    for (const Define& d : request.defines)
      if (d.name == "BM") return d.value;
    return -1;
  }
  std::string version() const override { return "order-recording 1"; }
  void require_target(const std::string&) const override {}
  std::string key(const CompileRequest& request) const override {
    return sha256_hex(generation + "/" + compiler().key(request));
  }
  CompiledKernel compile(const CompileRequest& request) const override {
    order.push_back(bm_of(request));
    CompiledKernel out;
    out.key = key(request);
    out.image = "image " + out.key;
    out.compile_seconds = seconds_for(bm_of(request));
    return out;
  }
  std::string generation = "a";
  mutable std::vector<int64_t> order;
};

// A changed template recompiles the longest images first, as long as they took the last time, the new ones
// (never timed) before them, and nothing the cache holds: one compiler thread shows the order.
TEST(CompileStage, TheLongestCompilesStartFirst) {
  const Config config = smoke_config();
  const TempDirectory work;
  const KernelCache cache(work.path() / "cache");
  const auto candidates = [](std::vector<int64_t> bms) {
    std::vector<Candidate> out;
    for (int64_t bm : bms)
      out.push_back(parse_candidate_id("gemm_mma/bf16-bf16/BM=" + std::to_string(bm) + ",BN=128,BK=32"));
    return out;
  };
  OrderRecordingCompiler compiler;
  const CompileOptions one_thread{TUNEFUZZ_SOURCE_DIR "/templates", 1, 0, true};
  compile_stage(candidates({32, 64, 128, 256}), config, compiler, cache, one_thread);
  ASSERT_EQ(compiler.order.size(), 4u) << "cold: everything compiled, in no particular order";
  compiler.order.clear();
  compiler.generation = "b";  // the template's source changed: every key is new, every compile time known
  compile_stage(candidates({32, 64, 128, 256}), config, compiler, cache, one_thread);
  EXPECT_EQ(compiler.order, (std::vector<int64_t>{128, 32, 256, 64}));
  compiler.order.clear();
  compiler.generation = "c";  // changed again, and a point never compiled joins: it goes first
  compile_stage(candidates({32, 64, 128, 256, 16}), config, compiler, cache, one_thread);
  EXPECT_EQ(compiler.order, (std::vector<int64_t>{16, 128, 32, 256, 64}));
  compiler.order.clear();
  compile_stage(candidates({32, 64, 128, 256, 16}), config, compiler, cache, one_thread);
  EXPECT_TRUE(compiler.order.empty()) << "everything from the cache";
}

// The fuzz stage through tests/fixtures/fake_gpu_worker.sh: images are not read, so any path will do.
class FuzzStageWithTwins : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* script : {"fake_gpu_worker.sh", "fake_sanitizer.sh", "serve_jobs.sh"}) {
      fs::copy_file(fs::path(TUNEFUZZ_SOURCE_DIR) / "tests" / "fixtures" / script, work_.path() / script);
      fs::permissions(work_.path() / script, fs::perms::owner_all);
    }
    ::setenv("TUNEFUZZ_WORKER", (work_.path() / "fake_gpu_worker.sh").c_str(), 1);
    ::setenv("TUNEFUZZ_COMPUTE_SANITIZER", (work_.path() / "fake_sanitizer.sh").c_str(), 1);
    ::setenv("FAKE_STEP_S", "0", 1);
  }
  void TearDown() override {
    ::unsetenv("TUNEFUZZ_WORKER");
    ::unsetenv("TUNEFUZZ_COMPUTE_SANITIZER");
    ::unsetenv("FAKE_FAIL_PERTURBED");
    ::unsetenv("FAKE_SANITIZER_FINDS");
  }
  std::vector<CompiledCandidate> compiled(bool with_twin) const {
    CompiledCandidate c;
    c.candidate = candidate_of(gemm_mma_template(), {Precision::bf16, Precision::bf16});
    c.image = work_.path() / "plain.cubin";
    if (with_twin) {
      c.perturbed_image = work_.path() / "perturbed.cubin";
      c.perturb = 42;
    }
    return {c};
  }
  FuzzOptions options() const {
    FuzzOptions o;
    o.work_directory = work_.path() / "work";
    o.cases = 90;
    o.workers = 1;
    o.timeout_s = 60;
    return o;
  }
  TempDirectory work_;
};

TEST_F(FuzzStageWithTwins, AThirdOfTheCasesRunOnTheTwin) {
  const auto fuzzed = fuzz_stage(compiled(true), options());
  ASSERT_EQ(fuzzed.size(), 1u);
  EXPECT_TRUE(fuzzed[0].passed);
  EXPECT_EQ(fuzzed[0].cases_run, 90);
  EXPECT_EQ(fuzzed[0].perturbed_cases_run, 30);
  EXPECT_EQ(fuzzed[0].coverage.at("perturbed"), 30);
  const auto plain = fuzz_stage(compiled(false), options());
  EXPECT_EQ(plain[0].cases_run, 90);
  EXPECT_EQ(plain[0].perturbed_cases_run, 0);
}

// A screened campaign compiles twins for its winners alone: the screen runs no perturbed case, the
// confirmation gets the winner's twin first and runs a third of its cases there; a winner whose twin does not
// compile is demoted.
TEST_F(FuzzStageWithTwins, AWinnerGetsItsTwinAtConfirmationAndOneWhoseTwinFailsIsDemoted) {
  FuzzOptions screen = options();
  screen.cases = 9;
  for (const bool twin_compiles : {true, false}) {
    SCOPED_TRACE(twin_compiles ? "the twin compiles" : "the twin does not compile");
    std::vector<FuzzedCandidate> fuzzed = fuzz_stage(compiled(false), screen);
    ASSERT_TRUE(fuzzed[0].passed);
    EXPECT_EQ(fuzzed[0].perturbed_cases_run, 0);
    ProblemTiming t;
    t.problem.name = "p";
    TimedEntry e;
    e.id = fuzzed[0].candidate.id();
    e.status = "timed";
    e.median_ms = 1;
    t.entries = {e};
    std::vector<ProblemTiming> timings = {t};
    int calls = 0;
    const TwinCompiler twins = [&](const std::vector<Candidate>& winners) {
      ++calls;
      EXPECT_EQ(winners.size(), 1u);
      std::vector<CompiledCandidate> out = compiled(true);
      if (!twin_compiles) {
        out[0].status = CompileStatus::compile_failed;
        out[0].message = "injected: the perturbed source is broken";
      }
      return out;
    };
    const int64_t demoted = confirm_winners(timings, fuzzed, compiled(false), options(), twins);
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(fuzzed[0].confirmed);
    if (twin_compiles) {
      EXPECT_EQ(demoted, 0);
      ASSERT_NE(timings[0].winner(), nullptr);
      EXPECT_EQ(fuzzed[0].cases_run, 9 + 90);
      EXPECT_EQ(fuzzed[0].perturbed_cases_run, 30);
    } else {
      EXPECT_EQ(demoted, 1);
      EXPECT_EQ(timings[0].winner(), nullptr);
      EXPECT_EQ(timings[0].entries[0].status, "fuzz");
      EXPECT_NE(timings[0].entries[0].message.find("schedule-perturbed twin"), std::string::npos);
    }
  }
}

TEST_F(FuzzStageWithTwins, AFailureOnTheTwinFailsTheCandidateAndNamesTheSeed) {
  ::setenv("FAKE_FAIL_PERTURBED", "1", 1);
  const auto fuzzed = fuzz_stage(compiled(true), options());
  ASSERT_EQ(fuzzed.size(), 1u);
  EXPECT_FALSE(fuzzed[0].passed);
  ASSERT_TRUE(fuzzed[0].failure.has_value());
  EXPECT_EQ(fuzzed[0].failure->perturb, 42);
  EXPECT_EQ(fuzzed[0].failed_image, work_.path() / "perturbed.cubin");
  EXPECT_EQ(fuzzed[0].cases_run, 60 + 2);  // the plain cases passed first
  // The candidate itself stays unperturbed: it is what a table would have shipped.
  EXPECT_EQ(fuzzed[0].candidate.perturb, 0);
  // Without a twin the same worker passes it: the failure came from the perturbed job alone.
  EXPECT_TRUE(fuzz_stage(compiled(false), options())[0].passed);
}

// What a pool thread throws ends the stage with that error, not the process: here the journal cannot take the
// job's first line (a folder stands where its file was).
TEST_F(FuzzStageWithTwins, AnErrorOnAPoolThreadIsThrownToTheCaller) {
  std::vector<CompiledCandidate> c = compiled(false);
  std::ofstream(c[0].image) << "an image";  // the journal's keys hash it
  Journal journal = Journal::create(work_.path() / "journal", "config");
  fs::remove(work_.path() / "journal");
  fs::create_directory(work_.path() / "journal");
  FuzzOptions o = options();
  o.journal = &journal;
  EXPECT_THROW(fuzz_stage(c, o), Error);
}

// `fuzz run --sanitize`: a tenth more cases under the tool, on the image that ships, after the others passed.
TEST_F(FuzzStageWithTwins, ASampleUnderTheSanitizerRunsLastAndItsFindingFails) {
  FuzzOptions o = options();
  o.sanitizer = sanitizer_wrapper("racecheck");
  auto fuzzed = fuzz_stage(compiled(true), o);
  EXPECT_TRUE(fuzzed[0].passed);
  EXPECT_EQ(fuzzed[0].cases_run, 90 + 9);
  EXPECT_EQ(fuzzed[0].coverage.at("sanitized"), 9);
  ::setenv("FAKE_SANITIZER_FINDS", "gemm_mma/bf16-bf16/[^/]*$", 1);  // the plain image, not the twin
  fuzzed = fuzz_stage(compiled(true), o);
  ASSERT_TRUE(fuzzed[0].failure.has_value());
  EXPECT_EQ(fuzzed[0].failure->failure_class, fuzz::FailureClass::sanitizer);
  EXPECT_EQ(fuzzed[0].failure->perturb, 0);
  EXPECT_NE(fuzzed[0].failure->message.find("racecheck: Error: Race reported"), std::string::npos)
      << fuzzed[0].failure->message;
  EXPECT_EQ(fuzzed[0].perturbed_cases_run, 30);  // the twin passed before the sample ran
}

}  // namespace
}  // namespace tunefuzz
