// Case records as text: distribution names and the one-line form of a record that logs and reproducers
// print. Doubles are written in their shortest round-trip form so a printed record replays exactly.
#include "fuzz/case.hpp"

#include <array>
#include <charconv>

namespace tunefuzz::fuzz {

namespace {

constexpr std::array<Distribution, 9> kDistributions = {
    Distribution::small_int,   Distribution::ones,  Distribution::sequential, Distribution::normal,
    Distribution::alternating, Distribution::large, Distribution::denormal,   Distribution::sparse_nonfinite,
    Distribution::identity};

/// Shortest text that reads back as the same double.
std::string shortest(double value) {
  std::array<char, 64> buffer{};
  auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc{}) return "?";
  return std::string(buffer.data(), end);
}

}  // namespace

const char* to_string(Distribution distribution) {
  switch (distribution) {
    case Distribution::small_int:
      return "small_int";
    case Distribution::ones:
      return "ones";
    case Distribution::sequential:
      return "sequential";
    case Distribution::normal:
      return "normal";
    case Distribution::alternating:
      return "alternating";
    case Distribution::large:
      return "large";
    case Distribution::denormal:
      return "denormal";
    case Distribution::sparse_nonfinite:
      return "sparse_nonfinite";
    case Distribution::identity:
      return "identity";
  }
  return "?";
}

bool parse_distribution(const std::string& text, Distribution& out) {
  for (Distribution candidate : kDistributions) {
    if (text == to_string(candidate)) {
      out = candidate;
      return true;
    }
  }
  return false;
}

bool is_exact(Distribution distribution) {
  switch (distribution) {
    case Distribution::small_int:
    case Distribution::ones:
    case Distribution::sequential:
    case Distribution::alternating:
    case Distribution::sparse_nonfinite:
    case Distribution::identity:
      return true;
    case Distribution::normal:
    case Distribution::large:
    case Distribution::denormal:
      return false;
  }
  return false;
}

std::string to_string(const CaseRecord& record) {
  std::string line;
  line += "m=" + std::to_string(record.m);
  line += " n=" + std::to_string(record.n);
  line += " k=" + std::to_string(record.k);
  line += " lda_pad=" + std::to_string(record.lda_pad);
  line += " ldb_pad=" + std::to_string(record.ldb_pad);
  line += " ldc_pad=" + std::to_string(record.ldc_pad);
  line += " alpha=" + shortest(record.alpha);
  line += " beta=" + shortest(record.beta);
  line += " dist=" + std::string(to_string(record.distribution));
  line += " seed=" + std::to_string(record.seed);
  if (record.a_offset) line += " a_offset=" + std::to_string(record.a_offset);
  if (record.b_offset) line += " b_offset=" + std::to_string(record.b_offset);
  if (record.c_offset) line += " c_offset=" + std::to_string(record.c_offset);
  if (record.splits) line += " splits=" + std::to_string(record.splits);
  if (record.grid) line += " grid=" + std::to_string(record.grid);
  if (record.layout != Layout{}) line += " layout=" + to_string(record.layout);
  return line;
}

std::optional<CaseRecord> parse_case_line(std::string_view line) {
  CaseRecord r;
  bool any = false;
  size_t start = 0;
  try {
    while (start < line.size()) {
      size_t end = line.find(' ', start);
      if (end == std::string_view::npos) end = line.size();
      const std::string_view word = line.substr(start, end - start);
      start = end + 1;
      const size_t eq = word.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string key(word.substr(0, eq)), value(word.substr(eq + 1));
      int64_t* integer = key == "m"          ? &r.m
                         : key == "n"        ? &r.n
                         : key == "k"        ? &r.k
                         : key == "lda_pad"  ? &r.lda_pad
                         : key == "ldb_pad"  ? &r.ldb_pad
                         : key == "ldc_pad"  ? &r.ldc_pad
                         : key == "a_offset" ? &r.a_offset
                         : key == "b_offset" ? &r.b_offset
                         : key == "c_offset" ? &r.c_offset
                         : key == "splits"   ? &r.splits
                         : key == "grid"     ? &r.grid
                                             : nullptr;
      if (integer)
        *integer = std::stoll(value);
      else if (key == "alpha")
        r.alpha = std::stod(value);
      else if (key == "beta")
        r.beta = std::stod(value);
      else if (key == "seed")
        r.seed = std::stoull(value);
      else if (key == "dist" && !parse_distribution(value, r.distribution))
        return std::nullopt;
      else if (key == "layout") {
        const auto layout = parse_layout(value);
        if (!layout) return std::nullopt;
        r.layout = *layout;
      } else if (key != "dist")
        continue;
      any = true;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!any) return std::nullopt;
  return r;
}

}  // namespace tunefuzz::fuzz
