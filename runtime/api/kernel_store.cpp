#include "runtime/api/kernel_store.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "runtime/backend/compile_candidate.hpp"
#include "runtime/backend/compiler_for.hpp"
#include "runtime/backend/elf_image.hpp"

namespace tunefuzz::runtime {

namespace fs = std::filesystem;

fs::path installed_template_directory() {
  if (const char* dir = std::getenv("TUNEFUZZ_TEMPLATE_DIR"); dir && *dir) return dir;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&installed_template_directory), &info) == 0 || !info.dli_fname)
    throw Error(ErrorKind::io, "cannot tell where the tunefuzz runtime library lies (dladdr failed): set "
                               "TUNEFUZZ_TEMPLATE_DIR or Options::template_directory");
  // TUNEFUZZ_TEMPLATES_FROM_LIBRARY: the templates' path relative to the library's folder (CMake computes
  // it from the install layout, which the build folder mirrors).
  return fs::weakly_canonical(fs::path(info.dli_fname).parent_path() / TUNEFUZZ_TEMPLATES_FROM_LIBRARY);
}

KernelStore::KernelStore(const Table& table, const dispatch::Platform& platform, const Options& options)
    : platform_(platform),
      templates_(options.template_directory.empty() ? fs::path() : fs::path(options.template_directory)),
      cache_(options.cache_directory.empty() ? KernelCache::default_directory()
                                             : fs::path(options.cache_directory)) {
  for (const TunedRow& r : table.rows)
    rows_.push_back(dispatch::make_row(r.card, r.arch, r.problem, r.m, r.n, r.k, r.precision, r.output,
                                       r.layout, r.candidate));
  for (const KernelImage& image : table.images) images_.emplace(std::pair{image.candidate, image.arch}, image);
  mark_stale_rows(table.rows);
}

void KernelStore::mark_stale_rows(const std::vector<TunedRow>& tuned) {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Candidate& candidate = rows_[i].candidate;
    const std::string& tuned_hash = tuned[i].template_hash;
    if (tuned_hash.empty() || has_image(candidate)) continue;
    std::string installed;
    {
      const std::lock_guard lock(compile_mutex_);
      installed = source_of(*candidate.kernel_template).hash();
    }
    if (installed == tuned_hash) continue;
    // The source changed; the row stays usable if it still compiles to the code the table timed (compiled
    // now, through the kernel cache, so its first call finds the image there).
    std::string why = code_difference(tuned[i].code_sha256, "");
    if (!tuned[i].code_sha256.empty()) {
      try {
        why = code_difference(tuned[i].code_sha256, compile(candidate));
        if (why.empty()) continue;
      } catch (const Error& e) {
        why = "it does not compile here: " + e.message();
      }
    }
    rows_[i].unusable = "its template " + candidate.kernel_template->name +
                        " changed since the table was tuned (" + tuned_hash.substr(0, 12) + ", installed " +
                        installed.substr(0, 12) + ") and " + why +
                        ": not run untested; tune again, or ship images compiled when it was tuned";
  }
}

const KernelSource& KernelStore::source_of(const KernelTemplate& t) {
  if (templates_.empty()) templates_ = installed_template_directory();
  auto source = sources_.find(t.source_file);
  if (source == sources_.end()) source = sources_.emplace(t.source_file, KernelSource::load(templates_, t.source_file)).first;
  return source->second;
}

bool KernelStore::has_image(const Candidate& candidate) const {
  const std::string arch = candidate.kernel_template->compile_arch(platform_.device().arch);
  return images_.count({candidate.id(), arch}) > 0;
}

const dispatch::Kernel& KernelStore::get(const Candidate& candidate) {
  Slot* slot = nullptr;
  {
    const std::lock_guard lock(slots_mutex_);
    auto& entry = slots_[candidate.id()];
    if (!entry) entry = std::make_unique<Slot>();
    slot = entry.get();
  }
  // A load that throws leaves the flag unset: the next call tries again and reports its own error.
  std::call_once(slot->once, [&] { slot->kernel = platform_.load(candidate, image_of(candidate)); });
  return *slot->kernel;
}

std::string KernelStore::image_of(const Candidate& candidate) {
  const std::string arch = candidate.kernel_template->compile_arch(platform_.device().arch);
  if (auto found = images_.find({candidate.id(), arch}); found != images_.end())
    return std::string(reinterpret_cast<const char*>(found->second.data), found->second.size);
  return compile(candidate);
}

std::string KernelStore::compile(const Candidate& candidate) {
  const std::lock_guard lock(compile_mutex_);
  const KernelSource& source = source_of(*candidate.kernel_template);
  if (!compiler_) compiler_ = compiler_for(GpuSpec{platform_.device().name, platform_.device().arch, {}, {}, {}});
  return compile_candidate(candidate, platform_.device().arch, source, *compiler_, cache_).image;
}

}  // namespace tunefuzz::runtime
