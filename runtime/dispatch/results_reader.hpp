// Reading a results table back (for `tune check`, and for tools that consume tables). Every defect is an
// Error{bad_input} that names the file, line, column and field; nothing else escapes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tuner/config/config.hpp"

namespace tunefuzz {

/// The `format` of a results table, written by tune run and checked on reading.
constexpr const char* kResultsFormat = "tunefuzz-results/1";

struct TableWinner {
  std::string template_name;
  std::string id;  ///< Candidate::id()
  std::map<std::string, int64_t> config;
  double median_ms = 0;
  double tflops = 0;
  /// code_sha256 of the image the campaign fuzzed and timed (its sections but the debug information); empty
  /// in tables written before it was recorded. Lets `tune check` and `tune export --embed-kernels` accept a
  /// template whose source changed when the tree still compiles this winner to the same code.
  std::string code_sha256;
};

struct TableRow {
  Problem problem;
  std::string baseline_status;
  double baseline_median_ms = 0;
  double baseline_tflops = 0;
  std::optional<TableWinner> winner;
  double ratio_vs_baseline = 0;  ///< 0 when there is no winner or no baseline
};

struct ResultsTable {
  std::filesystem::path file;
  std::string gpu_name, gpu_arch, driver;
  int64_t sm_count = 0;
  std::string tool_version, tool_commit, date, command;
  std::string compiler;  ///< provenance.compiler, e.g. "nvrtc 13.0"; empty in tables that do not say
  std::map<std::string, std::string> template_hashes;
  std::vector<TableRow> rows;
};

/// Reads a table file (a regular file within kTableByteLimit). It must end with the end line the tool writes
/// (`# end: N problems`, yaml_end_line) and hold N rows: a table cut short is an error, not fewer rows.
ResultsTable read_results_table(const std::filesystem::path& file);
/// The text of a table or collection file, parsed, after the checks above but the row count; the count the
/// end line states is returned in `rows`.
YAML::Node load_table_file(const std::filesystem::path& file, int64_t& rows);
/// Throws Error{bad_input} when `rows` (what the end line states) differs from `read` (rows found).
void check_row_count(const std::filesystem::path& file, int64_t rows, int64_t read);
/// The same from text; `file_name` is used in error messages.
ResultsTable parse_results_table(const std::string& text, const std::string& file_name);
/// The same from a parsed node found at `path` (e.g. `tables[1]`) of `file_name`.
ResultsTable parse_results_table_node(const YAML::Node& root, const std::string& file_name,
                                      const std::string& path);

}  // namespace tunefuzz
