// On-disk cache of compiled kernels, keyed by Compiler::key (compiler version, arch, options, source,
// headers, defines). Each entry is four files: <key>.cubin (the device image, whichever the backend: a cubin
// or an AMDGPU code object), <key>.ptx (empty for hiprtc), <key>.log (the compiler's output) and <key>.yaml,
// the last holding checksums of the other three and the resources; it is written last (via rename), so a
// half-written entry is never seen. An entry whose checksums do not match is reported and treated as a miss.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "runtime/backend/compiler.hpp"

namespace tunefuzz {

/// An exclusive flock on `path` (made, with its folder, if missing), waited for and held while the object
/// lives; closing the file releases it. `what` names the lock in errors.
class FileLock {
 public:
  FileLock(const std::filesystem::path& path, const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path directory);

  /// $TUNEFUZZ_CACHE_DIR, else $XDG_CACHE_HOME/tunefuzz, else ~/.cache/tunefuzz.
  static std::filesystem::path default_directory();

  const std::filesystem::path& directory() const { return directory_; }
  /// The entry for `key`, or nullopt when absent or damaged (`on_damage` hears why).
  std::optional<CompiledKernel> load(const std::string& key,
                                     const std::function<void(const std::string&)>& on_damage = {}) const;
  void store(const CompiledKernel& kernel) const;
  /// Path of the image file of an entry (what workers load).
  std::filesystem::path image_path(const std::string& key) const;
  /// Whether an entry for `key` is there (not whether it is whole: load() says that).
  bool contains(const std::string& key) const;

  /// How long the last compile of a request of the same shape took (`shape`: a digest of the request but its
  /// source text, e.g. the template's file name, the defines and the target), if one was recorded. A hint
  /// for ordering work, nothing more: compile stages start the longest first, so that no long compile is
  /// left running alone at the end while the other cores wait.
  std::optional<double> compile_seconds_of(const std::string& shape) const;
  void record_compile_seconds(const std::string& shape, double seconds) const;

  /// An exclusive lock on one key (flock on <key>.lock), held while it lives: two campaigns sharing the cache
  /// do not compile the same key at once; the second waits, then finds the entry.
  class KeyLock {
   public:
    KeyLock(const KernelCache& cache, const std::string& key);

   private:
    FileLock lock_;
  };

 private:
  std::filesystem::path directory_;
};

/// Writes `data` to `path` atomically: a temporary file beside it, then rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& data);
std::string read_whole_file(const std::filesystem::path& path);

}  // namespace tunefuzz
