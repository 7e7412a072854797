// Tests of what AMD targets change on the host side, in every build (with or without HIP), stated as laws: a
// config names an AMD target by its `gfx` name and must then state its wavefront width, which NVIDIA configs
// leave at 32; occupancy counts threads in warps of the config's width, so the same kernel fits differently
// on 32- and 64-wide machines, as worked out by hand; the shipped AMD configs load and keep points; and the
// compiler for a target is chosen by its name and refuses, at the config's `gpu.arch`, a target this build
// or its toolchain cannot compile for, and `tune compile` says so and exits 2 where hiprtc alone would abort.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/backend/compiler_for.hpp"
#include "tuner/campaign/occupancy.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz {
namespace {

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// A one-problem config for `arch` whose limits section is `limits` (line 4 holds `arch`).
std::string config_text(const std::string& arch, const std::string& limits) {
  return "gpu:\n"
         "  name: Test GPU\n"
         "  # the target\n"
         "  arch: " +
         arch +
         "\n"
         "  limits: {shared_memory_per_block_optin: 65536, shared_memory_per_sm: 65536, registers_per_sm: "
         "131072, "
         "sm_count: 110" +
         limits +
         "}\n"
         "problems: [{name: p, m: 64, n: 64, k: 64, precision: fp32}]\n"
         "templates: [{name: gemm_simt}]\n"
         "output: out.yaml\n";
}

/// The error parsing `text` raises, or nullopt when it parses.
std::optional<Error> parse_error(const std::string& text) {
  try {
    parse_config(text, "amd.yaml");
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

const std::string source_directory = TUNEFUZZ_SOURCE_DIR;

// ---- 1. configs name AMD targets and their wavefront width ---------------------------------------------

TEST(AmdConfig, GfxTargetsAreAcceptedAndOtherNamesAreNot) {
  for (const std::string arch : {"gfx90a", "gfx908", "gfx942", "gfx1100", "gfx1036", "gfx600"}) {
    SCOPED_TRACE(arch);
    EXPECT_TRUE(is_amd_arch(arch));
    const Config config = parse_config(config_text(arch, ", warp_size: 64"), "amd.yaml");
    EXPECT_EQ(config.gpu.arch, arch);
    EXPECT_EQ(config.gpu.arch_where.line, 4);
    EXPECT_EQ(config.gpu.arch_where.field, "gpu.arch");
  }
  for (const std::string arch :
       {"gfx", "gfx9", "gfx90", "gfx90A", "gfx90aa", "gfx12345", "gfxa0a", "gfx90a:xnack-", "gfx90a -DX=1"}) {
    SCOPED_TRACE(arch);
    EXPECT_FALSE(is_amd_arch(arch));
    const auto error = parse_error(config_text("\"" + arch + "\"", ", warp_size: 64"));
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->kind(), ErrorKind::bad_input);
    EXPECT_EQ(error->where().line, 4);
    EXPECT_TRUE(contains(error->message(), "invalid arch")) << error->what();
  }
  EXPECT_FALSE(is_amd_arch("sm_90"));
}

TEST(AmdConfig, AnAmdTargetMustStateItsWavefrontWidthAnNvidiaOneDefaultsTo32) {
  const auto missing = parse_error(config_text("gfx90a", ""));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->kind(), ErrorKind::bad_input);
  EXPECT_EQ(missing->where().field, "gpu.limits.warp_size") << missing->what();
  EXPECT_EQ(missing->where().line, 5) << missing->what();
  EXPECT_EQ(parse_config(config_text("gfx90a", ", warp_size: 64"), "amd.yaml").gpu.limits.warp_size, 64);
  EXPECT_EQ(parse_config(config_text("sm_90", ""), "nv.yaml").gpu.limits.warp_size, 32);
  EXPECT_EQ(parse_config(config_text("sm_90", ", warp_size: 32"), "nv.yaml").gpu.limits.warp_size, 32);
  const auto zero = parse_error(config_text("gfx90a", ", warp_size: 0"));
  ASSERT_TRUE(zero.has_value());
  EXPECT_EQ(zero->where().field, "gpu.limits.warp_size");
}

// ---- 2. occupancy in warps of the configured width -----------------------------------------------------

/// One GCD of an MI250X as configs/mi250x.yaml states it.
GpuLimits mi250x() {
  GpuLimits limits;
  limits.shared_memory_per_block_optin = 65536;
  limits.shared_memory_per_sm = 65536;
  limits.shared_memory_reserved_per_block = 0;
  limits.registers_per_sm = 131072;
  limits.max_registers_per_thread = 512;
  limits.max_threads_per_sm = 2048;
  limits.max_blocks_per_sm = 16;
  limits.sm_count = 110;
  limits.warp_size = 64;
  return limits;
}

struct OccupancyCase {
  int64_t threads;
  int registers;
  int64_t shared_memory;
  int64_t blocks;
  std::string limited_by;
};

TEST(AmdOccupancy, WorkedExamplesOnAnMi250xComputeUnit) {
  // Per CU: 4 SIMDs x 512 VGPRs x 64 lanes = 131072 registers, 2048 work-items, 64 KiB LDS, 16 workgroups.
  const std::vector<OccupancyCase> cases = {
      // 4 wavefronts of 224 (221 rounded to 8) VGPRs: 224 x 64 = 14336 registers each; 131072 / 14336 = 9
      // wavefronts, 2 workgroups. (Per SIMD: 512 / 224 = 2 wavefronts, 8 per CU: the same 2 workgroups.)
      {256, 221, 0, 2, "registers"},
      // 64 VGPRs: 32 wavefronts by registers = 8 workgroups of 4, and 2048 / 256 = 8 by work-items.
      {256, 64, 0, 8, "threads"},
      // One wavefront of 32 VGPRs: 64 by registers, 32 by work-items, 16 by the workgroup limit.
      {64, 32, 0, 16, "blocks"},
      // 24 KiB of LDS per workgroup: 65536 / 24576 = 2.
      {256, 64, 24576, 2, "shared_memory"},
      // 512 VGPRs (the whole file): one wavefront per SIMD, so one workgroup of 4.
      {256, 512, 0, 1, "registers"},
  };
  for (const OccupancyCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.threads) + " threads, " + std::to_string(c.registers) + " registers, " +
                 std::to_string(c.shared_memory) + " bytes");
    const Occupancy o = occupancy(c.threads, c.registers, c.shared_memory, mi250x());
    EXPECT_EQ(o.blocks_per_sm, c.blocks);
    EXPECT_EQ(o.limited_by, c.limited_by);
  }
}

