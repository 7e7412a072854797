#include "runtime/backend/elf_image.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tuner/common/hash.hpp"

namespace tunefuzz {

namespace {

// ELF64 header fields and table entries, by byte offset.
constexpr uint64_t kPhOff = 0x20, kShOff = 0x28, kPhEntSize = 0x36, kPhNum = 0x38, kShEntSize = 0x3A,
                   kShNum = 0x3C, kShStrNdx = 0x3E;
constexpr uint64_t kPhOffset = 8, kPhFileSize = 32, kPhAlign = 48;   // in a program header
constexpr uint64_t kShOffset = 24, kShSize = 32, kShAddrAlign = 48;  // in a section header
constexpr uint32_t kNoBits = 8;  // SHT_NOBITS: a size (.nv.shared.*), no bytes in the file

template <typename T>
std::optional<T> read(const std::string& image, uint64_t at) {
  if (at > image.size() || image.size() - at < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, image.data() + at, sizeof value);
  return value;
}

template <typename T>
void write(std::string& image, uint64_t at, T value) {
  std::memcpy(image.data() + at, &value, sizeof value);
}

bool is_elf64_le(const std::string& image) {
  constexpr char kMagic[4] = {0x7f, 'E', 'L', 'F'};
  return image.size() >= 64 && std::memcmp(image.data(), kMagic, 4) == 0 && image[4] == 2 && image[5] == 1;
}

bool fits(const std::string& image, uint64_t offset, uint64_t size) {
  return offset <= image.size() && image.size() - offset >= size;
}

}  // namespace

std::optional<std::vector<ElfSection>> elf_sections(const std::string& image) {
  if (!is_elf64_le(image)) return std::nullopt;
  const auto table = read<uint64_t>(image, kShOff);
  const auto entry = read<uint16_t>(image, kShEntSize), count = read<uint16_t>(image, kShNum),
             names = read<uint16_t>(image, kShStrNdx);
  if (!table || !entry || !count || !names || *entry < 64 || *names >= *count ||
      !fits(image, *table, uint64_t{*entry} * *count))
    return std::nullopt;
  const auto header = [&](uint16_t i) { return *table + uint64_t{i} * *entry; };
  const uint64_t names_at = *read<uint64_t>(image, header(*names) + kShOffset);
  const uint64_t names_size = *read<uint64_t>(image, header(*names) + kShSize);
  if (!fits(image, names_at, names_size)) return std::nullopt;
  std::vector<ElfSection> out;
  for (uint16_t i = 0; i < *count; ++i) {
    ElfSection s;
    const uint32_t name = *read<uint32_t>(image, header(i));
    s.type = *read<uint32_t>(image, header(i) + 4);
    s.flags = *read<uint64_t>(image, header(i) + 8);
    s.offset = *read<uint64_t>(image, header(i) + kShOffset);
    s.size = *read<uint64_t>(image, header(i) + kShSize);
    s.align = *read<uint64_t>(image, header(i) + kShAddrAlign);
    if (name >= names_size) return std::nullopt;
    const size_t end = image.find('\0', names_at + name);
    if (end == std::string::npos || end >= names_at + names_size) return std::nullopt;
    s.name = image.substr(names_at + name, end - (names_at + name));
    if (s.type != kNoBits && !fits(image, s.offset, s.size)) return std::nullopt;
    out.push_back(std::move(s));
  }
  return out;
}

bool is_debug_section(const ElfSection& section) {
  // By prefix: a kernel may well be called debug_something (its code sits in `.text.debug_something`).
  for (const char* prefix :
       {".debug", ".nv_debug", ".rel.debug", ".rela.debug", ".rel.nv_debug", ".rela.nv_debug"})
    if (section.name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string code_sha256(const std::string& image) {
  const auto sections = elf_sections(image);
  if (!sections) return sha256_hex(image);
  std::string kept;
  for (const ElfSection& s : *sections) {
    if (is_debug_section(s)) continue;
    kept += s.name + '\0' + std::to_string(s.type) + ' ' + std::to_string(s.flags) + ' ' +
            std::to_string(s.size) + '\0';
    if (s.type != kNoBits) kept.append(image, s.offset, s.size);
  }
  return sha256_hex(kept);
}

std::optional<std::string> without_debug_sections(const std::string& image) {
  const auto sections = elf_sections(image);
  if (!sections) return std::nullopt;
  const uint64_t sh_off = *read<uint64_t>(image, kShOff), ph_off = *read<uint64_t>(image, kPhOff);
  const uint16_t sh_size = *read<uint16_t>(image, kShEntSize), sh_num = *read<uint16_t>(image, kShNum);
  const uint16_t ph_size = *read<uint16_t>(image, kPhEntSize), ph_num = *read<uint16_t>(image, kPhNum);
  if (ph_num > 0 && (ph_size < 56 || !fits(image, ph_off, uint64_t{ph_size} * ph_num))) return std::nullopt;

  // What must not move relative to itself: the header, both tables, every segment and every kept section.
  using Range = std::pair<uint64_t, uint64_t>;  // [first, last)
  std::vector<Range> kept = {
      {0, 64}, {sh_off, sh_off + uint64_t{sh_size} * sh_num}, {ph_off, ph_off + uint64_t{ph_size} * ph_num}};
  uint64_t align = 16;
  for (uint16_t i = 0; i < ph_num; ++i) {
    const uint64_t at = ph_off + uint64_t{i} * ph_size;
    const uint64_t offset = *read<uint64_t>(image, at + kPhOffset),
                   size = *read<uint64_t>(image, at + kPhFileSize);
    if (!fits(image, offset, size)) return std::nullopt;
    kept.push_back({offset, offset + size});
    align = std::max(align, *read<uint64_t>(image, at + kPhAlign));
  }
  std::vector<Range> removed;
  for (const ElfSection& s : *sections) {
    align = std::max(align, s.align);
    if (s.type == kNoBits || s.size == 0) continue;
    (is_debug_section(s) ? removed : kept).push_back({s.offset, s.offset + s.size});
  }
  if (removed.empty() || align > (uint64_t{1} << 20)) return std::nullopt;
  std::sort(removed.begin(), removed.end());
  std::vector<Range> merged;
  for (const Range& r : removed) {
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  for (const Range& r : merged)
    for (const Range& k : kept)
      if (k.first < k.second && r.first < k.second && k.first < r.second) return std::nullopt;

  // Each removed run gives up whole multiples of `align` (the rest stays, as zeros), so every byte that
  // follows keeps its offset modulo every alignment in the image.
  std::string out;
  std::vector<std::pair<uint64_t, uint64_t>> shift_after;  // (end of a removed run, total shift from there)
  uint64_t from = 0, shift = 0;
  for (const Range& r : merged) {
    out.append(image, from, r.first - from);
    const uint64_t dropped = (r.second - r.first) / align * align;
    out.append(r.second - r.first - dropped, '\0');
    shift += dropped;
    shift_after.push_back({r.second, shift});
    from = r.second;
  }
  out.append(image, from, std::string::npos);
  const auto moved = [&](uint64_t offset) {
    uint64_t by = 0;
    for (const auto& [end, total] : shift_after)
      if (offset >= end) by = total;
    return offset - by;
  };

  const uint64_t new_sh_off = moved(sh_off), new_ph_off = moved(ph_off);
  write(out, kShOff, new_sh_off);
  write(out, kPhOff, new_ph_off);
  for (uint16_t i = 0; i < sh_num; ++i) {
    const ElfSection& s = (*sections)[i];
    const uint64_t at = new_sh_off + uint64_t{i} * sh_size;
    if (is_debug_section(s) && s.type != kNoBits) {
      write(out, at + kShSize, uint64_t{0});
      // An emptied section points at where its run begins now (the zeros left of it, if any).
      const auto run = std::find_if(merged.begin(), merged.end(), [&](const Range& r) {
        return r.first <= s.offset && s.offset < r.second;
      });
      write(out, at + kShOffset, run == merged.end() ? moved(s.offset) : moved(run->first));
    } else {
      write(out, at + kShOffset, moved(s.offset));
    }
  }
  for (uint16_t i = 0; i < ph_num; ++i) {
    const uint64_t at = new_ph_off + uint64_t{i} * ph_size;
    write(out, at + kPhOffset, moved(*read<uint64_t>(image, ph_off + uint64_t{i} * ph_size + kPhOffset)));
  }
  if (!elf_sections(out) || code_sha256(out) != code_sha256(image)) return std::nullopt;
  return out;
}

std::string code_difference(const std::string& recorded, const std::string& image) {
  if (recorded.empty()) return "the table records no code digest for it";
  const std::string now = code_sha256(image);
  if (now == recorded) return "";
  return "its code changed (table " + recorded.substr(0, 12) + ", here " + now.substr(0, 12) + ")";
}

}  // namespace tunefuzz
