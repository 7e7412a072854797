// YAML trees as JSON, for `--json` output and `tune export --format json`. yaml-cpp keeps every scalar as
// text; a scalar that reads as a number, true, false or null is written bare, anything else as a string.
#pragma once

#include <cstddef>
#include <string>

#include <yaml-cpp/yaml.h>

namespace tunefuzz {

/// Pretty-printed JSON (two-space indent) with a final newline; always valid UTF-8 (bytes of the text that
/// are not well-formed UTF-8 become U+FFFD).
std::string to_json(const YAML::Node& node);

/// Length of the well-formed UTF-8 sequence starting at byte `i` of `text` (1-4), or 0 when the bytes there
/// are not one (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
size_t utf8_sequence_length(const std::string& text, size_t i);

}  // namespace tunefuzz
