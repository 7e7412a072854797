// The HIP fuzz path, as far as it runs without an AMD GPU.
//
// First the judging that the CUDA and HIP fuzz jobs share (tuner/device/fuzzing.hpp), through a
// RuntimeCaseDevice in host memory, as CUDA's and HIP's devices are built, whose "kernel" is a host GEMM over
// the buffers' bytes with a bug injected after it. The laws: a correct kernel passes (and is launched twice,
// for determinism); a write before or after C, or into C's row padding, is out_of_bounds_write; an element
// left unwritten, a wrong one or an all-zero output is incorrect with its subtype; a second run that differs
// is nondeterministic; a runtime error that leaves the device usable is launch_error, one that poisons it
// propagates; a refused shape is refused without a launch. The fuzz job's RapidCheck property over it passes
// a correct kernel, shrinks a buggy one to a small case of the same class, and on a poisoned device reports a
// crash and exits with code 4.
//
// Then the worker's choice of runtime (tuner/worker/worker_main.cpp), run as the coordinator runs it
// (run_worker), on real images of gemm_simt: a cubin from NVRTC and, in builds with HIP, a gfx90a code object
// from hiprtc (a build without hiprtc uses the first bytes of one). tunefuzz-hip-worker (the worker without
// CUDA, built with HIP): the probe and a fuzz job of an AMD image reach the HIP runtime and, with no AMD GPU,
// end with exit 3 and a no_device error naming HIP; a time or case job of an AMD image is refused as
// unsupported, saying why; a job of a cubin is refused, naming the worker that runs it; an image that cannot
// be read is an io error. tunefuzz-worker (which needs libcuda.so.1: without the NVIDIA driver, the CUDA
// toolkit's stub stands in): a fuzz job of an AMD image goes to HIP (or, built without HIP, is refused saying
// so), never to the CUDA driver, and a time job of one is refused.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backend/nvrtc_compiler.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "tuner/device/fuzzing.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/worker/worker_client.hpp"
#if TUNEFUZZ_HAVE_HIP
#include "runtime/backend/hiprtc_compiler.hpp"
#endif

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;
using device::CaseBuffer;
using device::CaseLaunch;
using device::CaseOutcome;
using fuzz::FailureClass;

constexpr bool built_with_hip() {
#if TUNEFUZZ_HAVE_HIP
  return true;
#else
  return false;
#endif
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// gemm_simt at its defaults (BM=BN=128, VEC=4), fp32: the template the HIP fuzz job runs.
Candidate simt() {
  Candidate c;
  c.kernel_template = &find_template("gemm_simt");
  c.point = c.kernel_template->default_point();
  c.types = {Precision::fp32, Precision::fp32};
  return c;
}

/// A fresh directory per test, removed after it.
class InTemporaryDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        fs::temp_directory_path() / ("tunefuzz_test_hip_fuzz_" + std::to_string(::getpid()) + "_" +
                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path directory_;
};

// ---- 1. the judging, on a device in host memory --------------------------------------------------------

/// The host "runtime's" error, which poisons the device or not.
class HostError : public Error {
 public:
  HostError(bool poisons, const std::string& what) : Error(ErrorKind::launch, what), poisons_(poisons) {}
  bool poisons_context() const { return poisons_; }

 private:
  bool poisons_;
};

/// The host "runtime's" buffer.
class HostBuffer {
 public:
  unsigned char* get() { return bytes_.data(); }
  void reserve(size_t bytes) {
    if (bytes_.size() < bytes) bytes_.assign(bytes, 0x5A);  // grown: the contents are garbage, as on a device
  }
  void upload(const void* host, size_t bytes, size_t offset) {
    if (offset + bytes > bytes_.size()) throw Error(ErrorKind::internal, "upload past the end of a buffer");
    std::memcpy(bytes_.data() + offset, host, bytes);
  }
  void download(void* host, size_t bytes, size_t offset) const {
    if (offset + bytes > bytes_.size()) throw Error(ErrorKind::internal, "download past the end of a buffer");
    std::memcpy(host, bytes_.data() + offset, bytes);
  }

 private:
  std::vector<unsigned char> bytes_;
};

/// fp32 GEMM computed in double and rounded once (bit-exact for small integers), reading A, B and C as their
/// bytes lie at the launch's offsets, then `bug` (if any) on the buffers.
class HostDevice final : public device::RuntimeCaseDevice<HostBuffer, HostError> {
 public:
  std::function<void(HostDevice&, const CaseLaunch&)> bug;
  std::optional<HostError> error;  ///< thrown by every launch when set
  int launches = 0;

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return simt().kernel_template->refusal(simt().point, shape);
  }
  int64_t workspace_bytes(const GemmShape&, const LaunchOverrides&) const override { return 0; }
  std::optional<std::string> launch(const CaseLaunch& l) override {
    ++launches;
    return launch_error([&] {
      if (error) throw *error;
      const GemmShape& s = l.shape;
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < s.k; ++p) {
            const int64_t a = s.layout.a == Order::row ? i * s.lda + p : p * s.lda + i;
            const int64_t b = s.layout.b == Order::row ? p * s.ldb + j : j * s.ldb + p;
            sum += static_cast<double>(element(CaseBuffer::a, l.a_offset, a)) *
                   element(CaseBuffer::b, l.b_offset, b);
          }
          const double c0 = l.beta == 0 ? 0.0 : c_at(l, i, j);
          c_at(l, i, j) = static_cast<float>(static_cast<double>(l.alpha) * sum + l.beta * c0);
        }
      if (bug) bug(*this, l);
    });
  }

  /// The float `index` elements past byte `offset` of a buffer; element (i, j) of C (row-major, ldc).
  float& element(CaseBuffer which, size_t offset, int64_t index) {
    const int64_t byte = static_cast<int64_t>(offset) + index * static_cast<int64_t>(sizeof(float));
    return *reinterpret_cast<float*>(buffer(which).get() + byte);
  }
  float& c_at(const CaseLaunch& l, int64_t i, int64_t j) {
    return element(CaseBuffer::c, l.c_offset, i * l.shape.ldc + j);
  }
};

