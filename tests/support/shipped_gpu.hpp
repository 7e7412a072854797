// A config for the H200 as the shipped config describes it (configs/h200.yaml's gpu block), with a test's own
// problems and template searches: for the tests of what the campaign stages make of a config.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

#include "tuner/config/config.hpp"

namespace tunefuzz::test {

/// `problems` and `templates` are YAML list items (each line indented two spaces); `name` names the config
/// file in error messages and its output table.
inline Config h200_config_with(const std::string& problems, const std::string& templates,
                               const std::string& name) {
  std::ifstream file(TUNEFUZZ_SOURCE_DIR "/configs/h200.yaml");
  const std::string shipped((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string gpu = shipped.substr(0, shipped.find("\nproblems:"));
  return parse_config(
      gpu + "\noutput: " + name + "-table.yaml\nproblems:\n" + problems + "templates:\n" + templates,
      name + ".yaml");
}

}  // namespace tunefuzz::test
