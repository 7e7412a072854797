// Tests of the hiprtc backend (runtime/backend/hiprtc_compiler.cpp, code_object.cpp), built where ROCm's HIP
// was found, stated as laws: every target the toolchain lists compiles, and any other is refused before
// hiprtc sees it (hiprtc of ROCm 5.2 aborts the process on a target it does not know); the code object's
// metadata gives the resources the kernel declares (static LDS to the byte, scratch and spill counts when
// registers run out); gemm_simt compiles for gfx90a at every point of configs/mi250x.yaml through the compile
// stage and the cache, records the geometry the host computes, stops at each static_assert as under NVRTC,
// and compiles every injected bug to a different image; the cache key changes with every input the compiler
// sees. Nothing here runs on a GPU: the code objects are read on the host.
#include <gtest/gtest.h>

#include <elf.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/support/compile_checks.hpp"
#include "tests/support/space_checks.hpp"
#include "runtime/backend/code_object.hpp"
#include "runtime/backend/hiprtc_compiler.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "runtime/backend/nvrtc_compiler.hpp"
#include "tuner/campaign/stages.hpp"
#include "runtime/templates/gemm_simt.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

const HiprtcCompiler& compiler() {
  static const HiprtcCompiler instance;
  return instance;
}

const KernelSource& simt_source() {
  static const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_simt.cu");
  return source;
}

const TypePair kFp32{Precision::fp32, Precision::fp32};

CompileRequest simt_request(const Point& point, const std::string& arch = "gfx90a", int mutant = 0) {
  return CompileRequest{&simt_source(), gemm_simt_template().defines(point, kFp32, mutant), arch};
}

Point at(std::initializer_list<std::pair<const char*, int64_t>> overrides) {
  return test::point_with(gemm_simt_template(), overrides);
}

/// A source of its own, no headers.
KernelSource source_of(const std::string& text) {
  KernelSource source;
  source.file_name = "test_kernel.cu";
  source.text = text;
  return source;
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// The 16 bytes of symbol `name` in an ELF image, as four little-endian 32-bit integers; nullopt when the
/// image has no such symbol. hiprtc's code objects keep a symbol table, so `tf_kernel_meta` is there with the
/// value the kernel's constexprs gave it.
std::optional<std::array<int64_t, 4>> elf_symbol_words(const std::string& image, const std::string& name) {
  if (image.size() < sizeof(Elf64_Ehdr) || image.compare(0, 4,
                                                         "\x7f"
                                                         "ELF") != 0)
    return std::nullopt;
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof header);
  const auto section = [&](size_t index) {
    Elf64_Shdr s;
    std::memcpy(&s, image.data() + header.e_shoff + index * header.e_shentsize, sizeof s);
    return s;
  };
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symbols = section(i);
    if (symbols.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr strings = section(symbols.sh_link);
    for (size_t at = 0; at + sizeof(Elf64_Sym) <= symbols.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, image.data() + symbols.sh_offset + at, sizeof symbol);
      if (image.c_str() + strings.sh_offset + symbol.st_name != name || symbol.st_size != 16) continue;
      const Elf64_Shdr holder = section(symbol.st_shndx);
      const size_t offset = holder.sh_offset + (symbol.st_value - holder.sh_addr);
      std::array<int64_t, 4> words{};
      for (size_t w = 0; w < 4; ++w) {
        int32_t word = 0;
        std::memcpy(&word, image.data() + offset + 4 * w, 4);
        words[w] = word;
      }
      return words;
    }
  }
  return std::nullopt;
}

uint16_t elf_machine(const std::string& image) {
  Elf64_Ehdr header{};
  if (image.size() >= sizeof header) std::memcpy(&header, image.data(), sizeof header);
  return header.e_machine;
}

// ---- 1. targets --------------------------------------------------------------------------------------