/// 13x12x20, C rows padded by 3, C one element off its aligned base, beta = 0 (C arrives as NaN).
fuzz::CaseRecord small_case() {
  fuzz::CaseRecord r;
  r.m = 13;
  r.n = 12;
  r.k = 20;
  r.ldc_pad = 3;
  r.c_offset = 1;
  r.distribution = fuzz::Distribution::small_int;
  r.seed = 7;
  return r;
}

CaseOutcome run(HostDevice& device, const fuzz::CaseRecord& record = small_case()) {
  return device::run_case(device, simt(), record);
}

TEST(CaseJudging, ACorrectKernelPassesAndIsLaunchedTwice) {
  HostDevice device;
  for (const auto& [alpha, beta] : {std::pair{1.0, 0.0}, {2.0, 0.5}, {-1.0, 1.0}}) {
    fuzz::CaseRecord r = small_case();
    r.alpha = alpha;
    r.beta = beta;
    r.a_offset = 4;  // 16 bytes: still aligned for VEC=4
    r.ldb_pad = 4;
    const int before = device.launches;
    const CaseOutcome outcome = run(device, r);
    EXPECT_TRUE(outcome.passed) << fuzz::to_string(r) << ": " << outcome.message;
    EXPECT_EQ(device.launches - before, 2) << "a passing case is run again for determinism";
  }
  fuzz::CaseRecord bounded = small_case();
  bounded.distribution = fuzz::Distribution::normal;
  EXPECT_TRUE(run(device, bounded).passed);
}

TEST(CaseJudging, WritesOutsideCAreOutOfBounds) {
  const fuzz::CaseRecord r = small_case();
  const auto out_of_bounds = [&](int64_t index_past_c) {  // the float that many elements past C's first
    HostDevice device;
    device.bug = [&](HostDevice& d, const CaseLaunch& l) {
      d.element(CaseBuffer::c, l.c_offset, index_past_c) = 1;
    };
    const CaseOutcome outcome = run(device, r);
    EXPECT_EQ(outcome.failure_class, FailureClass::out_of_bounds_write) << index_past_c;
    return outcome.message;
  };
  EXPECT_TRUE(contains(out_of_bounds(-2), "8 bytes before C"));
  EXPECT_TRUE(contains(out_of_bounds(r.m * r.ldc()), "0 bytes past its end"));
  EXPECT_TRUE(contains(out_of_bounds(2 * r.ldc() + r.n + 1), "row padding of C (row 2)"));
}

