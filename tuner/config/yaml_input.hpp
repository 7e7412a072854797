// Loads a YAML document a user can hand the tool (config, table, journal line, reproducer, cache entry)
// without letting its shape do harm: the text must be NUL-free and hold one document whose node count,
// with every alias counted as the nodes it stands for (a "billion laughs" bomb), stays under a bound,
// checked on the parser's event stream before any node is built; an unclosed quote is an error where it
// opens. Every refusal is Error{bad_input} naming file, line and column.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

namespace tunefuzz {

/// Most nodes a document may expand to: configs and reproducers, and tables, collections and journals.
inline constexpr uint64_t kDocumentNodeLimit = 100'000;
inline constexpr uint64_t kTableNodeLimit = 500'000;

/// Parses `text` (from `file`) into a node; throws Error{bad_input} on syntax errors, NUL bytes, unclosed
/// quotes, a second document, or more than `node_limit` nodes with aliases expanded.
YAML::Node load_yaml_text(const std::string& text, const std::string& file, uint64_t node_limit);

/// read_input_file, then load_yaml_text.
YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what, int64_t byte_limit,
                          uint64_t node_limit);

}  // namespace tunefuzz
