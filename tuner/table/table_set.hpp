// One or more per-GPU results tables read as a unit: a table written by `tune run`, or a collection written
// by `tune merge` when its inputs came from different GPUs (format tunefuzz-results-collection/1, a list of
// tables). Export, show and report take either.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "runtime/dispatch/results_reader.hpp"

namespace tunefuzz {

constexpr const char* kCollectionFormat = "tunefuzz-results-collection/1";

struct TableSet {
  std::vector<ResultsTable> tables;   ///< checked by the reader
  std::vector<YAML::Node> documents;  ///< the same tables as YAML, for writers that keep every field
};

/// Reads a results table or a collection; malformed input throws Error{bad_input} naming file, line, field.
TableSet read_table_set(const std::filesystem::path& file);

}  // namespace tunefuzz