TEST(CaseJudging, WrongOutputsAreIncorrectWithTheirSubtype) {
  {
    HostDevice device;  // the last row never written: it keeps the NaN C arrived with
    device.bug = [](HostDevice& d, const CaseLaunch& l) {
      for (int64_t j = 0; j < l.shape.n; ++j)
        d.c_at(l, l.shape.m - 1, j) = std::numeric_limits<float>::quiet_NaN();
    };
    const CaseOutcome outcome = run(device);
    EXPECT_EQ(outcome.failure_class, FailureClass::incorrect);
    EXPECT_EQ(outcome.subtype, "unwritten") << outcome.message;
    EXPECT_EQ(device.launches, 1) << "a failing case is not run again";
  }
  {
    HostDevice device;  // one element off by one: small integers are judged bit for bit
    device.bug = [](HostDevice& d, const CaseLaunch& l) { d.c_at(l, 3, 4) += 1.0f; };
    const CaseOutcome outcome = run(device);
    EXPECT_EQ(outcome.failure_class, FailureClass::incorrect);
    EXPECT_TRUE(outcome.message.starts_with("exact: ")) << outcome.message;
    EXPECT_FALSE(outcome.subtype.empty());
  }
  {
    HostDevice device;
    device.bug = [](HostDevice& d, const CaseLaunch& l) {
      for (int64_t i = 0; i < l.shape.m; ++i)
        for (int64_t j = 0; j < l.shape.n; ++j) d.c_at(l, i, j) = 0.0f;
    };
    const CaseOutcome outcome = run(device);
    EXPECT_EQ(outcome.failure_class, FailureClass::incorrect);
    EXPECT_EQ(outcome.subtype, "all_zero") << outcome.message;
  }
}

TEST(CaseJudging, ASecondRunThatDiffersIsNondeterministic) {
  HostDevice device;
  device.bug = [](HostDevice& d, const CaseLaunch& l) {
    if (d.launches == 2) d.c_at(l, 0, 0) = std::nextafter(d.c_at(l, 0, 0), 1e9f);
  };
  const CaseOutcome outcome = run(device);
  EXPECT_EQ(outcome.failure_class, FailureClass::nondeterministic);
  EXPECT_TRUE(contains(outcome.message, "changed 1 of 156 elements")) << outcome.message;
}

TEST(CaseJudging, ARuntimeErrorIsALaunchErrorUnlessItPoisonsTheDevice) {
  HostDevice device;
  device.error = HostError(false, "hipModuleLaunchKernel(tf_gemm): hipErrorInvalidValue (test)");
  const CaseOutcome outcome = run(device);
  EXPECT_EQ(outcome.failure_class, FailureClass::launch_error);
  EXPECT_EQ(outcome.message, device.error->what());

  device.error = HostError(true, "hipStreamSynchronize: hipErrorIllegalAddress (test)");
  try {
    run(device);
    ADD_FAILURE() << "an error that poisons the device did not propagate";
  } catch (const HostError& e) {
    EXPECT_TRUE(device.poisons(e));
  }
}

TEST(CaseJudging, ARefusedShapeIsRefusedWithoutALaunch) {
  HostDevice device;
  fuzz::CaseRecord r = small_case();
  r.k = 21;  // not a multiple of VEC=4
  const CaseOutcome outcome = run(device, r);
  EXPECT_TRUE(outcome.refused);
  EXPECT_EQ(outcome.failure_class, FailureClass::not_supported);
  EXPECT_FALSE(outcome.message.empty());
  EXPECT_EQ(device.launches, 0);
}

