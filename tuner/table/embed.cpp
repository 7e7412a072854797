#include "tuner/table/embed.hpp"

#include <cstdio>
#include <map>
#include <set>

#include "runtime/backend/compile_candidate.hpp"
#include "runtime/backend/compiler_for.hpp"
#include "runtime/backend/elf_image.hpp"

namespace tunefuzz {

namespace {

/// The template's source from the directory (loaded once per file).
const KernelSource& source_of(const KernelTemplate& t, const std::filesystem::path& directory,
                              std::map<std::string, KernelSource>& sources) {
  auto found = sources.find(t.source_file);
  if (found == sources.end())
    found = sources.emplace(t.source_file, KernelSource::load(directory, t.source_file)).first;
  return found->second;
}

/// Refuses `image`, the tree's image of `winner`, when its template's source is not what `table` was tuned
/// with and the code is not the code the table timed either (it would be untested code).
void require_tuned_code(const ResultsTable& table, const TableWinner& winner, const KernelSource& source,
                        const std::string& image, const std::filesystem::path& directory) {
  const auto tuned = table.template_hashes.find(winner.template_name);
  if (tuned != table.template_hashes.end() && tuned->second == source.hash()) return;
  const std::string why = code_difference(winner.code_sha256, image);
  if (why.empty()) return;  // the source changed, the code did not
  throw Error(
      ErrorKind::bad_input,
      "template " + winner.template_name + " in " + directory.string() +
          " is not the source this table was tuned with (" +
          (tuned == table.template_hashes.end() ? std::string("the table records none")
                                                : "table " + tuned->second.substr(0, 12)) +
          ", here " + source.hash().substr(0, 12) + ") and " + winner.id + ": " + why +
          ": its image would be untested code; tune again or export from the tree the table came from",
      {table.file.string(), 0, 0, "provenance.template_hashes." + winner.template_name});
}

/// A C++ identifier-safe array name per image.
std::string array_name(size_t index) {
  return "kImage" + std::to_string(index);
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::vector<EmbeddedImage> compile_winners(const TableSet& set, const std::filesystem::path& template_directory,
                                           const KernelCache& cache) {
  std::vector<EmbeddedImage> out;
  std::set<std::pair<std::string, std::string>> done;
  std::map<std::string, KernelSource> sources;
  for (const ResultsTable& table : set.tables) {
    const std::unique_ptr<Compiler> compiler = compiler_for(GpuSpec{table.gpu_name, table.gpu_arch, {}, {}, {}});
    for (const TableRow& row : table.rows) {
      if (!row.winner) continue;
      const Candidate candidate = parse_candidate_id(row.winner->id);
      const std::string arch = candidate.kernel_template->compile_arch(table.gpu_arch);
      if (!done.insert({row.winner->id, arch}).second) continue;
      const KernelSource& source = source_of(*candidate.kernel_template, template_directory, sources);
      std::fprintf(stderr, "compiling %s for %s\n", row.winner->id.c_str(), arch.c_str());
      // Shipped without the line tables and PTX text (two thirds of an NVRTC image, which the module load
      // would read for nothing): every other section, and so the code the campaign fuzzed and timed, as it
      // is.
      const std::string image = compile_candidate(candidate, table.gpu_arch, source, *compiler, cache).image;
      require_tuned_code(table, *row.winner, source, image, template_directory);
      out.push_back({row.winner->id, arch, without_debug_sections(image).value_or(image)});
    }
  }
  return out;
}

std::string kernels_header(const std::vector<EmbeddedImage>& images) {
  std::string out =
      "// Kernel images compiled ahead of time by `tune export --format cmake --embed-kernels` (empty "
      "without it):\n"
      "// hand them to the runtime with tunefuzz::runtime::Table::with_images(tunefuzz_tables::kImages).\n"
      "// Generated: export again rather than edit.\n#pragma once\n\n#include <array>\n#include <cstddef>\n"
      "#include <string_view>\n\nnamespace tunefuzz_tables {\n\n"
      "/// One winner's image: a cubin (sm_*) or an AMDGPU code object (gfx*), without its debug sections.\n"
      "struct Image {\n  std::string_view candidate, arch;\n  const unsigned char* data;\n  std::size_t "
      "size;\n};\n\n";
  if (images.empty())
    out += "inline constexpr std::array<Image, 0> kImages{};\n";
  else
    out += "extern const std::array<Image, " + std::to_string(images.size()) + "> kImages;  // src/kernels.cpp\n";
  return out + "\n}  // namespace tunefuzz_tables\n";
}

std::string kernels_source(const std::vector<EmbeddedImage>& images) {
  std::string out = "// The images tunefuzz/kernels.hpp declares. Generated by `tune export --embed-kernels`.\n"
                    "#include <tunefuzz/kernels.hpp>\n\nnamespace tunefuzz_tables {\n\nnamespace {\n";
  char byte[8];
  for (size_t i = 0; i < images.size(); ++i) {
    out += "alignas(8) const unsigned char " + array_name(i) + "[] = {";
    for (size_t b = 0; b < images[i].image.size(); ++b) {
      std::snprintf(byte, sizeof byte, "%s%u,", b % 24 == 0 ? "\n" : "",
                    static_cast<unsigned>(static_cast<unsigned char>(images[i].image[b])));
      out += byte;
    }
    out += "};\n";
  }
  out += "}  // namespace\n\nconst std::array<Image, " + std::to_string(images.size()) + "> kImages = {{\n";
  for (size_t i = 0; i < images.size(); ++i)
    out += "    {" + quoted(images[i].candidate) + ", " + quoted(images[i].arch) + ", " + array_name(i) + ", sizeof " +
           array_name(i) + "},\n";
  return out + "}};\n\n}  // namespace tunefuzz_tables\n";
}

}  // namespace tunefuzz
