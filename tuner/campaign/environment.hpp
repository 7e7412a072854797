// Where a campaign finds its inputs (templates, shipped configs) and what machine it runs on. Templates and
// configs travel with the executables (share/tunefuzz beside bin/), so a build folder can be moved to a GPU
// machine and still find them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tuner/config/config.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {

/// $TUNEFUZZ_TEMPLATE_DIR, else <executable>/../share/tunefuzz/templates.
std::filesystem::path template_directory();
/// <executable>/../share/tunefuzz/configs.
std::filesystem::path shipped_config_directory();

/// A folder under the system's temporary directory, removed with the object: the GPU probe runs in one, so a
/// run that finds no GPU leaves nothing behind.
struct ScratchDirectory {
  ScratchDirectory();
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  std::filesystem::path path;
};

/// The GPU as a worker process sees it, or the reason there is none (no driver, no device, no worker binary).
struct ProbeOutcome {
  std::optional<DeviceInfo> device;
  std::string reason;
};
/// `gpu` >= 0: the worker is shown only that GPU (run_worker), so it reports that card.
ProbeOutcome probe_device(const std::filesystem::path& work_directory, int gpu = -1);

/// Human-readable differences between the limits a config states and those the driver reports.
std::vector<std::string> limit_mismatches(const GpuSpec& configured, const DeviceInfo& actual);

/// The shipped config written for this card (gpu.name equal to the device name), or nullopt.
std::optional<std::filesystem::path> find_config_for(const DeviceInfo& device);

}  // namespace tunefuzz