// A zero size is a case like any other: a correct quick return passes (nothing written for M or N = 0, C =
// beta·C for K = 0, zeros without reading C when beta == 0), and what a wrong one does is caught: writing the
// row padding of an N = 0 case, leaving C unwritten or unscaled for K = 0.
TEST(CaseJudging, ZeroSizesPassWhenQuickAndFailWhenNot) {
  const auto zero_case = [](int64_t m, int64_t n, int64_t k, double beta) {
    fuzz::CaseRecord r = small_case();
    r.m = m, r.n = n, r.k = k, r.beta = beta;
    return r;
  };
  for (const Layout& layout : all_layouts())
    for (const fuzz::CaseRecord& r :
         {zero_case(0, 12, 20, 1), zero_case(13, 0, 20, 0), zero_case(13, 12, 0, 0),
          zero_case(13, 12, 0, -0.5), zero_case(0, 0, 0, 2)}) {
      fuzz::CaseRecord record = r;
      record.layout = layout;
      HostDevice device;
      const CaseOutcome outcome = device::run_case(device, simt(), record);
      EXPECT_TRUE(outcome.passed) << fuzz::to_string(record) << ": " << outcome.message;  // every layout
    }
  {
    HostDevice device;  // N = 0: C's rows are all padding, which must stay as it was
    device.bug = [](HostDevice& d, const CaseLaunch& l) { d.c_at(l, 1, 0) = 0.0f; };
    const CaseOutcome outcome = run(device, zero_case(13, 0, 20, 0));
    EXPECT_EQ(outcome.failure_class, FailureClass::out_of_bounds_write) << outcome.message;
  }
  {
    HostDevice device;  // K = 0, beta == 0: C arrives as NaN and must come back as zeros
    device.bug = [](HostDevice& d, const CaseLaunch& l) {
      d.c_at(l, 2, 3) = std::numeric_limits<float>::quiet_NaN();
    };
    const CaseOutcome outcome = run(device, zero_case(13, 12, 0, 0));
    EXPECT_EQ(outcome.failure_class, FailureClass::incorrect);
    EXPECT_EQ(outcome.subtype, "unwritten") << outcome.message;
  }
  {
    HostDevice device;  // K = 0, beta != 0: C must be scaled, not cleared
    device.bug = [](HostDevice& d, const CaseLaunch& l) { d.c_at(l, 0, 0) = 0.0f; };
    fuzz::CaseRecord r = zero_case(13, 12, 0, -0.5);
    r.distribution = fuzz::Distribution::ones;
    const CaseOutcome outcome = run(device, r);
    EXPECT_EQ(outcome.failure_class, FailureClass::incorrect) << outcome.message;
  }
}

// ---- 2. the fuzz job's property over a device ----------------------------------------------------------

class FuzzProperty : public InTemporaryDirectory {
 protected:
  void SetUp() override {
    InTemporaryDirectory::SetUp();
    job_.candidate = simt().id();
    job_.cases = 25;
    job_.seed = 11;
    job_.progress = directory_ / "fuzz.progress";
  }

  FuzzResult fuzz(HostDevice& device) {
    return device::fuzz_candidate(job_, simt(), 104, device, [&](const FuzzResult& partial) {
      write_yaml(directory_ / "partial.yaml", to_yaml(partial));
    });
  }

  FuzzJob job_;
};

/// A bug for the property tests: the last column of C is wrong whenever N > 8.
void breaks_the_last_column_past_n_8(HostDevice& device, const CaseLaunch& l) {
  if (l.shape.n > 8)
    for (int64_t i = 0; i < l.shape.m; ++i) device.c_at(l, i, l.shape.n - 1) = 0.5f;
}

