// The campaign's outputs: the results table (results/<gpu>.yaml: one row per problem with the winning config,
// its figures, cuBLAS's figures, the ratio, the fuzz evidence, and provenance), and the stage summary beside
// it
// (<gpu>.stages.yaml: counts per stage and every failure). Format: docs/results-format.md.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "runtime/dispatch/results_reader.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {

struct Provenance {
  std::string tool_version;
  std::string tool_commit;
  std::string date;  ///< ISO 8601, UTC
  std::string command;
  std::string config_file;
  std::string compiler;                                ///< e.g. `nvrtc 13.0`
  std::map<std::string, std::string> template_hashes;  ///< template name → SHA-256 of its source and headers
};

/// The tool's version, the commit it was built from (with `-dirty` if the tree had changes), the date now.
Provenance make_provenance(const std::string& command, const std::string& config_file,
                           const std::string& compiler);

/// The head every report file starts with: its format, the card and driver it ran on, the tool commit and the
/// date now (fuzz run and fuzz mutants reports).
YAML::Node report_head(const std::string& format, const std::string& card, const std::string& driver);

/// Counts per stage and the failures, as stored beside the table.
YAML::Node stage_summary(const SpaceStage& space, const std::vector<CompiledCandidate>& compiled,
                         const std::vector<FuzzedCandidate>* fuzzed,
                         const std::vector<ProblemTiming>* timings);

/// A few lines for the terminal from a stage summary.
std::string format_stage_summary(const YAML::Node& summary);

YAML::Node results_table(const DeviceInfo& device, const Provenance& provenance,
                         const std::vector<ProblemTiming>& timings,
                         const std::vector<FuzzedCandidate>& fuzzed, int64_t fuzz_cases_per_candidate);

/// `results/h100.yaml` → `results/h100.stages.yaml`.
std::filesystem::path stage_summary_path(const std::filesystem::path& table);

}  // namespace tunefuzz
