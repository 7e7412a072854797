#include "runtime/backend/code_object.hpp"

#include <amd_comgr.h>

#include <algorithm>
#include <optional>

namespace tunefuzz {

namespace {

void check(amd_comgr_status_t status, const char* what) {
  if (status == AMD_COMGR_STATUS_SUCCESS) return;
  const char* text = nullptr;
  amd_comgr_status_string(status, &text);
  throw Error(ErrorKind::compile, std::string(what) + " failed: " + (text ? text : "unknown comgr status"));
}

/// One comgr metadata node, destroyed with its owner.
class Node {
 public:
  explicit Node(amd_comgr_metadata_node_t handle) : handle_(handle) {}
  ~Node() { amd_comgr_destroy_metadata(handle_); }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  amd_comgr_metadata_kind_t kind() const {
    amd_comgr_metadata_kind_t kind = AMD_COMGR_METADATA_KIND_NULL;
    check(amd_comgr_get_metadata_kind(handle_, &kind), "amd_comgr_get_metadata_kind");
    return kind;
  }

  /// The value of `key` in a map, or nullopt when the map has no such key.
  std::optional<amd_comgr_metadata_node_t> find(const char* key) const {
    amd_comgr_metadata_node_t value;
    if (amd_comgr_metadata_lookup(handle_, key, &value) != AMD_COMGR_STATUS_SUCCESS) return std::nullopt;
    return value;
  }

  std::string string() const {
    size_t size = 0;
    check(amd_comgr_get_metadata_string(handle_, &size, nullptr), "amd_comgr_get_metadata_string");
    std::string text(size, '\0');
    check(amd_comgr_get_metadata_string(handle_, &size, text.data()), "amd_comgr_get_metadata_string");
    if (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }

  size_t list_size() const {
    size_t size = 0;
    check(amd_comgr_get_metadata_list_size(handle_, &size), "amd_comgr_get_metadata_list_size");
    return size;
  }

  amd_comgr_metadata_node_t at(size_t index) const {
    amd_comgr_metadata_node_t item;
    check(amd_comgr_index_list_metadata(handle_, index, &item), "amd_comgr_index_list_metadata");
    return item;
  }

 private:
  amd_comgr_metadata_node_t handle_;
};

/// An integer field of a kernel's metadata map; `fallback` when absent (older code objects lack the spill
/// counts).
int64_t integer_field(const Node& kernel, const char* key, std::optional<int64_t> fallback) {
  const auto value = kernel.find(key);
  if (!value) {
    if (fallback) return *fallback;
    throw Error(ErrorKind::compile, std::string("code object metadata: a kernel has no ") + key);
  }
  const Node node(*value);
  const std::string text = node.string();
  try {
    size_t used = 0;
    const int64_t number = std::stoll(text, &used);
    if (used == text.size()) return number;
  } catch (const std::exception&) {
  }
  throw Error(ErrorKind::compile,
              std::string("code object metadata: ") + key + " is not an integer: " + text);
}

}  // namespace

std::map<std::string, KernelResources> read_code_object_resources(const std::string& image) {
  amd_comgr_data_t data;
  check(amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data), "amd_comgr_create_data");
  struct Release {
    amd_comgr_data_t data;
    ~Release() { amd_comgr_release_data(data); }
  } release{data};
  check(amd_comgr_set_data(data, image.size(), image.data()), "amd_comgr_set_data");
  amd_comgr_metadata_node_t root_handle;
  check(amd_comgr_get_data_metadata(data, &root_handle), "reading the code object's metadata");
  const Node root(root_handle);
  const auto kernels_handle =
      root.kind() == AMD_COMGR_METADATA_KIND_MAP ? root.find("amdhsa.kernels") : std::nullopt;
  if (!kernels_handle)
    throw Error(ErrorKind::compile,
                "the code object has no amdhsa.kernels metadata (code object v3 or later)");
  const Node kernels(*kernels_handle);
  std::map<std::string, KernelResources> out;
  for (size_t i = 0; i < kernels.list_size(); ++i) {
    const Node kernel(kernels.at(i));
    const auto name = kernel.find(".name");
    if (!name) throw Error(ErrorKind::compile, "code object metadata: a kernel has no .name");
    KernelResources& r = out[Node(*name).string()];
    // On gfx90a and later VGPRs and AGPRs share one file and .vgpr_count is their total (aligned VGPRs plus
    // AGPRs); earlier targets have separate files, and the VGPRs are what limits occupancy.
    r.registers = static_cast<int>(integer_field(kernel, ".vgpr_count", std::nullopt));
    r.scalar_registers = static_cast<int>(integer_field(kernel, ".sgpr_count", std::nullopt));
    r.static_shared_bytes = integer_field(kernel, ".group_segment_fixed_size", std::nullopt);
    r.stack_frame_bytes = integer_field(kernel, ".private_segment_fixed_size", std::nullopt);
    r.spilled_registers =
        integer_field(kernel, ".vgpr_spill_count", 0) + integer_field(kernel, ".sgpr_spill_count", 0);
  }
  return out;
}

std::vector<std::string> comgr_targets() {
  size_t count = 0;
  check(amd_comgr_get_isa_count(&count), "amd_comgr_get_isa_count");
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    check(amd_comgr_get_isa_name(i, &name), "amd_comgr_get_isa_name");
    std::string isa = name ? name : "";
    const size_t dashes = isa.rfind("--");
    if (dashes == std::string::npos) continue;
    std::string processor = isa.substr(dashes + 2);
    processor = processor.substr(0, processor.find(':'));
    if (std::find(out.begin(), out.end(), processor) == out.end()) out.push_back(processor);
  }
  return out;
}

std::string comgr_version() {
  size_t major = 0, minor = 0;
  amd_comgr_get_version(&major, &minor);
  return "comgr " + std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace tunefuzz
