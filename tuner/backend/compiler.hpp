// The compile half of a backend: kernel source + typed defines + target arch → device image, PTX, the
// compiler log and per-kernel resources (registers, spills, stack, static shared memory). Runs without a
// GPU. The launch half lives in tuner/device (linked only into the worker process).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tuner/templates/kernel_template.hpp"

namespace tunefuzz {

/// A template's source and every header it may include, by content, so that a hash of the request covers
/// all the text the compiler sees.
struct KernelSource {
  std::string file_name;  ///< name used in diagnostics, e.g. `gemm_mma.cu`
  std::string text;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, text)

  /// Reads `file` and every `*.h` beside it from `directory`.
  static KernelSource load(const std::filesystem::path& directory, const std::string& file);
  /// SHA-256 over the source and headers: the "template source hash" of tables and reproducers.
  std::string hash() const;
};

struct CompileRequest {
  const KernelSource* source = nullptr;
  std::vector<Define> defines;
  std::string arch;  ///< `sm_90`, `sm_80`, ...
};

/// What ptxas reports for one kernel.
struct KernelResources {
  int registers = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t static_shared_bytes = 0;
  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
};

struct CompiledKernel {
  std::string key;    ///< cache key: hash of compiler version, arch, options, source, headers and defines
  std::string image;  ///< device code (cubin) to load with the driver
  std::string ptx;
  std::string log;                                   ///< compiler and ptxas output
  std::map<std::string, KernelResources> resources;  ///< by kernel name
  double compile_seconds = 0;
  bool from_cache = false;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  /// Name and version, e.g. `nvrtc 13.0`; part of every cache key.
  virtual std::string version() const = 0;
  /// The cache key of a request, computed without compiling.
  virtual std::string key(const CompileRequest& request) const = 0;
  /// Throws Error{compile} with the compiler log as detail when compilation fails.
  virtual CompiledKernel compile(const CompileRequest& request) const = 0;
};

/// Reads the `ptxas info` lines of a compiler log into per-kernel resources.
std::map<std::string, KernelResources> parse_ptxas_resources(const std::string& log);

}  // namespace tunefuzz
