// Tests of the compile half of the backend (tuner/backend) on templates/gemm_mma.cu, stated as laws: every
// supported type pair compiles and uses the instructions the template promises; the shape the host computes
// (threads, shared memory, tile) is the shape the kernel records in `tf_kernel_meta`; every injected bug
// compiles; every impossible combination stops at its own static_assert; the cache key changes with every
// input the compiler sees and with nothing else; a cache entry comes back exactly as stored, and a damaged
// one is reported and treated as a miss. NVRTC needs no GPU, so all of this runs anywhere.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/compile_checks.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "runtime/backend/nvrtc_compiler.hpp"
#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"
#include "runtime/templates/gemm_mma.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;
using test::kernel_meta;
using test::static_assert_messages;

// ---- helpers ------------------------------------------------------------------------------------------

const KernelSource& gemm_source() {
  static const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_mma.cu");
  return source;
}

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

/// The template's default point with `overrides` applied.
Point at(std::initializer_list<std::pair<const char*, int64_t>> overrides) {
  std::vector<std::pair<std::string, int64_t>> values = gemm_mma_template().default_point().values();
  for (const auto& [name, value] : overrides) {
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
    if (it == values.end()) throw Error(ErrorKind::internal, std::string("test names no parameter ") + name);
    it->second = value;
  }
  return Point(std::move(values));
}

CompileRequest request_for(const Point& point, TypePair types = {}, int mutant = 0,
                           const KernelSource& source = gemm_source(), const std::string& arch = "sm_90") {
  return CompileRequest{&source, gemm_mma_template().defines(point, types, mutant), arch};
}

/// Compiles each distinct request once per test run (several tests look at the same kernels).
const CompiledKernel& compiled(const Point& point, TypePair types = {}, int mutant = 0) {
  static std::map<std::string, CompiledKernel> memo;
  const CompileRequest request = request_for(point, types, mutant);
  const std::string key = compiler().key(request);
  auto it = memo.find(key);
  if (it == memo.end()) it = memo.emplace(key, compiler().compile(request)).first;
  return it->second;
}

/// An H100's limits, to check the host's verdict on the points the kernel refuses.
GpuLimits h100() {
  GpuLimits limits;
  limits.shared_memory_per_block_optin = 232448;
  limits.shared_memory_per_sm = 233472;
  limits.registers_per_sm = 65536;
  return limits;
}

