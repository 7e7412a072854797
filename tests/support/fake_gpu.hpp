// What the campaign tests without a GPU share: a temporary folder holding a copy of
// tests/fixtures/fake_gpu_worker.sh, named by TUNEFUZZ_WORKER, and of tests/fixtures/fake_sanitizer.sh, named
// by TUNEFUZZ_COMPUTE_SANITIZER, with a kernel cache of its own (a copy of the warm smoke cache), so `tune`
// and `fuzz` run whole campaigns (the winners' sanitizer replays included) against it.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/warm_cache.hpp"

namespace tunefuzz::test {

/// The `gpu:` section of a config for the card the fake worker reports (an H100), for tests that write their
/// own configs.
inline const char* kFakeGpuSection = R"(gpu:
  name: NVIDIA H100 80GB HBM3
  arch: sm_90
  limits:
    shared_memory_per_block_optin: 232448
    shared_memory_per_sm: 233472
    registers_per_sm: 65536
    max_threads_per_block: 1024
    max_threads_per_sm: 2048
    max_blocks_per_sm: 32
    sm_count: 132
)";

/// Makes `root` (named after `name` and this process), installs the fake worker there and points the
/// environment at it; `step_s` is how long each of its jobs takes. Returns the folder.
inline std::filesystem::path install_fake_gpu(const std::string& name, const std::string& step_s) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tunefuzz-" + name + "-" + std::to_string(getpid()));
  fs::create_directories(root);
  for (const char* script : {"fake_gpu_worker.sh", "fake_sanitizer.sh", "serve_jobs.sh"}) {
    fs::copy_file(fs::path(TUNEFUZZ_SOURCE_DIR) / "tests" / "fixtures" / script, root / script,
                  fs::copy_options::overwrite_existing);
    fs::permissions(root / script, fs::perms::owner_all);
  }
  ::setenv("TUNEFUZZ_WORKER", (root / "fake_gpu_worker.sh").c_str(), 1);
  ::setenv("TUNEFUZZ_COMPUTE_SANITIZER", (root / "fake_sanitizer.sh").c_str(), 1);
  copy_warm_cache(root / "cache");
  ::setenv("TUNEFUZZ_CACHE_DIR", (root / "cache").c_str(), 1);
  ::setenv("FAKE_STEP_S", step_s.c_str(), 1);
  return root;
}

/// Undoes install_fake_gpu: the environment, then the folder.
inline void remove_fake_gpu(const std::filesystem::path& root) {
  ::unsetenv("TUNEFUZZ_WORKER");
  ::unsetenv("TUNEFUZZ_COMPUTE_SANITIZER");
  ::unsetenv("TUNEFUZZ_CACHE_DIR");
  ::unsetenv("FAKE_STEP_S");
  std::filesystem::remove_all(root);
}

}  // namespace tunefuzz::test