TEST(HiprtcTargets, EveryListedTargetCompilesAndItsCodeObjectSaysSo) {
  const KernelSource source =
      source_of("extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.f; }");
  const std::vector<std::string>& targets = compiler().supported_targets();
  ASSERT_FALSE(targets.empty());
  EXPECT_NE(std::find(targets.begin(), targets.end(), "gfx90a"), targets.end());
  EXPECT_NE(std::find(targets.begin(), targets.end(), "gfx908"), targets.end());
  for (const std::string& arch : targets) {
    SCOPED_TRACE(arch);
    const CompiledKernel kernel = compiler().compile({&source, {}, arch});
    EXPECT_EQ(elf_machine(kernel.image), EM_AMDGPU);
    ASSERT_TRUE(kernel.resources.count("k"));
    EXPECT_GT(kernel.resources.at("k").registers, 0);
  }
  std::cout << "[ targets  ] " << compiler().version() << ": " << targets.size() << " targets\n";
}

TEST(HiprtcTargets, AnUnlistedTargetIsRefusedAndTheProcessLivesOn) {
  // gfx942 (MI300X) and gfx1100 (RDNA3) are newer than ROCm 5.2, whose hiprtc aborts on them; a newer
  // toolchain lists and compiles them.
  const KernelSource source = source_of("extern \"C\" __global__ void k(float* x) { x[0] = 1.f; }");
  const std::vector<std::string>& targets = compiler().supported_targets();
  for (const std::string arch : {"gfx942", "gfx1100", "gfx999"}) {
    SCOPED_TRACE(arch);
    if (std::find(targets.begin(), targets.end(), arch) != targets.end()) {
      EXPECT_NO_THROW(compiler().compile({&source, {}, arch}));
      continue;
    }
    for (int attempt = 0; attempt < 2; ++attempt) {  // require_target, then compile itself
      try {
        if (attempt == 0) compiler().require_target(arch);
        if (attempt == 1) compiler().compile({&source, {}, arch});
        ADD_FAILURE() << "accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::unsupported);
        EXPECT_TRUE(contains(e.message(), "does not support " + arch + "; supported: ")) << e.what();
        EXPECT_TRUE(contains(e.message(), "ROCm")) << e.what();
      }
    }
  }
}

TEST(HiprtcTargets, MalformedTargetsAreBadInput) {
  const KernelSource source = source_of("extern \"C\" __global__ void k() {}");
  for (const std::string arch :
       {"", "gfx", "sm_90", "gfx90a -DX=1", "--offload-arch=gfx90a", "gfx90a:xnack-"}) {
    SCOPED_TRACE(arch);
    try {
      compiler().compile({&source, {}, arch});
      ADD_FAILURE() << "compiled";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
    }
  }
}

// ---- 2. resources from the code object's metadata ------------------------------------------------------

TEST(CodeObjectResources, StaticLdsIsCountedToTheByte) {
  for (int floats : {64, 1000, 4096}) {
    SCOPED_TRACE(floats);
    const KernelSource source = source_of(
        "extern \"C\" __global__ void lds(float* x) {\n"
        "  __shared__ float s[FLOATS];\n"
        "  for (int i = threadIdx.x; i < FLOATS; i += blockDim.x) s[i] = x[i];\n"
        "  __syncthreads();\n"
        "  x[threadIdx.x] = s[(threadIdx.x * 7) % FLOATS];\n"
        "}\n");
    const CompiledKernel kernel = compiler().compile({&source, {{"FLOATS", floats}}, "gfx90a"});
    ASSERT_TRUE(kernel.resources.count("lds"));
    const KernelResources& r = kernel.resources.at("lds");
    EXPECT_EQ(r.static_shared_bytes, 4 * floats);
    EXPECT_GT(r.registers, 0);
    EXPECT_GT(r.scalar_registers, 0);
    EXPECT_FALSE(r.spills());
    EXPECT_EQ(r.stack_frame_bytes, 0);
  }
}