std::string type_name(TypePair types) {
  return std::string(to_string(types.input)) + "-" + to_string(types.output);
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// ---- 1. every supported type pair compiles and uses the promised instructions -----------------------------

// The three declarations of gemm_mma.cu: fp16/bf16, tf32 and fp8 inputs.
const std::vector<const KernelTemplate*>& mma_family() {
  static const std::vector<const KernelTemplate*> family = {&gemm_mma_template(), &gemm_mma_tf32_template(),
                                                            &gemm_mma_fp8_template()};
  return family;
}

/// The operand type as the mma instruction names it.
std::string mma_type(Precision p) {
  switch (p) {
    case Precision::bf16:
      return "bf16";
    case Precision::fp16:
      return "f16";
    case Precision::tf32:
      return "tf32";
    case Precision::fp8e4m3:
      return "e4m3";
    case Precision::fp8e5m2:
      return "e5m2";
    case Precision::fp32:
      break;
  }
  return "?";
}

TEST(CompileGemmMma, DefaultPointOfEveryTypePairCompilesForSm90) {
  for (const KernelTemplate* t : mma_family()) {
    SCOPED_TRACE(t->name);
    const Point point = t->default_point();
    ASSERT_FALSE(t->supported_types.empty());
    for (const TypePair& types : t->supported_types) {
      SCOPED_TRACE(type_name(types));
      const CompiledKernel& kernel = compiled(point, types);
      EXPECT_FALSE(kernel.image.empty());
      EXPECT_FALSE(kernel.ptx.empty());
      EXPECT_FALSE(kernel.from_cache);
      EXPECT_EQ(kernel.key, compiler().key(request_for(point, types)));
      EXPECT_TRUE(contains(kernel.ptx, ".target sm_90"));
      for (const std::string& entry : t->entry_points) {
        SCOPED_TRACE(entry);
        ASSERT_TRUE(kernel.resources.count(entry)) << kernel.log;
        EXPECT_GT(kernel.resources.at(entry).registers, 0);
        EXPECT_FALSE(kernel.resources.at(entry).spills()) << kernel.log;
        EXPECT_TRUE(contains(kernel.ptx, ".entry " + entry));
      }
      // fp8 exports the rc form only: the other storage orders would need a byte transpose.
      EXPECT_EQ(contains(kernel.ptx, ".entry tf_gemm_rr"), t->layouts.size() == 4);
      for (const std::string& instruction : t->expected_instructions(point))
        EXPECT_TRUE(contains(kernel.ptx, instruction)) << "missing " << instruction;
      // The element types reach the kernel: the mma reads the input type, the epilogue writes the output
      // type.
      const std::string in = mma_type(types.input);
      EXPECT_TRUE(contains(kernel.ptx, ".row.col.f32." + in + "." + in + ".f32")) << in;
      EXPECT_EQ(contains(kernel.ptx, "cvt.rn.bf16x2.f32"), types.output == Precision::bf16);
      EXPECT_EQ(contains(kernel.ptx, "cvt.rn.f16x2.f32"), types.output == Precision::fp16);
      EXPECT_EQ(contains(kernel.ptx, "cvt.rn.satfinite.e4m3x2.f32"), types.output == Precision::fp8e4m3);
      EXPECT_EQ(contains(kernel.ptx, "cvt.rn.satfinite.e5m2x2.f32"), types.output == Precision::fp8e5m2);
    }
  }
}

// tf32 reads column-major A and row-major B with scalar shared-memory loads (ldmatrix transposes 16-bit
// elements only), so its cr form has no ldmatrix.trans at all, and the 16-bit rr form does.
TEST(CompileGemmMma, Tf32TransposedOperandsUseScalarLoads) {
  const std::string tf32 =
      compiled(gemm_mma_tf32_template().default_point(), {Precision::tf32, Precision::fp32}).ptx;
  const std::string bf16 = compiled(gemm_mma_template().default_point(), {}).ptx;
  EXPECT_FALSE(contains(tf32, "ldmatrix.sync.aligned.m8n8.x4.trans"));
  EXPECT_TRUE(contains(bf16, "ldmatrix.sync.aligned.m8n8.x4.trans"));
}

TEST(CompileGemmMma, ExpectedInstructionsFollowVec) {
  // cp.async is promised exactly when VEC > 1, and the PTX agrees: 16-byte .cg copies at VEC=8, .ca below,
  // where .cg stays for an operand aligned for whole 16-byte chunks (takes_chunks).
  const KernelTemplate& t = gemm_mma_template();
  for (int64_t vec : {1, 2, 4, 8}) {
    SCOPED_TRACE("VEC=" + std::to_string(vec));
    const Point point = at({{"VEC", vec}});
    const CompiledKernel& kernel = compiled(point);
    const std::vector<std::string> expected = t.expected_instructions(point);
    for (const std::string& instruction : expected)
      EXPECT_TRUE(contains(kernel.ptx, instruction)) << instruction;
    const bool promises_cp_async = std::find(expected.begin(), expected.end(), "cp.async") != expected.end();
    EXPECT_EQ(promises_cp_async, vec > 1);
    EXPECT_EQ(contains(kernel.ptx, "cp.async"), vec > 1);
    EXPECT_EQ(contains(kernel.ptx, "cp.async.cg.shared.global"), vec > 1);
    EXPECT_EQ(contains(kernel.ptx, "cp.async.ca.shared.global"), vec == 2 || vec == 4);
  }
}

TEST(CompileGemmMma, Sm80TargetIsHonoured) {
  const CompiledKernel kernel = compiler().compile(request_for(at({}), {}, 0, gemm_source(), "sm_80"));
  EXPECT_TRUE(contains(kernel.ptx, ".target sm_80"));
  EXPECT_FALSE(kernel.image.empty());
}

TEST(CompileGemmMma, MalformedArchIsBadInput) {
  for (const std::string arch : {"sm90", "sm_9", "compute_90", "sm_90 -DBM=1", ""}) {
    SCOPED_TRACE(arch);
    try {
      compiler().compile(request_for(at({}), {}, 0, gemm_source(), arch));
      ADD_FAILURE() << "compiled";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    }
  }
}

// ---- 2. the host's shape is the kernel's shape ----------------------------------------------------------

TEST(KernelMeta, ParserReadsBothPtxForms) {
  // Trailing zero bytes omitted, as NVRTC writes it.
  EXPECT_EQ(kernel_meta(
                ".const .align 4 .b8 tf_kernel_meta[16] = {128, 0, 0, 0, 0, 192, 0, 0, 128, 0, 0, 0, 128};"),
            (std::array<int64_t, 4>{128, 49152, 128, 128}));
  EXPECT_EQ(kernel_meta(".const .align 4 .u32 tf_kernel_meta[4] = {256, 196608, 256, 128};"),
            (std::array<int64_t, 4>{256, 196608, 256, 128}));
  EXPECT_EQ(kernel_meta(".const .align 4 .b32 tf_kernel_meta[4];"), (std::array<int64_t, 4>{0, 0, 0, 0}));
  EXPECT_EQ(kernel_meta(".const .align 4 .b8 other[16];"), std::nullopt);
}

TEST(KernelMeta, HostFormulasEqualTheKernelsOwnRecord) {
  // tf_kernel_meta = {threads, shared memory bytes, BM, BN}, computed by the kernel's own constexprs.
  const KernelTemplate& t = gemm_mma_template();
  const std::vector<Point> points = {
      at({}),                                        // defaults
      at({{"SWIZZLE", 0}}),                          // padded rows
      at({{"BM", 256}, {"BK", 64}, {"STAGES", 4}}),  // 196608 bytes
      at({{"BM", 64}, {"BN", 256}, {"BK", 16}, {"STAGES", 2}, {"WM", 32}, {"SWIZZLE", 0}}),
      at({{"BM", 192}, {"BN", 96}, {"WN", 32}, {"SWIZZLE", 0}}),  // 288 threads
      at({{"BN", 64}, {"WM", 32}, {"WN", 32}, {"STAGES", 6}}),
      at({{"BM", 64}, {"BN", 64}, {"WM", 32}, {"WN", 32}, {"BK", 128}, {"STAGES", 2}, {"VEC", 2}}),
  };
  std::set<int64_t> distinct_shared_memory;
  for (const Point& point : points) {
    SCOPED_TRACE(point.str());
    const CompiledKernel& kernel = compiled(point);
    const auto meta = kernel_meta(kernel.ptx);
    ASSERT_TRUE(meta.has_value()) << "no tf_kernel_meta initialiser in the PTX";
    EXPECT_EQ((*meta)[0], t.threads_per_block(point));
    EXPECT_EQ((*meta)[1], t.shared_memory_bytes(point));
    EXPECT_EQ((*meta)[2], point["BM"]);
    EXPECT_EQ((*meta)[3], point["BN"]);
    distinct_shared_memory.insert((*meta)[1]);
  }
  EXPECT_EQ(distinct_shared_memory.size(), points.size());  // the points really differ in shape
}

// ---- 3. every injected bug compiles, and is its own cache entry ----------------------------------------

TEST(Mutants, EveryMutantCompilesAndHasItsOwnKey) {
  const std::vector<std::string>& names = gemm_mma_mutant_names();
  ASSERT_EQ(names.size(), 18u);  // 0 = none, 1..17 = TF_MUTANT_* in templates/gemm_mma.cu
  std::set<std::string> keys;
  for (int code = 1; code < static_cast<int>(names.size()); ++code) {
    SCOPED_TRACE(std::to_string(code) + " " + names[code]);
    // The 16-byte copies of an aligned operand exist only below 16-byte VEC: that bug is injected at VEC=2,
    // and at the default point its image is the original's (fuzz mutants reports such a mutant as same_code).
    const bool narrow = names[code] == "chunks_ignore_extent";
    if (narrow) EXPECT_EQ(compiled(at({}), {}, code).ptx, compiled(at({})).ptx);
    const Point point = narrow ? at({{"VEC", 2}}) : at({});
    const CompiledKernel& original = compiled(point);
    keys.insert(original.key);
    EXPECT_TRUE(contains(
        gemm_source().text, "#define TF_MUTANT_" + [&] {
          std::string upper = names[code];
          for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          return upper;
        }() + " " + std::to_string(code)));
    const std::vector<Define> defines = gemm_mma_template().defines(point, {}, code);
    ASSERT_FALSE(defines.empty());
    EXPECT_EQ(defines.back().name, "TF_MUTANT");
    EXPECT_EQ(defines.back().value, code);
    const CompiledKernel& mutant = compiled(point, {}, code);
    EXPECT_FALSE(mutant.image.empty());
    EXPECT_NE(mutant.ptx, original.ptx) << "the mutant changes nothing in the code";
    EXPECT_TRUE(keys.insert(mutant.key).second) << "key shared with another mutant or the original";
  }
  // Mutant 0 is the original: no TF_MUTANT define at all.
  for (const Define& d : gemm_mma_template().defines(at({}), {}, 0)) EXPECT_NE(d.name, "TF_MUTANT");
}

// ---- 4. impossible combinations stop at their own static_assert ---------------------------------------

struct Impossible {
  std::vector<std::pair<const char*, int64_t>> overrides;  ///< tunables changed from the defaults
  TypePair types;
  std::string message;     ///< the static_assert that must fire (and no other)
  std::string constraint;  ///< the host rule that prunes the same point; empty for type codes
};

TEST(StaticAsserts, EachImpossibleCombinationFailsWithItsOwnMessage) {
  const std::vector<Impossible> cases = {
      {{{"BM", 96}, {"SWIZZLE", 0}}, {}, "the warp tile WMxWN must divide the CTA tile BMxBN", "warp_tiling"},
      {{{"BN", 96}, {"SWIZZLE", 0}}, {}, "the warp tile WMxWN must divide the CTA tile BMxBN", "warp_tiling"},
      // 96 / 24 = 4 warps along M; 24 % 16 = 8
      {{{"BM", 96}, {"WM", 24}, {"SWIZZLE", 0}},
       {},
       "WM must be a multiple of 16 (mma.sync m16 fragments)",
       "mma_shape"},
      // 128 / 8 = 16 warps along N, (128/64)*16*32 = 1024 threads: only WN's rule breaks
      {{{"WN", 8}},
       {},
       "WN must be a multiple of 16 (ldmatrix.x4.trans loads two n8 fragments)",
       "mma_shape"},
      {{{"BK", 24}, {"SWIZZLE", 0}}, {}, "BK must be a multiple of 16 (mma.sync k16 steps)", "mma_shape"},
      // (128/16) * (128/16) * 32 = 2048 threads
      {{{"WM", 16}, {"WN", 16}}, {}, "more than 1024 threads per CTA: (BM/WM)*(BN/WN)*32 > 1024", "threads"},
      {{{"STAGES", 1}}, {}, "STAGES must be at least 2 (one stage loading while one is consumed)", "stages"},
      {{{"VEC", 3}}, {}, "VEC must be 1, 2, 4, 8 or 16 elements", "vector_width"},
      {{{"GROUP_M", 0}}, {}, "GROUP_M must be at least 1", "positive"},
      {{{"BK", 48}},
       {},
       "SWIZZLE=1 needs power-of-two BM, BN and BK so the XOR stays within a row",
       "swizzle_power_of_two"},
      // (128/64)*(96/32)*32 = 192 threads
      {{{"BN", 96}, {"WN", 32}},
       {},
       "SWIZZLE=1 needs power-of-two BM, BN and BK so the XOR stays within a row",
       "swizzle_power_of_two"},
      // BM = 96 = 3*32: (96/32)*(128/64)*32 = 192 threads
      {{{"BM", 96}, {"WM", 32}},
       {},
       "SWIZZLE=1 needs power-of-two BM, BN and BK so the XOR stays within a row",
       "swizzle_power_of_two"},
      {{}, {Precision::fp32, Precision::bf16}, "TF_INPUT must be fp16, bf16, tf32, fp8e4m3 or fp8e5m2", ""},
      // 16 bf16 elements are 32 bytes
      {{{"VEC", 16}}, {}, "VEC elements must fit one 16-byte load", "vector_width"},
      // fp8's mma steps K by 32
      {{{"BK", 16}, {"VEC", 16}, {"WN", 32}},
       {Precision::fp8e4m3, Precision::bf16},
       "BK must be a multiple of the mma's K (32 for fp8)",
       "mma_shape"},
      {{{"LAYOUTS", 16}}, {}, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC", "layouts"},
  };
  const std::vector<std::string> all_messages = static_assert_messages(gemm_source().text);
  ASSERT_EQ(all_messages.size(), 14u);
  std::set<std::string> fired;
  for (const Impossible& c : cases) {
    Point point = at({});
    std::vector<std::pair<std::string, int64_t>> values = point.values();
    for (const auto& [name, value] : c.overrides)
      for (auto& [key, v] : values)
        if (key == name) v = value;
    point = Point(values);
    SCOPED_TRACE(point.str() + " " + type_name(c.types));
    ASSERT_NE(std::find(all_messages.begin(), all_messages.end(), c.message), all_messages.end())
        << "no static_assert says '" << c.message << "'";
    try {
      compiler().compile(request_for(point, c.types));
      ADD_FAILURE() << "compiled";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::compile);
      EXPECT_TRUE(contains(error.detail(), "static assertion failed"));
      for (const std::string& message : all_messages)
        EXPECT_EQ(contains(error.detail(), message), message == c.message) << message << "\n"
                                                                           << error.detail();
    }
    fired.insert(c.message);
    // The host never sends such a point to the compiler: the rule of the same meaning prunes it.
    const KernelTemplate& family = is_fp8(c.types.input) ? gemm_mma_fp8_template() : gemm_mma_template();
    for (const Constraint& rule : family.constraints) {
      if (rule.name == c.constraint) {
        EXPECT_FALSE(rule.holds(point, h100())) << rule.name;
      }
    }
  }
  // The output-type rule as well (no supported pair breaks it, so it takes a raw define): fp8 C with bf16
  // inputs (fp8 C is offered in the input type only).
  std::vector<Define> defines = gemm_mma_template().defines(at({}), {});
  for (Define& d : defines)
    if (d.name == "TF_OUTPUT") d.value = template_code(Precision::fp8e4m3);
  const std::string output_rule = "TF_OUTPUT must be fp16, bf16, fp32 or (fp8 inputs) the input type";
  try {
    compiler().compile(CompileRequest{&gemm_source(), defines, "sm_90"});
    ADD_FAILURE() << "bf16 in, fp8e4m3 out compiled";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::compile);
    EXPECT_TRUE(contains(error.detail(), output_rule)) << error.detail();
  }
  fired.insert(output_rule);
  EXPECT_EQ(fired, std::set<std::string>(all_messages.begin(), all_messages.end()));  // every rule exercised
}

