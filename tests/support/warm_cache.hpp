// The kernel cache of configs/smoke.yaml that the CTest fixture tests/fixtures/warm_smoke_cache.sh compiled
// once: a campaign test copies it into its own cache folder, so it does not pay the cold NVRTC compile again
// and still owns its cache (it may add to it, corrupt it or count what it finds there). Run by hand, without
// the fixture, a test simply starts cold.
#pragma once

#include <filesystem>

namespace tunefuzz::test {

/// Copies the warm smoke cache into `cache` when the fixture made one and `cache` does not exist yet.
inline void copy_warm_cache(const std::filesystem::path& cache) {
  namespace fs = std::filesystem;
  const fs::path warm = fs::path(TUNEFUZZ_BINARY_DIR) / "test-cache" / "smoke";
  if (!fs::is_directory(warm) || fs::exists(cache)) return;
  fs::create_directories(cache.parent_path());
  fs::copy(warm, cache, fs::copy_options::recursive);
}

}  // namespace tunefuzz::test
