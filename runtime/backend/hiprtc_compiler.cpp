#include "runtime/backend/hiprtc_compiler.hpp"

#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <utility>

#include "runtime/backend/code_object.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz {

namespace {

// Bump when the cache entry format or the meaning of options changes.
constexpr const char* kKeyFormat = "tunefuzz-hiprtc-1";

// hiprtc 5.2 (through comgr's LLVM) is not safe to call from several threads at once: concurrent compiles
// abort the process now and then with "LLVM ERROR: inconsistency in registered CommandLine options". One
// compile at a time, then; the compile stage's other threads still read and write the cache.
std::mutex& hiprtc_mutex() {
  static std::mutex m;
  return m;
}

void check(hiprtcResult result, const char* what) {
  if (result != HIPRTC_SUCCESS)
    throw Error(ErrorKind::compile, std::string(what) + " failed: " + hiprtcGetErrorString(result));
}

std::string program_log(hiprtcProgram program) {
  size_t size = 0;
  if (hiprtcGetProgramLogSize(program, &size) != HIPRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (hiprtcGetProgramLog(program, log.data()) != HIPRTC_SUCCESS) return {};
  return without_nuls(std::move(log));
}

struct Program {
  hiprtcProgram handle = nullptr;
  ~Program() {
    if (handle) hiprtcDestroyProgram(&handle);
  }
};

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

// The HIP release the backend was built against (hiprtc ships with it) and its ROCm release.
const std::string hip_release = std::to_string(HIP_VERSION_MAJOR) + "." + std::to_string(HIP_VERSION_MINOR) +
                                "." + std::to_string(HIP_VERSION_PATCH);
const std::string rocm_release = std::to_string(HIP_VERSION_MAJOR) + "." + std::to_string(HIP_VERSION_MINOR);

}  // namespace

HiprtcCompiler::HiprtcCompiler()
    : version_("hiprtc " + hip_release + " (" + comgr_version() + ")"), targets_(comgr_targets()) {}

std::vector<std::string> HiprtcCompiler::base_options(const std::string& arch) {
  return {"--offload-arch=" + arch, "-O3", "-std=c++17"};
}

void HiprtcCompiler::require_target(const std::string& arch) const {
  if (!is_amd_arch(arch))
    throw Error(ErrorKind::bad_input, "not an AMD GPU target: '" + arch + "' (expected e.g. gfx90a)");
  if (std::find(targets_.begin(), targets_.end(), arch) == targets_.end())
    throw Error(ErrorKind::unsupported, "the HIP toolchain here (hiprtc " + hip_release + " from ROCm " +
                                            rocm_release + ", " + comgr_version() + ") does not support " +
                                            arch + "; supported: " + joined(targets_));
}

std::string HiprtcCompiler::key(const CompileRequest& request) const {
  return request_key(kKeyFormat, version_, base_options(request.arch), request);
}

CompiledKernel HiprtcCompiler::compile(const CompileRequest& request) const {
  require_target(request.arch);  // before hiprtc sees the target: an unknown one aborts the process
  const auto start = std::chrono::steady_clock::now();
  const KernelSource& source = *request.source;
  std::vector<std::string> options = base_options(request.arch);
  for (std::string& define : define_options(request.defines)) options.push_back(std::move(define));
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : source.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  const std::lock_guard<std::mutex> one_at_a_time(hiprtc_mutex());
  Program program;
  check(hiprtcCreateProgram(&program.handle, source.text.c_str(), source.file_name.c_str(),
                            static_cast<int>(header_texts.size()), header_texts.data(), header_names.data()),
        "hiprtcCreateProgram");
  std::vector<const char*> option_ptrs;
  for (const auto& o : options) option_ptrs.push_back(o.c_str());
  const hiprtcResult result =
      hiprtcCompileProgram(program.handle, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompiledKernel out;
  out.log = program_log(program.handle);
  if (result != HIPRTC_SUCCESS)
    throw Error(ErrorKind::compile, source.file_name + " failed to compile: " + hiprtcGetErrorString(result),
                {}, out.log);
  size_t size = 0;
  check(hiprtcGetCodeSize(program.handle, &size), "hiprtcGetCodeSize");
  out.image.resize(size);
  check(hiprtcGetCode(program.handle, out.image.data()), "hiprtcGetCode");
  out.key = key(request);
  try {
    out.resources = read_code_object_resources(out.image);
  } catch (const Error& e) {
    throw Error(ErrorKind::compile, source.file_name + ": " + e.message(), {}, out.log);
  }
  if (out.resources.empty())  // never cache an entry the compile stage could not judge
    throw Error(ErrorKind::compile, source.file_name + ": the code object's metadata lists no kernel", {},
                out.log);
  out.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace tunefuzz