// ---- 5. ptxas resource reports ------------------------------------------------------------------------

TEST(PtxasResources, ReadsEveryFieldOfTwoKernels) {
  const std::string log =
      "ptxas info    : 76 bytes gmem\n"
      "ptxas info    : Compiling entry function 'tf_pack' for 'sm_90'\n"
      "ptxas info    : Function properties for tf_pack\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 31 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 18.584 ms\n"
      "ptxas info    : Compiling entry function 'tf_gemm' for 'sm_90'\n"
      "ptxas info    : Function properties for tf_gemm\n"
      "ptxas         .     24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n"
      "ptxas info    : Compile time = 255.548 ms\n";
  const auto resources = parse_ptxas_resources(log);
  ASSERT_EQ(resources.size(), 2u);
  const KernelResources& pack = resources.at("tf_pack");
  EXPECT_EQ(pack.registers, 31);
  EXPECT_EQ(pack.stack_frame_bytes, 0);
  EXPECT_EQ(pack.spill_store_bytes, 0);
  EXPECT_EQ(pack.spill_load_bytes, 0);
  EXPECT_EQ(pack.static_shared_bytes, 0);
  EXPECT_FALSE(pack.spills());
  const KernelResources& gemm = resources.at("tf_gemm");
  EXPECT_EQ(gemm.registers, 255);
  EXPECT_EQ(gemm.stack_frame_bytes, 24);
  EXPECT_EQ(gemm.spill_store_bytes, 16);
  EXPECT_EQ(gemm.spill_load_bytes, 8);
  EXPECT_EQ(gemm.static_shared_bytes, 1024);
  EXPECT_TRUE(gemm.spills());
}

