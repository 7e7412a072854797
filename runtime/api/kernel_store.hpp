// The kernels a handle can run: the table's rows as the dispatch reads them, the images compiled ahead of
// time, and each candidate loaded once on its platform, from its embedded image or compiled on first use
// through the persistent kernel cache (the template's source from the installed templates). A row whose
// winner has no image and whose template changed since the table was tuned is marked unusable unless that
// template still compiles it to the code the table recorded (compiled when the handle is made, to compare):
// the dispatch passes it over, saying why, rather than run code no campaign fuzzed.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend/compiler.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "runtime/dispatch/platform.hpp"
#include "tunefuzz/runtime.hpp"

namespace tunefuzz::runtime {

/// $TUNEFUZZ_TEMPLATE_DIR, else share/tunefuzz/templates beside the directory holding this library (the
/// install prefix's, or the build folder's).
std::filesystem::path installed_template_directory();

class KernelStore {
 public:
  /// Throws Error{bad_input} naming the row for a row that does not parse.
  KernelStore(const Table& table, const dispatch::Platform& platform, const Options& options);

  const std::vector<dispatch::Row>& rows() const { return rows_; }
  /// Whether an image compiled ahead of time for this GPU holds `candidate`.
  bool has_image(const Candidate& candidate) const;
  /// The candidate loaded on the platform; the first call per candidate loads it (other callers wait).
  const dispatch::Kernel& get(const Candidate& candidate);

 private:
  struct Slot {
    std::once_flag once;
    std::unique_ptr<dispatch::Kernel> kernel;
  };
  std::string image_of(const Candidate& candidate);
  std::string compile(const Candidate& candidate);
  /// The installed source of a template (compile_mutex_ held).
  const KernelSource& source_of(const KernelTemplate& t);
  /// Marks the rows whose winner would be compiled from a template other than the one it was tuned with,
  /// unless the tree's template compiles it to the code the table recorded (TunedRow::code_sha256).
  void mark_stale_rows(const std::vector<TunedRow>& tuned);

  const dispatch::Platform& platform_;
  std::vector<dispatch::Row> rows_;
  std::map<std::pair<std::string, std::string>, KernelImage> images_;  ///< by (candidate id, target)
  std::filesystem::path templates_;
  KernelCache cache_;
  std::mutex slots_mutex_;  ///< guards slots_
  std::map<std::string, std::unique_ptr<Slot>> slots_;
  std::mutex compile_mutex_;  ///< guards templates_, compiler_ and sources_
  std::unique_ptr<Compiler> compiler_;
  std::map<std::string, KernelSource> sources_;
};

}  // namespace tunefuzz::runtime