TEST(CodeObjectResources, RegistersThatRunOutSpillAndAreCounted) {
  // LIVE values per thread, all live at once, in a kernel that may run 1024 work-items per workgroup: that
  // leaves 512 / 4 = 128 VGPRs per lane on gfx90a. 64 fit, 200 do not.
  const KernelSource source = source_of(
      "extern \"C\" __global__ void __launch_bounds__(1024) pressure(float* x) {\n"
      "  float v[LIVE];\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < LIVE; ++i) v[i] = x[i * 1024 + threadIdx.x];\n"
      "#pragma unroll\n"
      "  for (int r = 0; r < 4; ++r)\n"
      "#pragma unroll\n"
      "    for (int i = 0; i < LIVE; ++i) v[i] = v[i] * v[(i * 7 + r) % LIVE] + x[r];\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < LIVE; ++i) x[i * 1024 + threadIdx.x] = v[i];\n"
      "}\n");
  const KernelResources fits =
      compiler().compile({&source, {{"LIVE", 32}}, "gfx90a"}).resources.at("pressure");
  EXPECT_FALSE(fits.spills());
  EXPECT_EQ(fits.stack_frame_bytes, 0);
  EXPECT_LE(fits.registers, 128);
  const KernelResources spills =
      compiler().compile({&source, {{"LIVE", 200}}, "gfx90a"}).resources.at("pressure");
  EXPECT_TRUE(spills.spills());
  EXPECT_GT(spills.spilled_registers, 0);
  EXPECT_GT(spills.stack_frame_bytes, 0);
  EXPECT_EQ(spills.spill_store_bytes, 0);  // NVIDIA's byte counts stay empty
  EXPECT_LE(spills.registers, 128);
}

TEST(CodeObjectResources, WhatIsNotACodeObjectIsACompileErrorNotACrash) {
  for (const std::string& image : {std::string(), std::string("not an ELF file"),
                                   std::string("\x7f"
                                               "ELF",
                                               4)}) {
    EXPECT_THROW(read_code_object_resources(image), Error);
  }
}

// ---- 3. gemm_simt under hiprtc ------------------------------------------------------------------------

TEST(HiprtcGemmSimt, DefaultPointCompilesWithItsResourcesAndNoAssembly) {
  const CompileRequest request = simt_request(gemm_simt_template().default_point());
  const CompiledKernel kernel = compiler().compile(request);
  EXPECT_EQ(kernel.key, compiler().key(request));
  EXPECT_FALSE(kernel.from_cache);
  EXPECT_EQ(elf_machine(kernel.image), EM_AMDGPU);
  EXPECT_TRUE(kernel.ptx.empty());
  EXPECT_EQ(kernel.log.find('\0'), std::string::npos);
  ASSERT_TRUE(kernel.resources.count("tf_gemm_rr"));
  const KernelResources& r = kernel.resources.at("tf_gemm_rr");
  EXPECT_GT(r.registers, 64);  // 64 accumulators alone
  EXPECT_LE(r.registers, 512);
  EXPECT_GT(r.scalar_registers, 0);
  EXPECT_EQ(r.static_shared_bytes, 0);  // the stages are dynamic LDS
  EXPECT_FALSE(r.spills());
  EXPECT_TRUE(kernel.resources.count("tf_scale_c")) << "the quick return of K = 0 (scale_c.h)";
}

TEST(HiprtcGemmSimt, TheKernelsGeometryRecordIsTheHostsFormulas) {
  const KernelTemplate& t = gemm_simt_template();
  const std::vector<Point> points = {
      at({}),
      at({{"BM", 64}, {"BN", 128}, {"TM", 4}, {"STAGES", 3}}),
      at({{"BM", 128}, {"BN", 64}, {"BK", 16}, {"TN", 4}, {"VEC", 1}}),
  };
  for (const Point& point : points) {
    SCOPED_TRACE(point.str());
    const auto meta = elf_symbol_words(compiler().compile(simt_request(point)).image, "tf_kernel_meta");
    ASSERT_TRUE(meta.has_value()) << "no 16-byte tf_kernel_meta symbol in the code object";
    EXPECT_EQ((*meta)[0], t.threads_per_block(point));
    EXPECT_EQ((*meta)[1], t.shared_memory_bytes(point));
    EXPECT_EQ((*meta)[2], point["BM"]);
    EXPECT_EQ((*meta)[3], point["BN"]);
  }
}