TEST_F(FuzzProperty, ACorrectKernelPassesEveryCase) {
  HostDevice device;
  const auto start = std::chrono::steady_clock::now();
  const FuzzResult result = fuzz(device);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(result.passed);
  // The job says where its time went, phase by phase, within the time it took; and so does its YAML.
  std::set<std::string> phases;
  double phased = 0;
  for (const auto& [phase, seconds] : result.phase_seconds) {
    phases.insert(phase);
    EXPECT_GE(seconds, 0) << phase;
    phased += seconds;
  }
  EXPECT_EQ(phases, (std::set<std::string>{"space", "make", "upload", "kernel", "download", "judge"}));
  EXPECT_GT(result.phase_seconds.at("kernel"), 0) << "the host GEMM of every case ran in the kernel phase";
  EXPECT_LE(phased, wall);
  const FuzzResult reread = fuzz_result_from_yaml(to_yaml(result));
  ASSERT_EQ(reread.phase_seconds.size(), result.phase_seconds.size());
  for (const auto& [phase, seconds] : result.phase_seconds)
    EXPECT_NEAR(reread.phase_seconds.at(phase), seconds, 1e-4) << phase;
  EXPECT_FALSE(result.failure);
  EXPECT_EQ(result.cases_run, job_.cases);
  EXPECT_FALSE(result.coverage.empty());
  EXPECT_GT(fs::file_size(job_.progress), 0u) << "each case is written to the progress file first";
  // Every launch is bracketed in the progress file: `kernel <case>` before it, `judge <case>` after it, so
  // the coordinator's kernel deadline can tell a kernel that never returns from slow host work.
  std::ifstream lines(job_.progress);
  std::string line, previous;
  int64_t kernels = 0;
  while (std::getline(lines, line)) {
    if (previous.rfind("kernel ", 0) == 0) {
      EXPECT_EQ(line, "judge " + previous.substr(7)) << "a kernel line not followed by its judge line";
    }
    kernels += line.rfind("kernel ", 0) == 0;
    previous = line;
  }
  EXPECT_GE(kernels, result.cases_run) << "every case launches at least once";
  EXPECT_NE(previous.rfind("kernel ", 0), 0u) << "the last launch returned";
}

TEST_F(FuzzProperty, ABuggyKernelFailsAndShrinksKeepingTheClass) {
  HostDevice device;
  device.bug = breaks_the_last_column_past_n_8;  // caught, and shrunk to a case that still has N > 8
  const FuzzResult result = fuzz(device);
  EXPECT_FALSE(result.passed);
  ASSERT_TRUE(result.failure);
  EXPECT_EQ(result.failure->failure_class, FailureClass::incorrect);
  const fuzz::CaseRecord& first = result.failure->first_case;
  const fuzz::CaseRecord& shrunk = result.failure->shrunk_case;
  EXPECT_GT(shrunk.n, 8);
  EXPECT_LE(shrunk.m * shrunk.n * shrunk.k, first.m * first.n * first.k);
  EXPECT_FALSE(result.failure->reproduce.empty());
}

// Shrinking runs each record once (a repeat reuses its verdict: huge records take seconds of host work each),
// and the failure is on record (write_partial) while shrinking goes on, so a job killed then still reports
// it.
TEST_F(FuzzProperty, ShrinkingRunsEachRecordOnceWithTheFailureAlreadyOnRecord) {
  HostDevice device;
  device.bug = breaks_the_last_column_past_n_8;
  const FuzzResult result = fuzz(device);
  ASSERT_TRUE(result.failure);
  std::ifstream lines(job_.progress);
  std::set<std::string> shrinks;
  int64_t shrink_lines = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("shrink ", 0) == 0) {
      ++shrink_lines;
      EXPECT_TRUE(shrinks.insert(line).second) << "run twice: " << line;
    }
  EXPECT_GT(shrink_lines, 0);
  ASSERT_TRUE(fs::exists(directory_ / "partial.yaml"));
  const FuzzResult partial = fuzz_result_from_yaml(read_yaml(directory_ / "partial.yaml"));
  ASSERT_TRUE(partial.failure);
  EXPECT_EQ(partial.failure->failure_class, FailureClass::incorrect);
  EXPECT_EQ(partial.failure->shrunk_case, result.failure->shrunk_case);
  EXPECT_EQ(partial.failure->first_case, result.failure->first_case);
}

TEST_F(FuzzProperty, APoisonedDeviceReportsACrashAndExitsWithCodeFour) {
  HostDevice device;
  device.error = HostError(true, "the device is lost (test)");
  // The default ("fast") death test forks this process, so the child writes where this test reads.
  EXPECT_EXIT(fuzz(device), ::testing::ExitedWithCode(device::kExitContextPoisoned), "");
  const FuzzResult partial = fuzz_result_from_yaml(read_yaml(directory_ / "partial.yaml"));
  ASSERT_TRUE(partial.failure);
  EXPECT_EQ(partial.failure->failure_class, FailureClass::crash);
  EXPECT_TRUE(contains(partial.failure->message, "the device is lost")) << partial.failure->message;
}

// ---- 3. the worker's choice of runtime -----------------------------------------------------------------

