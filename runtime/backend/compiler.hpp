// The compile half of a backend: kernel source + typed defines + target arch → device image, its assembly
// text (PTX for NVRTC), the compiler log and per-kernel resources (registers, spills, stack, static shared
// memory). Runs without a GPU. Backends: NVRTC for `sm_*` targets, hiprtc for `gfx*` ones (compiler_for).
// The launch half lives in tuner/device (linked only into the worker process).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// A template's source and every header it may include, by content, so that a hash of the request covers
/// all the text the compiler sees.
struct KernelSource {
  std::string file_name;  ///< name used in diagnostics, e.g. `gemm_mma.cu`
  std::string text;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, text)

  /// Reads `file` from `directory` and the headers beside it that it includes (with quotes), transitively.
  static KernelSource load(const std::filesystem::path& directory, const std::string& file);
  /// SHA-256 over the source and headers: the "template source hash" of tables and reproducers.
  std::string hash() const;
};

struct CompileRequest {
  const KernelSource* source = nullptr;
  std::vector<Define> defines;
  std::string arch;  ///< `sm_90`, `sm_80`, ... (NVRTC) or `gfx90a`, ... (hiprtc)
};

/// What the compiler reports for one kernel: ptxas -v (NVRTC) or the code object's metadata (hiprtc).
struct KernelResources {
  int registers = 0;                ///< per thread: registers (NVIDIA); VGPRs, AGPRs included (AMD)
  int64_t stack_frame_bytes = 0;    ///< per thread: stack frame (NVIDIA); private segment (AMD)
  int64_t spill_store_bytes = 0;    ///< NVIDIA only: ptxas counts spills in bytes
  int64_t spill_load_bytes = 0;     ///< NVIDIA only
  int64_t static_shared_bytes = 0;  ///< shared memory (LDS) the kernel declares statically
  int scalar_registers = 0;         ///< AMD only: SGPRs per wavefront
  int64_t spilled_registers = 0;    ///< AMD only: VGPRs + SGPRs spilled to scratch (a count, not bytes)
  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0 || spilled_registers > 0; }
};

struct CompiledKernel {
  std::string key;    ///< cache key: hash of compiler version, arch, options, source, headers and defines
  std::string image;  ///< device code to load: a cubin (NVRTC) or an AMDGPU code object (hiprtc)
  std::string ptx;    ///< PTX (NVRTC); empty for hiprtc, which hands out no assembly
  std::string log;    ///< compiler and ptxas output
  std::map<std::string, KernelResources> resources;  ///< by kernel name
  double compile_seconds = 0;
  bool from_cache = false;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  /// Name and version, e.g. `nvrtc 13.0`; part of every cache key.
  virtual std::string version() const = 0;
  /// Throws Error{bad_input} for a malformed target name and Error{unsupported} for a target this compiler
  /// cannot produce code for. Callers check before compiling: hiprtc (ROCm 5.2) aborts the whole process on
  /// a target it does not know, and compile() checks too.
  virtual void require_target(const std::string& arch) const = 0;
  /// The cache key of a request, computed without compiling.
  virtual std::string key(const CompileRequest& request) const = 0;
  /// Throws Error{compile} with the compiler log as detail when compilation fails.
  virtual CompiledKernel compile(const CompileRequest& request) const = 0;
};

/// Reads the `ptxas info` lines of a compiler log into per-kernel resources.
std::map<std::string, KernelResources> parse_ptxas_resources(const std::string& log);

/// The SHA-256 cache key of `request` under a backend's key format, compiler version and fixed options.
std::string request_key(const char* key_format, const std::string& version,
                        const std::vector<std::string>& options, const CompileRequest& request);

/// `-DNAME=VALUE` for each define. Throws Error{internal} for a name that is not an upper-case identifier:
/// names come from template declarations and values are integers, so config text never becomes an option.
std::vector<std::string> define_options(const std::vector<Define>& defines);

/// A compiler log without the NULs some compilers leave in it (the text is kept whole).
std::string without_nuls(std::string log);

}  // namespace tunefuzz
