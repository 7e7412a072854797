// The verdict store: what campaigns decided, kept across campaigns so that a re-run costs only what changed.
// An entry is a verdict (a candidate's fuzz result, a problem's timing, one candidate's screen on a problem,
// a winner's replays under one of compute-sanitizer's tools, cuBLAS's check on a problem's inputs) filed
// under the fields that decide it (its key: the image's hash, the budgets and seed, the card and driver, ...;
// tuner/campaign/verdict_keys says which). Change any field and the entry is not found; nothing else matters.
//
// Each entry is one file, <directory>/<kind>/<digest of the key>.yaml: the key and the verdict as YAML, then
// a SHA-256 line over both and an end line, written to a temporary file and renamed, so a reader sees a whole
// entry or none. A damaged entry (a wrong checksum, no end line, another key's, not a regular file) is
// reported and treated as absent; storing the verdict again repairs it. Campaigns sharing a store lock a key
// (flock) while they work out its verdict, so two never do the same work at once.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "runtime/backend/kernel_cache.hpp"  // FileLock

namespace tunefuzz {

/// The fields that decide a verdict, as name and value, in a fixed order.
using VerdictKey = std::vector<std::pair<std::string, std::string>>;

enum class VerdictKind { fuzz, timing, sanitizer, screen, baseline };
const char* to_string(VerdictKind kind);

class VerdictStore {
 public:
  explicit VerdictStore(std::filesystem::path directory);

  /// $TUNEFUZZ_VERDICT_DIR, else a `verdicts` folder in the kernel cache's directory
  /// ($TUNEFUZZ_CACHE_DIR, $XDG_CACHE_HOME/tunefuzz or ~/.cache/tunefuzz).
  static std::filesystem::path default_directory();

  const std::filesystem::path& directory() const { return directory_; }
  /// The file an entry lives in.
  std::filesystem::path entry_path(VerdictKind kind, const VerdictKey& key) const;

  /// The verdict filed under `key`, or nullopt when there is none or it is damaged (`on_damage` hears why).
  std::optional<YAML::Node> load(VerdictKind kind, const VerdictKey& key,
                                 const std::function<void(const std::string&)>& on_damage = {}) const;
  void store(VerdictKind kind, const VerdictKey& key, const YAML::Node& verdict) const;

  /// An exclusive lock on one key (flock on the entry's .lock file), held while it lives.
  class KeyLock {
   public:
    KeyLock(const VerdictStore& store, VerdictKind kind, const VerdictKey& key);

   private:
    FileLock lock_;
  };

 private:
  std::filesystem::path directory_;
};

/// Prints why an entry was treated as absent on standard error: the `on_damage` campaigns pass to load().
void print_damage(const std::string& why);

/// The SHA-256 digest naming a key's entry (over the kind and every field, length-prefixed).
std::string verdict_digest(VerdictKind kind, const VerdictKey& key);

}  // namespace tunefuzz