TEST(HiprtcGemmSimt, ImpossibleCombinationsStopAtTheirOwnStaticAssert) {
  const std::vector<std::string> messages = test::static_assert_messages(simt_source().text);
  const auto message_with = [&](const std::string& fragment) {
    for (const std::string& m : messages)
      if (contains(m, fragment)) return m;
    throw Error(ErrorKind::internal, "gemm_simt.cu has no static_assert saying " + fragment);
  };
  EXPECT_TRUE(test::stops_at_static_assert(compiler(), simt_request(at({{"TM", 6}, {"BM", 96}})), messages,
                                           message_with("multiples of 4")));
  EXPECT_TRUE(test::stops_at_static_assert(compiler(), simt_request(at({{"STAGES", 1}})), messages,
                                           message_with("STAGES must be at least 2")));
  EXPECT_TRUE(test::stops_at_static_assert(compiler(), simt_request(at({{"VEC", 8}})), messages,
                                           message_with("VEC must be 1, 2, 4 or 8 elements")));
}

TEST(HiprtcGemmSimt, EveryInjectedBugCompilesToADifferentImage) {
  const Point point = gemm_simt_template().default_point();
  std::set<std::string> images = {compiler().compile(simt_request(point)).image};
  for (size_t mutant = 1; mutant < gemm_simt_mutant_names().size(); ++mutant) {
    SCOPED_TRACE(gemm_simt_mutant_names()[mutant]);
    const CompiledKernel kernel = compiler().compile(simt_request(point, "gfx90a", static_cast<int>(mutant)));
    EXPECT_TRUE(images.insert(kernel.image).second) << "same code object as another mutant or the original";
  }
}

TEST(HiprtcGemmSimt, TheWholeMi250xSpaceCompilesThroughTheStageAndTheCache) {
  const Config config = load_config(TUNEFUZZ_SOURCE_DIR "/configs/mi250x.yaml");
  const SpaceStage space = space_stage(config);
  ASSERT_FALSE(space.candidates.empty());
  const fs::path directory =
      fs::temp_directory_path() / ("tunefuzz-test-hip-cache-" + std::to_string(getpid()));
  fs::remove_all(directory);
  const KernelCache cache(directory);
  const CompileOptions options{TUNEFUZZ_SOURCE_DIR "/templates", 0};
  const std::vector<CompiledCandidate> cold =
      compile_stage(space.candidates, config, compiler(), cache, options);
  int64_t kept = 0;
  for (const CompiledCandidate& c : cold) {
    SCOPED_TRACE(c.candidate.id());
    EXPECT_NE(c.status, CompileStatus::compile_failed) << c.message;
    EXPECT_NE(c.status, CompileStatus::slow_path) << c.message;  // no PTX to look for on AMD
    EXPECT_GT(c.resources.registers, 0);
    EXPECT_EQ(c.status == CompileStatus::spills, c.resources.spills());
    if (c.status == CompileStatus::compiled) {
      ++kept;
      EXPECT_GE(c.occupancy.blocks_per_sm, 1);
      EXPECT_EQ(elf_machine(read_whole_file(c.image)), EM_AMDGPU);
    }
  }
  EXPECT_GT(kept, static_cast<int64_t>(cold.size()) / 2);
  const std::vector<CompiledCandidate> warm =
      compile_stage(space.candidates, config, compiler(), cache, options);
  ASSERT_EQ(warm.size(), cold.size());
  for (size_t i = 0; i < warm.size(); ++i) {
    EXPECT_TRUE(warm[i].from_cache) << warm[i].candidate.id();
    EXPECT_EQ(warm[i].status, cold[i].status) << warm[i].candidate.id();
    EXPECT_EQ(warm[i].resources.registers, cold[i].resources.registers);
    EXPECT_EQ(warm[i].resources.scalar_registers, cold[i].resources.scalar_registers);
    EXPECT_EQ(warm[i].resources.spilled_registers, cold[i].resources.spilled_registers);
  }
  fs::remove_all(directory);
  std::cout << "[ mi250x   ] " << cold.size() << " candidates, " << kept << " kept with "
            << compiler().version() << "\n";
}