std::string compile_simt(const Compiler& compiler, const std::string& arch) {
  static const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_simt.cu");
  const Candidate c = simt();
  return compiler.compile({&source, c.kernel_template->defines(c.point, c.types), arch}).image;
}

/// Images of gemm_simt for either runtime, compiled once for the whole run.
struct Images {
  fs::path directory =
      fs::temp_directory_path() / ("tunefuzz_test_hip_fuzz_images_" + std::to_string(::getpid()));
  fs::path amd = directory / "gemm_simt-gfx90a.co";
  fs::path cuda = directory / "gemm_simt-sm_90.cubin";

  Images() {
    fs::create_directories(directory);
#if TUNEFUZZ_HAVE_HIP
    std::ofstream(amd, std::ios::binary) << compile_simt(HiprtcCompiler(), "gfx90a");
#else
    // The first bytes of an AMDGPU code object: a 64-bit little-endian ELF for EM_AMDGPU (224).
    std::string header(20, '\0');
    header.replace(0, 4,
                   "\x7f"
                   "ELF");
    header[4] = 2;  // ELFCLASS64
    header[5] = 1;  // ELFDATA2LSB
    header[18] = static_cast<char>(224);
    std::ofstream(amd, std::ios::binary) << header;
#endif
    std::ofstream(cuda, std::ios::binary) << compile_simt(NvrtcCompiler(), "sm_90");
  }
  ~Images() {
    fs::remove_all(directory);
  }
};

const Images& images() {
  static const Images instance;
  return instance;
}

/// e_machine of an ELF file (little-endian, bytes 18-19), 0 when it is shorter.
int elf_machine(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char header[20] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return 0;
  return header[18] | header[19] << 8;
}

YAML::Node fuzz_job(const fs::path& image) {
  FuzzJob job;
  job.candidate = simt().id();
  job.image = image;
  job.cases = 10;
  return to_yaml(job);
}

YAML::Node time_job(const fs::path& image) {
  TimeJob job;
  job.problem.name = "square_256_fp32";
  job.problem.m = job.problem.n = job.problem.k = 256;
  job.problem.input = job.problem.output = Precision::fp32;
  job.candidates.push_back({simt().id(), image});
  job.screen = job.time = {simt().id()};
  return to_yaml(job);
}

YAML::Node case_job(const fs::path& image) {
  CaseJob job;
  job.sets.push_back({simt().id(), image, std::vector<fuzz::CaseRecord>(2)});
  for (fuzz::CaseRecord& record : job.sets.front().records) record.m = record.n = record.k = 8;
  return to_yaml(job);
}

/// Runs jobs in a worker of this build (bin/NAME, through $TUNEFUZZ_WORKER) as a campaign does.
class Worker : public InTemporaryDirectory {
 protected:
  void TearDown() override {
    ::unsetenv("TUNEFUZZ_WORKER");
    if (stubbed_ && library_path_) ::setenv("LD_LIBRARY_PATH", library_path_->c_str(), 1);
    if (stubbed_ && !library_path_) ::unsetenv("LD_LIBRARY_PATH");
    InTemporaryDirectory::TearDown();
  }

  /// Why worker `name` cannot run here, or nullopt; it is then the one `run` uses. There is no
  /// tunefuzz-hip-worker without HIP. tunefuzz-worker does not start without the NVIDIA driver's
  /// libcuda.so.1: there, the CUDA toolkit's stub of it (whose cuInit finds no device) stands in, which is
  /// all a job for an AMD image needs of it.
  std::optional<std::string> cannot_start(const std::string& name) {
    if (name == "tunefuzz-hip-worker" && !built_with_hip()) return "built without HIP: there is no " + name;
    ::setenv("TUNEFUZZ_WORKER", (fs::path(TUNEFUZZ_BINARY_DIR) / "bin" / name).c_str(), 1);
    YAML::Node probe;
    probe["kind"] = "probe";
    WorkerOutcome started = run(probe);
    const fs::path stub = TUNEFUZZ_CUDA_DRIVER_LIBRARY;
    if (started.exit_code == 127 && contains(started.stderr_tail, "libcuda") && fs::exists(stub)) {
      fs::create_directories(directory_ / "cuda-stub");
      fs::create_symlink(stub, directory_ / "cuda-stub" / "libcuda.so.1");
      if (const char* old = std::getenv("LD_LIBRARY_PATH")) library_path_ = old;
      stubbed_ = true;
      ::setenv("LD_LIBRARY_PATH",
               ((directory_ / "cuda-stub").string() + ":" + library_path_.value_or("")).c_str(), 1);
      started = run(probe);
    }
    if (started.exit_code == 127) return name + " cannot start here: " + started.stderr_tail;
    return std::nullopt;
  }

