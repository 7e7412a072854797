// `tune export`: a table set as YAML or JSON (every field), CSV (one line per card and problem), a
// self-contained C++17 header of constexpr tables with a lookup, or a CMake package source tree holding that
// header. The header's fixed parts (types, lookup) and the package's files are in export_text.hpp; here are
// the generators of what depends on the tables.
#include "tuner/table/export.hpp"

#include <algorithm>
#include <limits>
#include <cstdio>
#include <sstream>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/common/error.hpp"
#include "tuner/table/embed.hpp"
#include "tuner/table/export_text.hpp"
#include "tuner/table/json.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {

namespace {

namespace fs = std::filesystem;
using namespace export_text;

/// The set as one YAML document: the table itself, or a collection of several.
YAML::Node document(const TableSet& set) {
  if (set.documents.size() == 1) return set.documents.front();
  YAML::Node root;
  root["format"] = kCollectionFormat;
  for (const YAML::Node& table : set.documents) root["tables"].push_back(table);
  return root;
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(12);  // 386.45, not 386.44999999999999
  out << value;
  return out.str();
}

// ---- CSV ----

/// RFC 4180: a field holding a comma, quote or line break is quoted, with quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv(const TableSet& set) {
  std::string out =
      "gpu,arch,problem,m,n,k,precision,output,layout,alpha,beta,template,candidate,tflops,median_ms,"
      "baseline_tflops,ratio\n";
  for (const ResultsTable& table : set.tables) {
    for (const TableRow& row : table.rows) {
      const Problem& p = row.problem;
      const TableWinner* w = row.winner ? &*row.winner : nullptr;
      const std::vector<std::string> fields = {
          table.gpu_name,
          table.gpu_arch,
          p.name,
          std::to_string(p.m),
          std::to_string(p.n),
          std::to_string(p.k),
          to_string(p.input),
          to_string(p.output),
          to_string(p.layout),
          number(p.alpha),
          number(p.beta),
          w ? w->template_name : "",
          w ? w->id : "",
          w ? number(w->tflops) : "",
          w ? number(w->median_ms) : "",
          number(row.baseline_tflops),
          w && row.ratio_vs_baseline > 0 ? number(row.ratio_vs_baseline) : ""};
      for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
      out += "\n";
    }
  }
  return out;
}

// ---- C++ header ----

/// A C++ string literal; octal escapes (always three digits) so no following character extends them, and
/// `?` escaped so no trigraph forms.
std::string cpp_string(std::string_view text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\%03o", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// Text safe inside a `//` or `#` comment line: printable ASCII only, and no backslash or `?` (no line
/// continuation, no trigraph); anything else becomes `_`. The exact text lives in the string literals.
std::string comment_text(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c < 0x20 || c > 0x7e || c == '\\' || c == '?') c = '_';
  return out;
}

using Parameters = std::vector<std::pair<std::string, int64_t>>;

/// The winner's parameters in the template's order (from its candidate id), values from its config.
Parameters winner_parameters(const TableWinner& winner) {
  Parameters out;
  const Candidate candidate = parse_candidate_id(winner.id);  // named: values() refers into it
  for (const auto& [name, value] : candidate.point.values()) {
    const auto it = winner.config.find(name);
    out.emplace_back(name, it == winner.config.end() ? value : it->second);
  }
  for (const auto& [name, value] : winner.config)
    if (std::none_of(out.begin(), out.end(), [&](const auto& entry) { return entry.first == name; }))
      out.emplace_back(name, value);
  return out;
}

/// An int64_t as a C++ expression of that value: -2^63 has no literal (9223372036854775808 does not fit, so
/// `-9223372036854775808` is rejected), so it is written as a difference.
std::string cpp_integer(int64_t value) {
  if (value == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807 - 1)";
  return std::to_string(value);
}

/// `{{{"BM", 128}, ...}}` padded with empty entries to `width`.
std::string parameters_literal(const Parameters& parameters, size_t width) {
  std::string out = "{{";
  for (size_t i = 0; i < width; ++i) {
    out += i ? ", " : "";
    out += i < parameters.size()
               ? "{" + cpp_string(parameters[i].first) + ", " + cpp_integer(parameters[i].second) + "}"
               : std::string("{\"\", 0}");
  }
  return out + "}}";
}