TEST(PtxasResources, EmptyLogHasNoKernels) {
  EXPECT_TRUE(parse_ptxas_resources("").empty());
}

TEST(PtxasResources, RealLogAgreesWithTheParsedResources) {
  const CompiledKernel& kernel = compiled(at({}));
  EXPECT_TRUE(contains(kernel.log,
                       "Used " + std::to_string(kernel.resources.at("tf_gemm_rr").registers) + " registers"));
  EXPECT_EQ(parse_ptxas_resources(kernel.log).size(), kernel.resources.size());
}

// ---- 6. the cache key ----------------------------------------------------------------------------------

TEST(CacheKey, ChangesWithEveryInputTheCompilerSees) {
  const Point point = at({});
  const std::string base = compiler().key(request_for(point));

  // Identical requests built separately, from a separately loaded source: equal keys.
  const KernelSource reloaded = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_mma.cu");
  EXPECT_EQ(compiler().key(request_for(at({}), {}, 0, reloaded)), base);
  EXPECT_EQ(reloaded.hash(), gemm_source().hash());

  // (a) one character of the source
  KernelSource source_changed = gemm_source();
  source_changed.text.back() = source_changed.text.back() == ' ' ? '\t' : ' ';
  EXPECT_NE(compiler().key(request_for(point, {}, 0, source_changed)), base);
  EXPECT_NE(source_changed.hash(), gemm_source().hash());

  // (b) one character of a header
  ASSERT_FALSE(gemm_source().headers.empty());
  for (size_t h = 0; h < gemm_source().headers.size(); ++h) {
    SCOPED_TRACE(gemm_source().headers[h].first);
    KernelSource header_changed = gemm_source();
    header_changed.headers[h].second += "\n";
    EXPECT_NE(compiler().key(request_for(point, {}, 0, header_changed)), base);
    EXPECT_NE(header_changed.hash(), gemm_source().hash());
  }

  // (c) a define's value, each compile-time parameter in turn
  for (const ParameterDecl& decl : gemm_mma_template().parameters) {
    if (!decl.compile_time) continue;
    SCOPED_TRACE(decl.name);
    std::vector<std::pair<std::string, int64_t>> values = point.values();
    for (auto& [name, value] : values)
      if (name == decl.name) value += 1;
    EXPECT_NE(compiler().key(request_for(Point(values))), base);
  }
  // ... the element types and the mutant, which are defines too
  EXPECT_NE(compiler().key(request_for(point, {Precision::bf16, Precision::fp32})), base);
  EXPECT_NE(compiler().key(request_for(point, {Precision::fp16, Precision::bf16})), base);
  EXPECT_NE(compiler().key(request_for(point, {}, 1)), base);

  // (d) the arch
  EXPECT_NE(compiler().key(request_for(point, {}, 0, gemm_source(), "sm_80")), base);
  EXPECT_NE(compiler().key(request_for(point, {}, 0, gemm_source(), "sm_90a")), base);
}

