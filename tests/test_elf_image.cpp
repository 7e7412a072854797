// Laws of kernel images as ELF files (runtime/backend/elf_image.hpp), on hand-made ELF files and on NVRTC's
// images of a gemm_simt candidate:
//  - the code digest ignores the debug sections and counts every other section; a file that is not ELF, or
//    whose tables lie outside it, counts whole;
//  - a comment line above the kernel changes the image's bytes (its line table) and not its code digest;
//  - stripping the debug sections keeps every other section's bytes, every segment's bytes and the code
//    digest, leaves a file a third the size, and refuses what it cannot strip safely.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/backend/elf_image.hpp"
#include "tuner/common/hash.hpp"

namespace {

using namespace tunefuzz;
namespace fs = std::filesystem;

const std::string kTune = TUNEFUZZ_BINARY_DIR "/bin/tune";
const std::string kConfig = TUNEFUZZ_SOURCE_DIR "/configs/smoke.yaml";

/// A little-endian ELF64 file: its header, then each section's bytes, then the section table (the last
/// section the names). A section of type 8 (no bits) has a size and no bytes.
std::string elf(const std::vector<std::tuple<std::string, uint32_t, std::string>>& sections) {
  std::string names(1, '\0'), body;
  std::vector<std::array<uint64_t, 4>> table = {{0, 0, 0, 0}};  // name, type, offset, size
  const auto add = [&](const std::string& name, uint32_t type, const std::string& bytes) {
    table.push_back({names.size(), type, 64 + body.size(), type == 8 ? 100 : bytes.size()});
    names += name + '\0';
    if (type != 8) body += bytes;
  };
  for (const auto& [name, type, bytes] : sections) add(name, type, bytes);
  const std::string shstrtab = ".shstrtab";
  table.push_back({names.size(), 3, 64 + body.size(), names.size() + shstrtab.size() + 1});
  names += shstrtab + '\0';
  body += names;
  std::string out(64, '\0');
  out[0] = 0x7f, out[1] = 'E', out[2] = 'L', out[3] = 'F', out[4] = 2, out[5] = 1;
  const auto put = [](std::string& s, size_t at, auto value) {
    std::memcpy(s.data() + at, &value, sizeof value);
  };
  put(out, 0x28, uint64_t{64 + body.size()});
  put(out, 0x3A, uint16_t{64});
  put(out, 0x3C, static_cast<uint16_t>(table.size()));
  put(out, 0x3E, static_cast<uint16_t>(table.size() - 1));
  out += body;
  for (const auto& [name, type, offset, size] : table) {
    std::string entry(64, '\0');
    put(entry, 0, static_cast<uint32_t>(name));
    put(entry, 4, static_cast<uint32_t>(type));
    put(entry, 24, offset);
    put(entry, 32, size);
    out += entry;
  }
  return out;
}

TEST(CodeDigest, DebugSectionsDoNotCountEveryOtherSectionDoesAndOtherFilesCountWhole) {
  const auto image = [](const std::string& code, const std::string& lines, const std::string& ptx) {
    return elf({{".text.tf_gemm", 1, code},
                {".nv.shared.tf_gemm", 8, ""},
                {".debug_line", 1, lines},
                {".rel.debug_line", 9, lines + "r"},
                {".nv_debug_ptx_txt", 1, ptx},
                {".nv.info", 0x70000000, "attr"}});
  };
  const std::string base = code_sha256(image("CODE", "line 1", "ptx text"));
  EXPECT_EQ(code_sha256(image("CODE", "line 2 and more", "ptx text")), base);  // a line table moved
  EXPECT_EQ(code_sha256(image("CODE", "line 1", "other ptx text")), base);
  EXPECT_NE(code_sha256(image("CODX", "line 1", "ptx text")), base);  // the code changed
  EXPECT_NE(code_sha256(elf({{".text.tf_gemm", 1, "CODE"}, {".nv.info", 0x70000000, "attr"}})),
            code_sha256(elf({{".text.tf_gemm", 1, "CODE"}, {".nv.info", 0x70000000, "attr2"}})));
  EXPECT_NE(code_sha256(elf({{".text.a", 1, "CODE"}})), code_sha256(elf({{".text.b", 1, "CODE"}})));
  // A kernel named debug_...: its code counts (debug sections go by their prefix, not a word in the name).
  EXPECT_NE(code_sha256(elf({{".text.debug_gemm", 1, "CODE"}})),
            code_sha256(elf({{".text.debug_gemm", 1, "CODX"}})));
  EXPECT_FALSE(is_debug_section({".text.debug_gemm", 1, 6, 0, 4, 128}));
  EXPECT_TRUE(is_debug_section({".rela.nv_debug_line_sass", 4, 64, 0, 120, 8}));
  // Not an ELF image, or one whose tables lie outside the file: every byte counts.
  EXPECT_EQ(code_sha256("PTX text"), sha256_hex("PTX text"));
  std::string cut = image("CODE", "line 1", "ptx text");
  cut.resize(cut.size() - 48);  // into the last section's entry
  EXPECT_EQ(code_sha256(cut), sha256_hex(cut));
  std::string wild = image("CODE", "line 1", "ptx text");
  wild[0x28 + 7] = 0x7f;  // the section table far past the end
  EXPECT_EQ(code_sha256(wild), sha256_hex(wild));
}

TEST(ElfImage, WhatCannotBeStrippedSafelyIsRefused) {
  EXPECT_FALSE(without_debug_sections("PTX text"));
  EXPECT_FALSE(without_debug_sections(elf({{".text.tf_gemm", 1, "CODE"}})));  // no debug section
  std::string cut = elf({{".text.tf_gemm", 1, "CODE"}, {".debug_line", 1, std::string(4096, 'L')}});
  cut.resize(cut.size() - 48);
  EXPECT_FALSE(without_debug_sections(cut));
}

// A hand-made image with a debug section bigger than its largest alignment: the stripped one is smaller, has
// the same code digest, and its remaining sections hold their bytes at offsets of the same alignment.
TEST(ElfImage, StrippingAHandMadeImageKeepsTheCodeAndDropsTheDebugBytes) {
  const std::string image = elf({{".text.tf_gemm", 1, "CODE"},
                                 {".debug_line", 1, std::string(5000, 'L')},
                                 {".nv.info", 0x70000000, "attr"},
                                 {".nv_debug_ptx_txt", 1, std::string(3000, 'P')}});
  const auto stripped = without_debug_sections(image);
  ASSERT_TRUE(stripped);
  EXPECT_LT(stripped->size(), image.size() - 4096);
  EXPECT_EQ(code_sha256(*stripped), code_sha256(image));
  const auto sections = elf_sections(*stripped);
  ASSERT_TRUE(sections);
  for (const ElfSection& s : *sections) {
    if (s.name == ".nv.info") {
      EXPECT_EQ(stripped->substr(s.offset, s.size), "attr");
    }
  }
}

/// NVRTC's image of one gemm_simt candidate (BM as given) compiled by `tune compile` into a cache of its own,
/// from the shipped templates or from them with a comment line added above everything in gemm_simt.cu.
std::string simt_image(const fs::path& root, const std::string& name, int bm, bool comment) {
  const fs::path templates = root / name / "templates", cache = root / name / "cache";
  fs::create_directories(templates.parent_path());
  fs::copy(TUNEFUZZ_SOURCE_DIR "/templates", templates, fs::copy_options::recursive);
  if (comment) {
    std::ifstream in(templates / "gemm_simt.cu");
    const std::string source((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(templates / "gemm_simt.cu") << "// a comment line above the kernel\n" << source;
  }
  const fs::path config = root / name / "config.yaml";
  YAML::Node c = YAML::LoadFile(kConfig);
  c["problems"] = YAML::Load("[{name: p, m: 64, n: 64, k: 64, precision: fp32}]");
  c["templates"] = YAML::Load("[{name: gemm_simt, space: {BM: [" + std::to_string(bm) +
                              "], BN: [64], BK: [8], TM: [4], TN: [4], STAGES: [2], VEC: [4]}}]");
  c["output"] = (root / name / "table.yaml").string();
  std::ofstream(config) << c;
  const std::string command = "TUNEFUZZ_TEMPLATE_DIR=" + templates.string() +
                              " TUNEFUZZ_CACHE_DIR=" + cache.string() + " " + kTune + " compile " +
                              config.string() + " > " + (root / name / "log").string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<fs::path> cubins;
  for (const auto& entry : fs::directory_iterator(cache))
    if (entry.path().extension() == ".cubin") cubins.push_back(entry.path());
  EXPECT_EQ(cubins.size(), 1u) << name;
  std::ifstream in(cubins.empty() ? fs::path() : cubins[0], std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

class NvrtcImages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("tunefuzz-elf-image-" + std::to_string(getpid()));
    fs::remove_all(root_);
    plain_ = simt_image(root_, "plain", 64, false);
    commented_ = simt_image(root_, "comment", 64, true);
    other_ = simt_image(root_, "other", 32, false);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  static inline fs::path root_;
  static inline std::string plain_, commented_, other_;
};

// One gemm_simt candidate compiled from the shipped template and from the template with a comment line above
// everything has one code digest (the files differ: their line tables moved); another candidate has another.
TEST_F(NvrtcImages, ACommentLineAboveTheKernelKeepsTheCodeDigestAnotherPointChangesIt) {
  ASSERT_FALSE(plain_.empty());
  EXPECT_NE(sha256_hex(plain_), sha256_hex(commented_));
  EXPECT_EQ(code_sha256(plain_), code_sha256(commented_));
  EXPECT_NE(code_sha256(plain_), code_sha256(other_));
}

/// The bytes of each program header's segment, in order, but those that hold the program headers (whose
/// offsets the stripping rewrites).
std::vector<std::string> segments(const std::string& image) {
  uint64_t ph_off;
  uint16_t ph_size, ph_num;
  std::memcpy(&ph_off, image.data() + 0x20, 8);
  std::memcpy(&ph_size, image.data() + 0x36, 2);
  std::memcpy(&ph_num, image.data() + 0x38, 2);
  std::vector<std::string> out;
  for (uint16_t i = 0; i < ph_num; ++i) {
    uint64_t offset, size;
    std::memcpy(&offset, image.data() + ph_off + uint64_t{i} * ph_size + 8, 8);
    std::memcpy(&size, image.data() + ph_off + uint64_t{i} * ph_size + 32, 8);
    if (offset <= ph_off && ph_off < offset + size) continue;
    out.push_back(image.substr(offset, size));
  }
  return out;
}

// NVRTC's image without its debug sections: every section but those keeps its bytes, its alignment and its
// index, every segment its bytes, the code digest is the same, and the file is at most half the size.
TEST_F(NvrtcImages, StrippedOfDebugSectionsTheImageKeepsEverySectionAndSegmentThatRuns) {
  ASSERT_FALSE(plain_.empty());
  const auto stripped = without_debug_sections(plain_);
  ASSERT_TRUE(stripped);
  EXPECT_LE(stripped->size() * 2, plain_.size()) << stripped->size() << " of " << plain_.size();
  EXPECT_EQ(code_sha256(*stripped), code_sha256(plain_));
  const auto before = elf_sections(plain_), after = elf_sections(*stripped);
  ASSERT_TRUE(before && after);
  ASSERT_EQ(before->size(), after->size());
  int emptied = 0;
  for (size_t i = 0; i < before->size(); ++i) {
    const ElfSection &b = (*before)[i], &a = (*after)[i];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    if (is_debug_section(b)) {
      emptied += b.size > 0;
      EXPECT_EQ(a.size, 0u);
      continue;
    }
    EXPECT_EQ(a.size, b.size);
    if (b.align > 1) {
      EXPECT_EQ(a.offset % b.align, 0u);
    }
    if (b.type != 8) {
      EXPECT_EQ(stripped->substr(a.offset, a.size), plain_.substr(b.offset, b.size));
    }
  }
  EXPECT_GE(emptied, 3);                   // the line tables, the SASS line table, the PTX text
  EXPECT_GE(segments(plain_).size(), 3u);  // constants, code, globals and shared memory
  EXPECT_EQ(segments(*stripped), segments(plain_));
  EXPECT_FALSE(without_debug_sections(*stripped));  // nothing left to strip
}

}  // namespace