/// The hash the table records for the winner's template (empty when it records none).
std::string template_hash(const ResultsTable& table, const TableRow& row) {
  const auto found = table.template_hashes.find(row.winner->template_name);
  return found == table.template_hashes.end() ? std::string() : found->second;
}

std::string row_literal(const ResultsTable& table, const TableRow& row, size_t width) {
  const Problem& p = row.problem;
  const Parameters parameters = winner_parameters(*row.winner);
  return "    Row{" + cpp_string(table.gpu_name) + ", " + cpp_string(table.gpu_arch) + ", " +
         cpp_string(p.name) + ", " + std::to_string(p.m) + ", " + std::to_string(p.n) + ", " +
         std::to_string(p.k) + ", " + cpp_string(to_string(p.input)) + ", " +
         cpp_string(to_string(p.output)) + ", " + cpp_string(to_string(p.layout)) + ",\n        " +
         cpp_string(row.winner->template_name) + ", " + cpp_string(row.winner->id) + ",\n        " +
         parameters_literal(parameters, width) + ", " + std::to_string(parameters.size()) + ", " +
         number(row.winner->tflops) + ",\n        " + cpp_string(template_hash(table, row)) + ", " +
         number(p.alpha) + ", " + number(p.beta) + ", " + cpp_string(row.winner->code_sha256) + "},\n";
}

/// Where the tables came from, one comment line per table.
std::string header_sources(const TableSet& set) {
  std::string out = "// Tuned GEMM configurations, written by `tune export --format header` from:\n";
  for (const ResultsTable& t : set.tables)
    out += "//   " +
           comment_text(t.file.string() + ": " + t.gpu_name + " (" + t.gpu_arch + "), " +
                        std::to_string(t.rows.size()) + " problems, tunefuzz " + t.tool_version + " " +
                        t.tool_commit + ", " + t.date) +
           "\n";
  return out + "// Generated: export again rather than edit.\n";
}

/// The most parameters any row's winner or the default point has: every Parameters array is this wide.
size_t parameter_width(const TableSet& set, const Point& defaults) {
  size_t width = defaults.values().size();
  for (const ResultsTable& table : set.tables)
    for (const TableRow& row : table.rows)
      if (row.winner) width = std::max(width, winner_parameters(*row.winner).size());
  return width;
}

/// `inline constexpr std::array<type, size> name = {{ items }};` (`{}` when empty).
std::string array(const std::string& type, size_t size, const std::string& name, const std::string& items) {
  return "inline constexpr std::array<" + type + ", " + std::to_string(size) + "> " + name + " = " +
         (size ? "{{\n" + items + "}};\n" : std::string("{};\n"));
}

/// kRows: every row with a winner, tables in order.
std::string rows_array(const TableSet& set, size_t width) {
  size_t rows = 0;
  std::string items;
  for (const ResultsTable& table : set.tables)
    for (const TableRow& row : table.rows)
      if (row.winner) {
        items += row_literal(table, row, width);
        ++rows;
      }
  return "\n/// Every tuned row with a winner, in table order.\n" + array("Row", rows, "kRows", items);
}

/// The safe default: the template, its default point and that point's candidate id per element-type pair.
std::string defaults_block(const KernelTemplate& fallback, const Point& defaults, size_t width) {
  std::string items;
  for (const TypePair& types : fallback.supported_types)
    items += "    DefaultCandidate{" + cpp_string(to_string(types.input)) + ", " +
             cpp_string(to_string(types.output)) + ", " +
             cpp_string(Candidate{&fallback, defaults, types}.id()) + "},\n";
  return "\n/// The safe default: " + fallback.name + " at its default point.\n" +
         "inline constexpr std::string_view kDefaultTemplate = " + cpp_string(fallback.name) + ";\n" +
         "inline constexpr Parameters kDefaultParameters = " + parameters_literal(defaults.values(), width) +
         ";\ninline constexpr std::size_t kDefaultParameterCount = " +
         std::to_string(defaults.values().size()) + ";\n" +
         array("DefaultCandidate", fallback.supported_types.size(), "kDefaultCandidates", items);
}