TEST(CacheKey, PackTwinsShareOneCompiledImage) {
  // PACK is read by the launcher only: it is no define, so PACK=0 and PACK=1 compile to one cache entry.
  const KernelTemplate& t = gemm_mma_template();
  ASSERT_NE(t.parameter("PACK"), nullptr);
  EXPECT_FALSE(t.parameter("PACK")->compile_time);
  for (const Define& d : t.defines(at({{"PACK", 1}}), {})) EXPECT_NE(d.name, "PACK");
  const Point unpacked = at({{"PACK", 0}});
  const Point packed = at({{"PACK", 1}});
  for (const TypePair& types : t.supported_types) {
    SCOPED_TRACE(type_name(types));
    EXPECT_EQ(compiler().key(request_for(unpacked, types)), compiler().key(request_for(packed, types)));
  }
  // And every parameter that is compile-time is a define.
  std::set<std::string> define_names;
  for (const Define& d : t.defines(unpacked, {})) define_names.insert(d.name);
  for (const ParameterDecl& decl : t.parameters)
    EXPECT_EQ(define_names.count(decl.name), decl.compile_time ? 1u : 0u);
}

// ---- 7. the kernel cache -------------------------------------------------------------------------------

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() / ("tunefuzz-test-cache-" + std::to_string(getpid()) + "-" +
                                              info->name() + "-" + std::to_string(counter++));
    fs::remove_all(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  /// Flips one byte of a file in place.
  static void flip_byte(const fs::path& path, size_t offset) {
    std::string data = read_whole_file(path);
    ASSERT_LT(offset, data.size());
    data[offset] = static_cast<char>(data[offset] ^ 0x5a);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  }

  /// What loading `key` gives, with the damage reports heard on the way.
  std::optional<CompiledKernel> load(const KernelCache& cache, const std::string& key,
                                     std::vector<std::string>& reports) const {
    return cache.load(key, [&](const std::string& why) { reports.push_back(why); });
  }

  fs::path directory_;
};