  WorkerOutcome run(YAML::Node job) {
    job["progress"] = (directory_ / "job.progress").string();
    return run_worker(job, directory_, "job-" + std::to_string(++jobs_), 120);
  }

  static std::string error_kind(const WorkerOutcome& o) {
    return o.result && o.result["error"] ? o.result["error"]["kind"].as<std::string>() : "";
  }
  static std::string error_message(const WorkerOutcome& o) {
    return o.result && o.result["error"] ? o.result["error"]["message"].as<std::string>() : "";
  }

  int jobs_ = 0;
  bool stubbed_ = false;                     ///< the CUDA stub was put in front of LD_LIBRARY_PATH
  std::optional<std::string> library_path_;  ///< LD_LIBRARY_PATH before that (nullopt: unset)
};

using End = WorkerOutcome::End;

TEST(WorkerImages, EachImageIsForItsRuntime) {
  EXPECT_EQ(elf_machine(images().cuda), 190) << "EM_CUDA";
  EXPECT_EQ(elf_machine(images().amd), 224) << "EM_AMDGPU";
  if (built_with_hip()) {
    EXPECT_GT(fs::file_size(images().amd), 1000u) << "a whole code object from hiprtc";
  }
}

TEST_F(Worker, HipWorkerProbeAndFuzzJobReachHipAndWithoutAnAmdGpuAreNoDevice) {
  if (auto why = cannot_start("tunefuzz-hip-worker")) GTEST_SKIP() << *why;
  YAML::Node probe;
  probe["kind"] = "probe";
  const WorkerOutcome probed = run(probe);
  if (probed.end == End::finished) GTEST_SKIP() << "an AMD GPU is here";
  EXPECT_EQ(probed.exit_code, 3) << probed.describe();
  EXPECT_EQ(probed.end, End::failed_to_start) << probed.describe();
  EXPECT_EQ(error_kind(probed), "no_device");
  EXPECT_TRUE(contains(error_message(probed), "no usable HIP device")) << error_message(probed);

  const WorkerOutcome fuzzed = run(fuzz_job(images().amd));
  EXPECT_EQ(fuzzed.exit_code, 3) << "a classified no-device error, not a crash: " << fuzzed.describe();
  EXPECT_EQ(error_kind(fuzzed), "no_device");
  EXPECT_TRUE(contains(error_message(fuzzed), "no usable HIP device")) << error_message(fuzzed);
  EXPECT_FALSE(fuzzed.result["passed"]) << "no verdict without a device";
}

TEST_F(Worker, HipWorkerRefusesTimeAndCaseJobsOfAnAmdImageSayingWhy) {
  if (auto why = cannot_start("tunefuzz-hip-worker")) GTEST_SKIP() << *why;
  const WorkerOutcome timed = run(time_job(images().amd));
  EXPECT_EQ(timed.end, End::error) << timed.describe();
  EXPECT_EQ(timed.exit_code, 1);
  EXPECT_EQ(error_kind(timed), "unsupported");
  for (const char* part : {"the time job is not written for AMD GPUs", "cuBLAS", "is an AMDGPU code object"})
    EXPECT_TRUE(contains(error_message(timed), part)) << error_message(timed);

  const WorkerOutcome replayed = run(case_job(images().amd));
  EXPECT_EQ(replayed.exit_code, 1) << replayed.describe();
  EXPECT_EQ(error_kind(replayed), "unsupported");
  EXPECT_TRUE(contains(error_message(replayed), "the case job is not written for AMD GPUs"))
      << error_message(replayed);
}