std::string header(const TableSet& set) {
  const KernelTemplate& fallback = gemm_mma_template();
  const Point defaults = fallback.default_point();
  const size_t width = parameter_width(set, defaults);
  std::string rule = kHeaderRule;
  rule.replace(rule.find("@DEFAULT_POINT@"), 15, defaults.str());
  return header_sources(set) + rule +
         "\n/// Parameters per configuration, the most any row or the default has.\n" +
         "inline constexpr std::size_t kMaxParameters = " + std::to_string(width) + ";\n" + kHeaderTypes +
         rows_array(set, width) + defaults_block(fallback, defaults, width) + kHeaderLookup;
}

// ---- CMake package ----

/// `major.minor.patch` from the tool version ("0.1.0-dirty" → "0.1.0"), as project(VERSION) needs.
std::string package_version(const TableSet& set) {
  const std::string text = set.tables.empty() ? "" : set.tables.front().tool_version;
  const size_t end = text.find_first_not_of("0123456789.");
  std::string version = text.substr(0, end);
  while (!version.empty() && version.back() == '.') version.pop_back();
  return version.empty() || version.front() == '.' ? "0" : version;
}

/// The package's library: header-only without images, a static library of src/kernels.cpp with them.
std::string package_library(bool embedded) {
  return embedded ? "add_library(tables STATIC src/kernels.cpp)\nset_target_properties(tables PROPERTIES "
                    "OUTPUT_NAME tunefuzz_tables POSITION_INDEPENDENT_CODE ON)\n"
                  : "add_library(tables INTERFACE)\n";
}

void write_package(const TableSet& set, const fs::path& directory, const std::optional<EmbedKernels>& embed) {
  if (fs::exists(directory) && !fs::is_directory(directory))
    throw Error(ErrorKind::bad_input,
                "--format cmake writes a directory, and " + directory.string() + " is a file");
  std::string cmake =
      "# tunefuzz_tables: tuned GEMM configurations as an installable CMake package, exported from\n";
  for (const ResultsTable& t : set.tables)
    cmake += "#   " + comment_text(t.file.string() + " (" + t.gpu_name + ")") + "\n";
  const std::vector<EmbeddedImage> images =
      embed ? compile_winners(set, embed->template_directory, KernelCache(embed->cache_directory))
            : std::vector<EmbeddedImage>{};
  cmake += kPackageCMake;
  cmake.replace(cmake.find("@VERSION@"), 9, package_version(set));
  cmake.replace(cmake.find("@LIBRARY@"), 9, package_library(!images.empty()));
  const std::string scope = images.empty() ? "INTERFACE" : "PUBLIC";
  for (size_t at = cmake.find("@SCOPE@"); at != std::string::npos; at = cmake.find("@SCOPE@")) cmake.replace(at, 7, scope);
  write_file_atomically(directory / "CMakeLists.txt", cmake);
  write_file_atomically(directory / "cmake" / "tunefuzzConfig.cmake", kPackageConfig);
  write_file_atomically(directory / "include" / "tunefuzz" / "tables.hpp", header(set));
  write_file_atomically(directory / "include" / "tunefuzz" / "kernels.hpp", kernels_header(images));
  if (!images.empty()) write_file_atomically(directory / "src" / "kernels.cpp", kernels_source(images));
  write_file_atomically(directory / "README.md", kPackageReadme);
}

}  // namespace

std::optional<ExportFormat> parse_export_format(std::string_view text) {
  if (text == "yaml") return ExportFormat::yaml;
  if (text == "json") return ExportFormat::json;
  if (text == "csv") return ExportFormat::csv;
  if (text == "header") return ExportFormat::header;
  if (text == "cmake") return ExportFormat::cmake;
  return std::nullopt;
}

void export_tables(const TableSet& set, ExportFormat format, const std::filesystem::path& output,
                   const std::optional<EmbedKernels>& embed) {
  if (set.tables.empty()) throw Error(ErrorKind::bad_input, "nothing to export: no tables");
  if (embed && format != ExportFormat::cmake)
    throw Error(ErrorKind::bad_input, "--embed-kernels puts images in a CMake package: it needs --format cmake");
  switch (format) {
    case ExportFormat::yaml:
      write_yaml(output, document(set));
      return;
    case ExportFormat::json:
      write_file_atomically(output, to_json(document(set)));
      return;
    case ExportFormat::csv:
      write_file_atomically(output, csv(set));
      return;
    case ExportFormat::header:
      write_file_atomically(output, header(set));
      return;
    case ExportFormat::cmake:
      write_package(set, output, embed);
      return;
  }
}

}  // namespace tunefuzz