/// Load, else compile and store: what a campaign does with each candidate.
CompiledKernel compile_through(const KernelCache& cache, const Compiler& compiler,
                               const CompileRequest& request) {
  if (auto hit = cache.load(compiler.key(request))) return *hit;
  CompiledKernel kernel = compiler.compile(request);
  cache.store(kernel);
  return kernel;
}

void expect_same_entry(const CompiledKernel& loaded, const CompiledKernel& stored) {
  EXPECT_EQ(loaded.key, stored.key);
  EXPECT_EQ(loaded.image, stored.image);
  EXPECT_EQ(loaded.ptx, stored.ptx);
  EXPECT_EQ(loaded.log, stored.log);
  ASSERT_EQ(loaded.resources.size(), stored.resources.size());
  for (const auto& [name, r] : stored.resources) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(loaded.resources.count(name));
    const KernelResources& l = loaded.resources.at(name);
    EXPECT_EQ(l.registers, r.registers);
    EXPECT_EQ(l.stack_frame_bytes, r.stack_frame_bytes);
    EXPECT_EQ(l.spill_store_bytes, r.spill_store_bytes);
    EXPECT_EQ(l.spill_load_bytes, r.spill_load_bytes);
    EXPECT_EQ(l.static_shared_bytes, r.static_shared_bytes);
  }
}

TEST_F(KernelCacheTest, StoreThenLoadRoundTrips) {
  const KernelCache cache(directory_);
  const CompiledKernel& kernel = compiled(at({}));
  cache.store(kernel);
  EXPECT_TRUE(fs::exists(cache.image_path(kernel.key)));
  EXPECT_EQ(read_whole_file(cache.image_path(kernel.key)), kernel.image);
  std::vector<std::string> reports;
  const auto loaded = load(cache, kernel.key, reports);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(reports.empty());
  EXPECT_TRUE(loaded->from_cache);
  EXPECT_FALSE(kernel.from_cache);
  expect_same_entry(*loaded, kernel);
}