TEST(AmdOccupancy, ThreadsAreCountedInWarpsOfTheConfiguredWidth) {
  // 96 threads are 3 warps of 32 but 2 wavefronts of 64 (the second half empty): 2048 / 96 = 21 blocks on
  // a 32-wide machine, 2048 / 128 = 16 on a 64-wide one. Registers, 8 per thread at a time, likewise: 9
  // registers take 16 per thread either way.
  GpuLimits limits = mi250x();
  limits.max_blocks_per_sm = 64;
  limits.warp_size = 64;
  EXPECT_EQ(occupancy(96, 9, 0, limits).blocks_per_sm, 16);
  limits.warp_size = 32;
  EXPECT_EQ(occupancy(96, 9, 0, limits).blocks_per_sm, 21);
  EXPECT_EQ(occupancy(96, 9, 0, limits).limited_by, "threads");
  // By registers: 131072 / (16 x 32) = 256 warps = 85 blocks of 3; 131072 / (16 x 64) = 128 wavefronts = 64
  // blocks of 2. Lift the other limits out of the way to see it.
  limits.max_threads_per_sm = 1 << 20;
  limits.max_blocks_per_sm = 1000;
  EXPECT_EQ(occupancy(96, 9, 0, limits).blocks_per_sm, 85);
  EXPECT_EQ(occupancy(96, 9, 0, limits).limited_by, "registers");
  limits.warp_size = 64;
  EXPECT_EQ(occupancy(96, 9, 0, limits).blocks_per_sm, 64);
  EXPECT_EQ(occupancy(96, 9, 0, limits).limited_by, "registers");
}

// ---- 3. the shipped AMD configs --------------------------------------------------------------------------

TEST(AmdConfig, ShippedConfigsLoadAndKeepPointsOfThePortableTemplate) {
  for (const auto& [file, arch, compute_units] : std::vector<std::tuple<std::string, std::string, int64_t>>{
           {"mi250x.yaml", "gfx90a", 110}, {"mi300x.yaml", "gfx942", 304}}) {
    SCOPED_TRACE(file);
    const Config config = load_config(source_directory + "/configs/" + file);
    EXPECT_EQ(config.gpu.arch, arch);
    EXPECT_EQ(config.gpu.limits.warp_size, 64);
    EXPECT_EQ(config.gpu.limits.shared_memory_per_block_optin, 64 * 1024);
    EXPECT_EQ(config.gpu.limits.shared_memory_reserved_per_block, 0);
    EXPECT_EQ(config.gpu.limits.sm_count, compute_units);
    const SpaceStage space = space_stage(config);
    EXPECT_FALSE(space.candidates.empty());
    for (const Candidate& c : space.candidates) {
      EXPECT_EQ(c.kernel_template->name, "gemm_simt");
      // Every kept point fits a workgroup's LDS on the card.
      EXPECT_LE(c.kernel_template->shared_memory_bytes(c.point),
                config.gpu.limits.shared_memory_per_block_optin);
    }
  }
}

// ---- 4. the compiler for a target --------------------------------------------------------------------

GpuSpec gpu_at_line_7(const std::string& arch) {
  GpuSpec gpu;
  gpu.arch = arch;
  gpu.arch_where = SourceLocation{"configs/x.yaml", 7, 9, "gpu.arch"};
  return gpu;
}

