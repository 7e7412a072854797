// Reproducer files: everything needed to replay one fuzz failure anywhere — the candidate, the shrunk and the
// first failing case, the failure, the seed and RapidCheck's reproduce string, the template source hash, the
// card and driver it failed on — with the generated source (the template behind its #defines) and the PTX
// beside it. `fuzz replay FILE` runs it again.
#pragma once

#include <filesystem>
#include <string>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

constexpr const char* kReproducerFormat = "tunefuzz-reproducer/1";

struct Reproducer {
  std::string candidate;
  std::string arch;
  FuzzFailure failure;
  uint64_t seed = 0;
  std::string template_hash;
  std::string card;
  std::string driver;
};

/// Writes `<directory>/<name>.yaml`, `.cu` (source with its defines) and `.ptx`; returns the YAML's path.
std::filesystem::path write_reproducer(const std::filesystem::path& directory, const Reproducer& reproducer,
                                       const KernelSource& source, const std::string& ptx);

/// Reads a reproducer; malformed input throws Error{bad_input} naming the file, line and field.
Reproducer read_reproducer(const std::filesystem::path& file);

}  // namespace tunefuzz
