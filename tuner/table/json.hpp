// YAML trees as JSON, for `--json` output and `tune export --format json`. yaml-cpp keeps every scalar as
// text; a scalar that reads as a number, true, false or null is written bare, anything else as a string.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

namespace tunefuzz {

/// Pretty-printed JSON (two-space indent) with a final newline.
std::string to_json(const YAML::Node& node);

}  // namespace tunefuzz
