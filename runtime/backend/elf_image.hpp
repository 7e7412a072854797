// Kernel images as ELF files (CUDA cubins, AMDGPU code objects: ELF64, little-endian): what runs in them and
// what is only debug information. NVRTC's images carry line tables and the PTX text (`--generate-line-info`)
// for the sanitizers' and profilers' reports, about 70% of their bytes; the code is the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tunefuzz {

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t align = 0;
};

/// The section table of a little-endian ELF64 image; nullopt for anything else, or for an image whose
/// tables or section contents lie outside it.
std::optional<std::vector<ElfSection>> elf_sections(const std::string& image);

/// True for a section that holds only debug information, by the name's prefix: `.debug*`, `.nv_debug*` and
/// their relocations (`.rel.`, `.rela.`).
bool is_debug_section(const ElfSection& section);

/// SHA-256 of what an image runs: its ELF sections (name, type, flags, size and bytes, in order) but the
/// debug ones; any other file whole. A line added above a kernel moves its line table and not its code, so
/// this stays; any change to the code changes it.
std::string code_sha256(const std::string& image);

/// Why `image` is not the code a table recorded for it (`recorded`: its code_sha256 when tuned, empty where
/// the table records none), or "" when it is: the rule by which a template whose source changed after tuning
/// still serves that row (tune check, tune export --embed-kernels, the runtime compiling on first use).
std::string code_difference(const std::string& recorded, const std::string& image);

/// The image with its debug sections emptied: their headers stay (every section keeps its index, so the
/// symbol table and relocations are untouched) with no bytes, and what followed them moves up by multiples
/// of the largest alignment in the image, the program headers following it. Every other section's bytes
/// and every segment's bytes are the original's, so code_sha256 is unchanged. nullopt when it cannot be done
/// safely (not ELF64, no debug section, a debug section inside a segment or overlapping the tables).
std::optional<std::string> without_debug_sections(const std::string& image);

}  // namespace tunefuzz
