#include "tuner/campaign/environment.hpp"

#include <algorithm>
#include <cstdlib>

#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

namespace {
fs::path executable_directory() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}
}  // namespace

fs::path template_directory() {
  if (const char* dir = std::getenv("TUNEFUZZ_TEMPLATE_DIR"); dir && *dir) return dir;
  return executable_directory().parent_path() / "share" / "tunefuzz" / "templates";
}

fs::path shipped_config_directory() {
  return executable_directory().parent_path() / "share" / "tunefuzz" / "configs";
}

ScratchDirectory::ScratchDirectory() {
  std::string name = (fs::temp_directory_path() / "tunefuzz-probe-XXXXXX").string();
  if (!::mkdtemp(name.data())) throw Error(ErrorKind::io, "cannot create a folder under " + name);
  path = name;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

ProbeOutcome probe_device(const fs::path& work_directory, int gpu) {
  fs::create_directories(work_directory);
  YAML::Node job;
  job["kind"] = "probe";
  const std::string name = gpu < 0 ? "probe" : "probe-" + std::to_string(gpu);
  const WorkerOutcome outcome = run_worker(job, work_directory, name, 120, {}, 0, gpu);
  ProbeOutcome probe;
  if (outcome.end == WorkerOutcome::End::finished) {
    probe.device = device_info_from_yaml(outcome.result);
    return probe;
  }
  if (outcome.result && outcome.result["error"])
    probe.reason = outcome.result["error"]["message"].as<std::string>();
  else if (outcome.stderr_tail.find("libcuda") != std::string::npos)
    probe.reason = "the CUDA driver (libcuda.so.1) is not installed on this machine";
  else
    probe.reason =
        "the worker " + outcome.describe() + (outcome.stderr_tail.empty() ? "" : ": " + outcome.stderr_tail);
  while (!probe.reason.empty() && probe.reason.back() == '\n') probe.reason.pop_back();
  return probe;
}

std::vector<std::string> limit_mismatches(const GpuSpec& configured, const DeviceInfo& actual) {
  std::vector<std::string> out;
  const auto compare = [&](const char* field, int64_t want, int64_t have) {
    if (want != have)
      out.push_back(std::string("gpu.limits.") + field + ": config says " + std::to_string(want) +
                    ", the driver reports " + std::to_string(have));
  };
  const GpuLimits& c = configured.limits;
  const GpuLimits& a = actual.limits;
  compare("shared_memory_per_block_optin", c.shared_memory_per_block_optin, a.shared_memory_per_block_optin);
  compare("shared_memory_per_sm", c.shared_memory_per_sm, a.shared_memory_per_sm);
  compare("shared_memory_reserved_per_block", c.shared_memory_reserved_per_block,
          a.shared_memory_reserved_per_block);
  compare("registers_per_sm", c.registers_per_sm, a.registers_per_sm);
  compare("max_threads_per_block", c.max_threads_per_block, a.max_threads_per_block);
  compare("max_threads_per_sm", c.max_threads_per_sm, a.max_threads_per_sm);
  compare("max_blocks_per_sm", c.max_blocks_per_sm, a.max_blocks_per_sm);
  compare("sm_count", c.sm_count, a.sm_count);
  if (configured.name != actual.name)
    out.push_back("gpu.name: config says '" + configured.name + "', the driver reports '" + actual.name +
                  "'");
  return out;
}

std::optional<fs::path> find_config_for(const DeviceInfo& device) {
  for (const fs::path& dir : {fs::path("configs"), shipped_config_directory()}) {
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".yaml") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      try {
        if (load_config(file).gpu.name == device.name) return file;
      } catch (const Error&) {
        // a broken config is not the one we are looking for; `tune run FILE` reports its errors
      }
    }
  }
  return std::nullopt;
}

}  // namespace tunefuzz
