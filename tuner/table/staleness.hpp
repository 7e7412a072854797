// Whether a results table still describes the kernels this tree builds. A table records the hash of each
// template's source it was tuned with and, since this was added, each winner's code digest (code_sha256 of
// the image it fuzzed and timed). A template whose source changed leaves the table's rows as they were when
// the tree compiles every winner of that template to the same code: a comment, or code under a switch no
// winner sets. `tune check` and `tune export --embed-kernels` decide by this; a winner without a recorded
// digest counts as changed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/backend/kernel_cache.hpp"
#include "runtime/dispatch/results_reader.hpp"

namespace tunefuzz {

/// A template of the table whose source in the tree differs from the one the table was tuned with.
struct TemplateChange {
  std::string name;
  std::string table_hash, tree_hash;
  int64_t winners = 0;  ///< distinct winning candidates of this template in the table
  std::vector<std::string>
      changed;  ///< of them, those the tree does not compile to the recorded code: "id: why"
  bool stale() const { return !changed.empty(); }
};

/// The table's changed templates, in name order. The winners of each are compiled from `template_directory`
/// for the table's GPU through `cache` (no GPU needed) and their code digests compared with the table's.
std::vector<TemplateChange> template_changes(const ResultsTable& table,
                                             const std::filesystem::path& template_directory,
                                             const KernelCache& cache);

}  // namespace tunefuzz