TEST_F(KernelCacheTest, SyntheticEntryRoundTripsEveryField) {
  // Byte values a cubin holds (NUL, 0xff, newlines), resources with every field distinct, and logs of
  // the shapes compilers write.
  CompiledKernel kernel;
  kernel.key = std::string(64, 'a');
  kernel.image = std::string(
                     "\x7f"
                     "ELF\0\0\xff\n\r\x01",
                     10) +
                 std::string(1000, '\0');
  kernel.ptx = ".version 9.0\n.target sm_90\n";
  kernel.resources["k1"] = KernelResources{7, 8, 9, 10, 11};
  kernel.resources["k2"] = KernelResources{255, 0, 0, 0, 49152};
  const KernelCache cache(directory_);
  // Logs of every shape: a first line starting with spaces, no final newline and trailing blank lines once
  // broke the entry or changed the log when it was a YAML literal block inside <key>.yaml.
  for (const std::string& log :
       {std::string(""), std::string("ptxas info    : Used 1 registers\nsecond line\n"),
        std::string("tab\there: colon # hash\n"), std::string("  indented first line\nx\n"),
        std::string("no final newline"), std::string("trailing blank lines\n\n\n"),
        std::string("nul\0inside\n", 12), std::string("\xff\xfe not UTF-8\n"),
        std::string("gemm_mma.cu(12): warning #177-D: variable \"x\" was declared\n  int x;\n")}) {
    SCOPED_TRACE(::testing::PrintToString(log));
    kernel.log = log;
    cache.store(kernel);
    const auto loaded = cache.load(kernel.key, [](const std::string& why) { ADD_FAILURE() << why; });
    ASSERT_TRUE(loaded.has_value());
    expect_same_entry(*loaded, kernel);
  }
}

// NVRTC reports a log size larger than the text (13.0: two NULs after a -v compile), and some builds put
// NULs between the front end's output and ptxas's report. The log must hold the text and no NUL, or it
// differs between a fresh compile and the same kernel loaded from the cache.
TEST(CompilerLog, HoldsNoNulAndSurvivesTheCache) {
  const CompiledKernel& kernel = compiled(at({}));
  EXPECT_EQ(kernel.log.find('\0'), std::string::npos) << ::testing::PrintToString(kernel.log);
  const fs::path directory =
      fs::temp_directory_path() / ("tunefuzz-test-cache-" + std::to_string(getpid()) + "-log");
  const KernelCache cache(directory);
  cache.store(kernel);
  const auto loaded = cache.load(kernel.key);
  fs::remove_all(directory);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->log, kernel.log);
}

TEST_F(KernelCacheTest, SecondCompileOfTheSameRequestComesFromTheCache) {
  const KernelCache cache(directory_);
  const CompileRequest request = request_for(at({{"STAGES", 4}}));
  const CompiledKernel first = compile_through(cache, compiler(), request);
  EXPECT_FALSE(first.from_cache);
  const CompiledKernel second = compile_through(cache, compiler(), request);
  EXPECT_TRUE(second.from_cache);
  expect_same_entry(second, first);
  // A request differing in one define is a miss.
  EXPECT_FALSE(cache.load(compiler().key(request_for(at({{"STAGES", 5}})))).has_value());
}

TEST_F(KernelCacheTest, MissingEntryIsAQuietMiss) {
  const KernelCache cache(directory_);
  std::vector<std::string> reports;
  EXPECT_FALSE(load(cache, std::string(64, '0'), reports).has_value());
  EXPECT_TRUE(reports.empty());
}