TEST_F(Worker, HipWorkerRefusesJobsOfACubinNamingTheWorkerThatRunsThem) {
  if (auto why = cannot_start("tunefuzz-hip-worker")) GTEST_SKIP() << *why;
  for (const YAML::Node& job : {fuzz_job(images().cuda), time_job(images().cuda), case_job(images().cuda)}) {
    const WorkerOutcome outcome = run(job);
    EXPECT_EQ(outcome.exit_code, 1) << outcome.describe();
    EXPECT_EQ(error_kind(outcome), "unsupported");
    for (const char* part : {"is a CUDA image", "built without CUDA", "runs in tunefuzz-worker"})
      EXPECT_TRUE(contains(error_message(outcome), part)) << error_message(outcome);
  }
}

TEST_F(Worker, HipWorkerCallsAnUnreadableImageAnIoError) {
  if (auto why = cannot_start("tunefuzz-hip-worker")) GTEST_SKIP() << *why;
  const WorkerOutcome outcome = run(fuzz_job(directory_ / "missing.co"));
  EXPECT_EQ(outcome.exit_code, 1) << outcome.describe();
  EXPECT_EQ(error_kind(outcome), "io");
  EXPECT_TRUE(contains(error_message(outcome), "missing.co")) << error_message(outcome);
}

TEST_F(Worker, CudaWorkerSendsAnAmdImagesFuzzJobToHipAndRefusesItsTimeJob) {
  if (auto why = cannot_start("tunefuzz-worker")) GTEST_SKIP() << *why;
  const WorkerOutcome fuzzed = run(fuzz_job(images().amd));
  EXPECT_FALSE(contains(fuzzed.stderr_tail + error_message(fuzzed), "cuModuleLoadData")) << fuzzed.describe();
  if (!built_with_hip()) {
    EXPECT_EQ(fuzzed.exit_code, 1) << fuzzed.describe();
    EXPECT_EQ(error_kind(fuzzed), "unsupported");
    EXPECT_TRUE(contains(error_message(fuzzed), "built without HIP")) << error_message(fuzzed);
  } else if (fuzzed.end != End::finished) {  // finished: an AMD GPU is here and the job ran
    EXPECT_EQ(fuzzed.exit_code, 3) << fuzzed.describe();
    EXPECT_EQ(error_kind(fuzzed), "no_device");
    EXPECT_TRUE(contains(error_message(fuzzed), "no usable HIP device")) << error_message(fuzzed);
  }
  const WorkerOutcome timed = run(time_job(images().amd));
  EXPECT_EQ(timed.exit_code, 1) << timed.describe();
  EXPECT_EQ(error_kind(timed), "unsupported");
  EXPECT_TRUE(contains(error_message(timed), "the time job is not written for AMD GPUs"))
      << error_message(timed);
}

TEST_F(Worker, ServingCudaWorkerEndsEachJobAsAWorkerOfOneJobDoes) {
  // tunefuzz-worker --serve (run_worker with reuse): the same jobs end with the same codes and errors, their
  // output in each job's own log. (Without a GPU no job finishes, so every one ends its serving worker.)
  if (auto why = cannot_start("tunefuzz-worker")) GTEST_SKIP() << *why;
  YAML::Node probe;
  probe["kind"] = "probe";
  const std::vector<YAML::Node> jobs = {probe, fuzz_job(images().amd), time_job(images().amd)};
  std::vector<WorkerOutcome> one, served;
  for (const YAML::Node& job : jobs) one.push_back(run(job));
  std::thread([&] {
    for (YAML::Node job : jobs) {
      job["progress"] = (directory_ / "job.progress").string();
      served.push_back(
          run_worker(job, directory_, "served-" + std::to_string(++jobs_), 120, {}, 0, -1, true));
    }
  }).join();
  ASSERT_EQ(served.size(), one.size());
  for (size_t i = 0; i < one.size(); ++i) {
    SCOPED_TRACE(jobs[i]["kind"].as<std::string>());
    EXPECT_EQ(served[i].end, one[i].end) << served[i].describe() << " against " << one[i].describe();
    EXPECT_EQ(served[i].exit_code, one[i].exit_code);
    EXPECT_EQ(error_kind(served[i]), error_kind(one[i]));
    EXPECT_EQ(error_message(served[i]), error_message(one[i]));
    EXPECT_TRUE(contains(served[i].stderr_tail, "tunefuzz-worker: ")) << served[i].stderr_tail;
  }
}

}  // namespace
}  // namespace tunefuzz
