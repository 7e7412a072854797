#include "runtime/backend/nvrtc_compiler.hpp"

#include <algorithm>

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <utility>

namespace tunefuzz {

namespace {

// Bump when the cache entry format or the meaning of options changes.
constexpr const char* kKeyFormat = "tunefuzz-nvrtc-1";

void check(nvrtcResult result, const char* what) {
  if (result != NVRTC_SUCCESS)
    throw Error(ErrorKind::compile, std::string(what) + " failed: " + nvrtcGetErrorString(result));
}

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  // The reported size can exceed the text, and some NVRTC builds put NULs between the front end's output and
  // ptxas's: drop every NUL, keep all the text.
  return without_nuls(std::move(log));
}

struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) nvrtcDestroyProgram(&handle);
  }
};

bool valid_arch(const std::string& arch) {
  return std::regex_match(arch, std::regex("sm_[0-9]{2,3}a?"));
}

// Some NVRTC builds (13.0.88 on the GPU machines) serve ptxas results from the CUDA compute cache
// (~/.nv/ComputeCache); a hit skips ptxas, and with it the -v resource report the compile stage prunes on.
// tunefuzz keeps its own cache, keyed and checksummed, so the compute cache is turned off for the process,
// at load time: the setting is read once, by whichever of NVRTC and the driver starts first.
const bool compute_cache_disabled = setenv("CUDA_CACHE_DISABLE", "1", 1) == 0;

}  // namespace

NvrtcCompiler::NvrtcCompiler() {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  version_ = "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> NvrtcCompiler::base_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "--std=c++17", "--ptxas-options=-v",
          "--device-as-default-execution-space", "--generate-line-info"};
}

std::string NvrtcCompiler::key(const CompileRequest& request) const {
  return request_key(kKeyFormat, version_, base_options(request.arch), request);
}

// The compute capabilities this NVRTC compiles for (e.g. 75 ... 121), asked once.
const std::vector<int>& supported_archs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    std::vector<int> out;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return out;
    out.resize(static_cast<size_t>(count));
    if (nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    return out;
  }();
  return archs;
}

void NvrtcCompiler::require_target(const std::string& arch) const {
  if (!valid_arch(arch))
    throw Error(ErrorKind::bad_input, "not a CUDA architecture: '" + arch + "' (expected e.g. sm_90)");
  // A target NVRTC no longer (or not yet) compiles for is one error here, not an invalid option per candidate.
  const std::vector<int>& archs = supported_archs();
  const int number = std::stoi(arch.substr(3));
  if (archs.empty() || std::find(archs.begin(), archs.end(), number) != archs.end()) return;
  std::string list;
  for (int a : archs) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  throw Error(ErrorKind::unsupported, version() + " cannot compile for " + arch + "; it supports " + list);
}

CompiledKernel NvrtcCompiler::compile(const CompileRequest& request) const {
  require_target(request.arch);
  const auto start = std::chrono::steady_clock::now();
  const KernelSource& source = *request.source;
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : source.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  Program program;
  check(nvrtcCreateProgram(&program.handle, source.text.c_str(), source.file_name.c_str(),
                           static_cast<int>(header_texts.size()), header_texts.data(), header_names.data()),
        "nvrtcCreateProgram");
  std::vector<std::string> options = base_options(request.arch);
  for (std::string& define : define_options(request.defines)) options.push_back(std::move(define));
  std::vector<const char*> option_ptrs;
  for (const auto& o : options) option_ptrs.push_back(o.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(program.handle, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompiledKernel out;
  out.log = program_log(program.handle);
  if (result != NVRTC_SUCCESS)
    throw Error(ErrorKind::compile, source.file_name + " failed to compile: " + nvrtcGetErrorString(result),
                {}, out.log);
  size_t size = 0;
  check(nvrtcGetCUBINSize(program.handle, &size), "nvrtcGetCUBINSize");
  out.image.resize(size);
  check(nvrtcGetCUBIN(program.handle, out.image.data()), "nvrtcGetCUBIN");
  check(nvrtcGetPTXSize(program.handle, &size), "nvrtcGetPTXSize");
  out.ptx.resize(size);
  check(nvrtcGetPTX(program.handle, out.ptx.data()), "nvrtcGetPTX");
  if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  out.key = key(request);
  out.resources = parse_ptxas_resources(out.log);
  if (out.resources.empty())  // never cache an entry the compile stage could not judge
    throw Error(ErrorKind::compile, source.file_name + ": the compiler log has no ptxas resource report", {},
                out.log);
  out.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace tunefuzz