TEST(CompilerFor, NvidiaTargetsGetNvrtc) {
  EXPECT_EQ(compiler_for(gpu_at_line_7("sm_90"))->version().rfind("nvrtc ", 0), 0u);
}

TEST(CompilerFor, AnAmdTargetGetsHiprtcOrAClearRefusalAtGpuArch) {
  if (built_with_hip()) {
    const auto compiler = compiler_for(gpu_at_line_7("gfx90a"));
    EXPECT_EQ(compiler->version().rfind("hiprtc ", 0), 0u) << compiler->version();
    return;
  }
  try {
    compiler_for(gpu_at_line_7("gfx90a"));
    ADD_FAILURE() << "a build without HIP made a compiler for gfx90a";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_EQ(exit_code_for(e.kind()), 2);
    EXPECT_TRUE(contains(e.what(), "configs/x.yaml:7:9: gpu.arch: ")) << e.what();
    EXPECT_TRUE(contains(e.message(), "built without HIP")) << e.what();
  }
}

TEST(CompilerFor, ATargetTheToolchainCannotCompileIsRefusedBeforeAnyCompile) {
  // gfx942 (MI300X) is past what Debian 12's ROCm 5.2 knows; a newer toolchain would compile it.
  try {
    const auto compiler = compiler_for(gpu_at_line_7("gfx942"));
    EXPECT_TRUE(built_with_hip()) << "a build without HIP made a compiler for gfx942";
    std::cout << "note: " << compiler->version() << " targets gfx942\n";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_TRUE(contains(e.what(), "configs/x.yaml:7:9: gpu.arch: ")) << e.what();
    if (built_with_hip()) {
      EXPECT_TRUE(contains(e.message(), "does not support gfx942; supported: ")) << e.what();
      EXPECT_TRUE(contains(e.message(), "gfx90a")) << e.what();
    } else {
      EXPECT_TRUE(contains(e.message(), "built without HIP")) << e.what();
    }
  }
}

// ---- 5. the command line ------------------------------------------------------------------------------

struct Outcome {
  int exit_code = -1;  ///< 128 + signal when killed
  std::string output;  ///< standard output and error
};

/// Runs `command` (a program under the build's bin/ and its arguments) through the shell, with a cache of
/// its own and no other TUNEFUZZ_* setting.
Outcome run_binary(const std::string& command) {
  const std::string line =
      "env -u TUNEFUZZ_TEMPLATE_DIR TUNEFUZZ_CACHE_DIR=" + std::string(TUNEFUZZ_BINARY_DIR) +
      "/test-amd-cache " + TUNEFUZZ_BINARY_DIR + "/bin/" + command + " 2>&1";
  Outcome out;
  FILE* pipe = popen(line.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.output.append(buffer, n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

TEST(AmdCli, CompileForATargetTheToolchainCannotCompileExitsTwoAtGpuArch) {
  const Outcome run = run_binary("tune compile " + source_directory + "/configs/mi300x.yaml");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  // Line 16, column 9: `arch: gfx942` in configs/mi300x.yaml.
  EXPECT_TRUE(contains(run.output, "configs/mi300x.yaml:16:9: gpu.arch: ")) << run.output;
  if (built_with_hip()) {
    EXPECT_TRUE(contains(run.output, "does not support gfx942; supported: ")) << run.output;
    EXPECT_TRUE(contains(run.output, "gfx90a")) << run.output;
  } else {
    EXPECT_TRUE(contains(run.output, "built without HIP")) << run.output;
  }
  EXPECT_FALSE(contains(run.output, "compiling ")) << "compiling started:\n" << run.output;
}

TEST(AmdCli, SpaceForAnAmdTargetNeedsNoToolchain) {
  const Outcome run = run_binary("tune space " + source_directory + "/configs/mi300x.yaml");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "template gemm_simt")) << run.output;
  EXPECT_TRUE(contains(run.output, "candidates (kept points x element types of the problems): "))
      << run.output;
}

TEST(AmdCli, HipCheckWithoutAnAmdGpuExitsThreeBeforeCompiling) {
  if (!built_with_hip()) GTEST_SKIP() << "built without HIP: there is no tunefuzz-hip-check";
  const Outcome run = run_binary("tunefuzz-hip-check " + source_directory + "/configs/mi250x.yaml --limit 1");
  if (run.exit_code == 3) {
    EXPECT_TRUE(contains(run.output, "no usable HIP device")) << run.output;
    EXPECT_FALSE(contains(run.output, "compiling ")) << run.output;
  } else {  // a machine with an MI250X: it compiles, runs and checks one candidate per problem
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_FALSE(contains(run.output, "MISMATCH")) << run.output;
  }
  const Outcome nvidia = run_binary("tunefuzz-hip-check " + source_directory + "/configs/h100.yaml");
  EXPECT_EQ(nvidia.exit_code, 2) << nvidia.output;
  EXPECT_TRUE(contains(nvidia.output, "runs AMD targets")) << nvidia.output;
}

}  // namespace
}  // namespace tunefuzz
