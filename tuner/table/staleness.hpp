// Whether a results table still describes the kernels this tree builds. A table records the hash of each
// template's source it was tuned with and, since this was added, each winner's code digest (code_sha256 of
// the image it fuzzed and timed). A template whose source changed leaves the table's rows as they were when
// the tree compiles every winner of that template to the same code: a comment, or code under a switch no
// winner sets. `tune check` and `tune export --embed-kernels` decide by this; a winner without a recorded
// digest counts as changed; `tune check --record-digests` finds the digests of such winners while the tree
// still has the sources they were tuned with.
#pragma once

#include <filesystem>
#include <map>
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

/// Code digests for the table's winners that record none (tables written before digests were), found by
/// compiling each one again: only where the tree's source of its template is the one the table was tuned with
/// (the same hash) and this tool's compiler is the one that compiled it (provenance.compiler), so the image
/// is the one the campaign fuzzed and timed. Each other winner without a digest is named in `skipped` with
/// why.
struct DigestBackfill {
  std::map<std::string, std::string> digests;  ///< winner id -> code_sha256
  std::vector<std::string> skipped;            ///< "id: why"
};
/// `text` (a table file) with a `code_sha256` line added to each winner named in `digests` that has none,
/// after the winner's last line and at its keys' indentation; every other byte as it was (comments included).
/// Throws Error{bad_input} naming `file_name` when the result does not read back with those digests (a table
/// laid out other than the tool writes them).
std::string with_code_digests(const std::string& text, const std::map<std::string, std::string>& digests,
                              const std::string& file_name);
DigestBackfill missing_code_digests(const ResultsTable& table,
                                    const std::filesystem::path& template_directory,
                                    const KernelCache& cache);

}  // namespace tunefuzz
