// A committed table with each template hash set to the tree's: current as far as the template sources go,
// whatever changed in them since it was measured. For tests of what refuses stale tables (tune export
// --embed-kernels, the runtime compiling on first use) that need one it accepts; never a result.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/backend/compiler.hpp"

namespace tunefuzz::test {

inline void write_current_table(const std::filesystem::path& table, const std::filesystem::path& templates,
                                const std::filesystem::path& out) {
  std::ifstream in(table);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  for (const KernelTemplate* t : all_templates()) {
    const std::string key = "    " + t->name + ": ";
    const size_t at = text.find(key);
    if (at == std::string::npos) continue;
    const std::string hash = KernelSource::load(templates, t->source_file).hash();
    text.replace(at + key.size(), text.find('\n', at) - at - key.size(), hash);
  }
  std::ofstream(out) << text;
}

}  // namespace tunefuzz::test