// ---- 4. the cache key -----------------------------------------------------------------------------------

TEST(HiprtcKey, ChangesWithEveryInputTheCompilerSeesAndWithTheBackend) {
  const Point point = gemm_simt_template().default_point();
  const std::string base = compiler().key(simt_request(point));
  EXPECT_EQ(base, compiler().key(simt_request(point)));
  EXPECT_NE(base, compiler().key(simt_request(point, "gfx908")));
  EXPECT_NE(base, compiler().key(simt_request(at({{"BK", 16}}))));
  EXPECT_NE(base, compiler().key(simt_request(point, "gfx90a", 1)));
  KernelSource edited = simt_source();
  edited.headers.back().second += "\n// one more line\n";
  EXPECT_NE(base, compiler().key({&edited, gemm_simt_template().defines(point, kFp32), "gfx90a"}));
  // The same request under NVRTC is another entry, never a hit for this one.
  const CompileRequest same_for_nvrtc{&simt_source(), gemm_simt_template().defines(point, kFp32), "gfx90a"};
  EXPECT_NE(base, NvrtcCompiler().key(same_for_nvrtc));
}

TEST(HiprtcKey, ADefineThatIsNotAnIdentifierNeverReachesHiprtc) {
  for (const std::string name : {"BM -I/etc", "X=1 --offload-arch=gfx942", "lower"}) {
    try {
      compiler().compile({&simt_source(), {{name, 1}}, "gfx90a"});
      ADD_FAILURE() << "compiled with a define named " << name;
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "refusing define")) << e.what();
    }
  }
}

TEST(HiprtcCache, AmdResourcesSurviveTheCacheAndAnEntryWithoutThemIsRebuilt) {
  const fs::path directory =
      fs::temp_directory_path() / ("tunefuzz-test-hip-entry-" + std::to_string(getpid()));
  fs::remove_all(directory);
  const KernelCache cache(directory);
  CompiledKernel kernel;
  kernel.key = std::string(64, 'b');
  kernel.image =
      "\x7f"
      "ELF code object";
  kernel.resources["k"] = KernelResources{96, 128, 0, 0, 4096, 38, 17};
  cache.store(kernel);
  const auto loaded = cache.load(kernel.key, [](const std::string& why) { ADD_FAILURE() << why; });
  ASSERT_TRUE(loaded.has_value());
  const KernelResources& r = loaded->resources.at("k");
  EXPECT_EQ(r.registers, 96);
  EXPECT_EQ(r.stack_frame_bytes, 128);
  EXPECT_EQ(r.static_shared_bytes, 4096);
  EXPECT_EQ(r.scalar_registers, 38);
  EXPECT_EQ(r.spilled_registers, 17);
  EXPECT_TRUE(r.spills());
  // An entry written before the AMD fields existed (the same metadata without them) no longer matches the
  // checksum its metadata carries: it is reported as damaged and compiled again, never read with fields
  // missing.
  const fs::path meta = directory / (kernel.key + ".yaml");
  std::string text = read_whole_file(meta);
  for (const std::string field : {"scalar_registers", "spilled_registers"}) {
    const size_t at = text.find("    " + field);
    ASSERT_NE(at, std::string::npos) << text;
    text.erase(at, text.find('\n', at) + 1 - at);
  }
  write_file_atomically(meta, text);
  std::string reported;
  const auto older = cache.load(kernel.key, [&](const std::string& why) { reported = why; });
  EXPECT_FALSE(older.has_value());
  EXPECT_FALSE(reported.empty());
  fs::remove_all(directory);
}

}  // namespace
}  // namespace tunefuzz