TEST_F(KernelCacheTest, DamagedEntriesAreReportedMissesAndAreReplacedByTheNextStore) {
  const CompiledKernel& kernel = compiled(at({}));
  const KernelCache cache(directory_);
  const fs::path image = cache.image_path(kernel.key);
  const fs::path ptx = directory_ / (kernel.key + ".ptx");
  const fs::path meta = directory_ / (kernel.key + ".yaml");
  struct Damage {
    std::string what;
    std::function<void()> apply;
    std::string reported;  ///< part of the report on_damage must hear
  };
  const std::vector<Damage> damages = {
      {"truncated image", [&] { fs::resize_file(image, fs::file_size(image) / 2); }, "image checksum"},
      {"flipped image byte", [&] { flip_byte(image, fs::file_size(image) / 3); }, "image checksum"},
      {"flipped PTX byte", [&] { flip_byte(ptx, 0); }, "PTX checksum"},
      {"flipped log byte", [&] { flip_byte(directory_ / (kernel.key + ".log"), 0); }, "log checksum"},
      {"image removed", [&] { fs::remove(image); }, "cannot read"},
      {"metadata garbage", [&] { std::ofstream(meta, std::ios::trunc) << "key: [unclosed\n"; }, "metadata"},
      {"metadata of another key",
       [&] {
         std::string text = read_whole_file(meta);
         text.replace(text.find(kernel.key), 1, kernel.key[0] == 'f' ? "e" : "f");
         std::ofstream(meta, std::ios::trunc) << text;
       },
       "metadata checksum"},  // any edit of the metadata breaks its checksum
      // An edited register or spill count was once trusted: a spilling candidate was kept.
      {"metadata edited",
       [&] {
         std::string text = read_whole_file(meta);
         text.replace(text.find("registers: "), 11, "registers: 1");
         std::ofstream(meta, std::ios::trunc) << text;
       },
       "metadata checksum"},
      // An image replaced by a directory was once recompiled on every run and never repaired: the next store
      // (at the top of the loop) clears it.
      {"image replaced by a directory",
       [&] {
         fs::remove(image);
         fs::create_directories(image);
       },
       "it is a directory"},
  };
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.what);
    cache.store(kernel);
    ASSERT_TRUE(cache.load(kernel.key).has_value());
    damage.apply();
    std::vector<std::string> reports;
    EXPECT_FALSE(load(cache, kernel.key, reports).has_value());
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_TRUE(contains(reports[0], damage.reported)) << reports[0];
    EXPECT_TRUE(contains(reports[0], "damaged")) << reports[0];
    EXPECT_TRUE(contains(reports[0], kernel.key.substr(0, 16))) << reports[0];
    // Loading without a listener is the same miss, silently.
    EXPECT_FALSE(cache.load(kernel.key).has_value());
  }
  cache.store(kernel);  // recompiled and stored again: whole
  const auto healed = cache.load(kernel.key);
  ASSERT_TRUE(healed.has_value());
  expect_same_entry(*healed, kernel);
}

// ---- 8. how long a cold compile takes ------------------------------------------------------------------

TEST(CompileTime, ColdCompileOfTheDefaultBf16Point) {
  // Not memoised and no cache: NVRTC from source to cubin. Reported, not asserted.
  const auto start = std::chrono::steady_clock::now();
  const CompiledKernel kernel = compiler().compile(request_for(at({}), {Precision::bf16, Precision::bf16}));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ timing   ] cold compile of gemm_mma/bf16-bf16/" << at({}).str() << " for sm_90 with "
            << compiler().version() << ": " << wall << " s wall, " << kernel.compile_seconds
            << " s reported by the compiler\n";
  RecordProperty("cold_compile_seconds", std::to_string(wall));
  EXPECT_FALSE(kernel.image.empty());
}

}  // namespace
}  // namespace tunefuzz

namespace tunefuzz {
namespace {

// Law: nothing from a config reaches the compiler's command line as text. A parameter name carrying a flag is
// refused by the config loader (with its location); a define whose name is not an identifier is refused by
// the compiler backend; values are integers by type.
TEST(ConfigInjection, FlagsSmuggledThroughAConfigAreRefused) {
  const std::string head = R"(gpu:
  name: X
  arch: sm_90
  limits: {shared_memory_per_block_optin: 232448, shared_memory_per_sm: 233472, registers_per_sm: 65536, sm_count: 132}
problems:
  - {name: p, m: 8, n: 8, k: 8, precision: bf16}
output: out.yaml
templates:
  - name: gemm_mma
    space:
)";
  for (const std::string key : {"\"BM -I/etc\"", "\"--include-path=/tmp\"", "\"BM=1 -DX\"", "bm"}) {
    try {
      parse_config(head + "      " + key + ": [64]\n", "inject.yaml");
      ADD_FAILURE() << "accepted the parameter name " << key;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::bad_input) << key;
      EXPECT_EQ(e.where().line, 11) << key;
    }
  }
  for (const std::string value : {"\"64 -I/etc\"", "[64, \"-DX=1\"]"}) {
    try {
      parse_config(head + "      BM: " + value + "\n", "inject.yaml");
      ADD_FAILURE() << "accepted the value " << value;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::bad_input) << value;
    }
  }
  const KernelSource source = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", "gemm_mma.cu");
  for (const std::string name : {"BM -I/etc", "X=1 --gpu-architecture=sm_50", "lower"}) {
    const CompileRequest request{&source, {{name, 1}}, "sm_90"};
    try {
      NvrtcCompiler().compile(request);
      ADD_FAILURE() << "compiled with a define named " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("refusing define"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tunefuzz
