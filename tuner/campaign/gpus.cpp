#include "tuner/campaign/gpus.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "tuner/campaign/environment.hpp"
#include "tuner/common/error.hpp"

namespace tunefuzz {

namespace {

constexpr int kMostGpus = 1024;

Error bad_choice(const std::string& text, const std::string& why) {
  return Error(ErrorKind::bad_input, "--gpus " + text + ": " + why);
}

}  // namespace

GpuChoice parse_gpu_choice(const std::string& text) {
  GpuChoice choice;
  if (text == "all") {
    choice.all = true;
    return choice;
  }
  const std::string expected = "expected all or a comma-separated list of GPU indices, like 0,2,3";
  if (text.empty() || text.front() == ',' || text.back() == ',') throw bad_choice(text, expected);
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty() || item.size() > 4 ||
        !std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      throw bad_choice(text, expected);
    const int index = std::stoi(item);
    if (index >= kMostGpus) throw bad_choice(text, "GPU " + item + " is out of range (0 to 1023)");
    if (std::find(choice.indices.begin(), choice.indices.end(), index) != choice.indices.end())
      throw bad_choice(text, "GPU " + item + " is named twice");
    choice.indices.push_back(index);
  }
  return choice;
}

std::string gpu_choice_error(const std::string& text) {
  try {
    parse_gpu_choice(text);
    return {};
  } catch (const Error& e) {
    // CLI11 names the option before the message: do not name it twice.
    const std::string prefix = "--gpus ";
    return e.message().starts_with(prefix) ? e.message().substr(prefix.size()) : e.message();
  }
}

std::vector<Gpu> probe_gpus(const GpuChoice& choice, const std::filesystem::path& work_directory,
                            DeviceInfo* first) {
  const ProbeOutcome host = probe_device(work_directory);
  if (!host.device) throw Error(ErrorKind::no_device, "no usable GPU: " + host.reason);
  const int count = host.device->device_count;
  std::vector<int> indices = choice.indices;
  if (choice.all)
    for (int i = 0; i < count; ++i) indices.push_back(i);
  std::string asked = choice.all ? "all" : "";  // the flag's value, as the errors name it
  for (int index : choice.indices) {
    if (!asked.empty()) asked += ',';
    asked += std::to_string(index);
  }
  for (int index : indices)
    if (index >= count)
      throw bad_choice(asked,
                       "there is no GPU " + std::to_string(index) + ": this machine shows " +
                           std::to_string(count) +
                           (count == 1 ? " GPU (0)" : " GPUs (0 to " + std::to_string(count - 1) + ")"));
  std::vector<Gpu> gpus;
  for (int index : indices) {
    const ProbeOutcome probe = probe_device(work_directory, index);
    if (!probe.device)
      throw Error(ErrorKind::no_device, "no usable GPU " + std::to_string(index) + ": " + probe.reason);
    if (gpus.empty() && first) *first = *probe.device;
    gpus.push_back({0, index, probe.device->name, probe.device->uuid});
    // One table is one card model's: its timings and its limits are that model's.
    if (gpus.back().name != gpus.front().name)
      throw bad_choice(asked, "GPU " + std::to_string(gpus.front().index) + " is " + gpus.front().name +
                                  " but GPU " + std::to_string(index) + " is " + gpus.back().name +
                                  "; one campaign's table is one card model's: choose GPUs of one model");
  }
  return gpus;
}

YAML::Node to_yaml(const Gpu& gpu) {
  YAML::Node node;
  if (gpu.rank) node["rank"] = gpu.rank;
  node["index"] = gpu.index;
  node["name"] = gpu.name;
  if (!gpu.uuid.empty()) node["uuid"] = gpu.uuid;
  return node;
}

Gpu gpu_from_yaml(const YAML::Node& node) {
  return {node["rank"].as<int>(0), node["index"].as<int>(), node["name"].as<std::string>(""),
          node["uuid"].as<std::string>("")};
}

std::vector<Gpu> cluster_gpus(std::vector<Gpu> local, const DeviceInfo& device) {
  if (local.empty()) local.push_back({0, -1, device.name, device.uuid});
  const std::vector<YAML::Node> reports = cluster::gather_gpus();
  for (size_t i = 0; i < reports.size(); ++i) {
    const int rank = static_cast<int>(i) + 1;
    const YAML::Node& report = reports[i];
    if (report.IsMap() && report["error"])
      throw Error(ErrorKind::no_device, "rank " + std::to_string(rank) + ": " + report["error"].as<std::string>());
    for (const YAML::Node& g : report) {
      Gpu gpu = gpu_from_yaml(g);
      gpu.rank = rank;
      if (gpu.name != device.name)
        throw Error(ErrorKind::bad_input, "rank " + std::to_string(rank) + "'s GPU " + std::to_string(gpu.index) +
                                              " is " + gpu.name + " but rank 0's is " + device.name +
                                              "; one campaign's table is one card model's: run the ranks on "
                                              "nodes with one model");
      local.push_back(gpu);
    }
  }
  return local;
}

YAML::Node rank_gpu_report(const GpuChoice& choice, const std::filesystem::path& work_directory) {
  YAML::Node report(YAML::NodeType::Sequence);
  try {
    std::vector<Gpu> gpus;
    if (choice.given()) {
      gpus = probe_gpus(choice, work_directory);
    } else {
      const ProbeOutcome probe = probe_device(work_directory);
      if (!probe.device) throw Error(ErrorKind::no_device, "no usable GPU: " + probe.reason);
      gpus.push_back({0, -1, probe.device->name, probe.device->uuid});
    }
    for (const Gpu& gpu : gpus) report.push_back(to_yaml(gpu));
  } catch (const Error& e) {
    report = YAML::Node();
    report["error"] = e.message();
  }
  return report;
}

std::string describe(const std::vector<Gpu>& gpus) {
  std::string out;
  for (const Gpu& gpu : gpus)
    out += (out.empty() ? "" : ", ") + (gpu.rank ? "rank " + std::to_string(gpu.rank) + " GPU " : std::string()) +
           (gpu.index < 0 ? std::string("default") : std::to_string(gpu.index)) + " (" + gpu.name +
           (gpu.uuid.empty() ? "" : ", " + gpu.uuid) + ")";
  return out;
}

}  // namespace tunefuzz
