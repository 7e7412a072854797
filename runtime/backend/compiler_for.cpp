#include "runtime/backend/compiler_for.hpp"

#include "runtime/backend/nvrtc_compiler.hpp"
#ifdef TUNEFUZZ_HAVE_HIP
#include "runtime/backend/hiprtc_compiler.hpp"
#endif

namespace tunefuzz {

namespace {

std::unique_ptr<Compiler> make_compiler(const std::string& arch) {
  if (!is_amd_arch(arch)) return std::make_unique<NvrtcCompiler>();
#ifdef TUNEFUZZ_HAVE_HIP
  return std::make_unique<HiprtcCompiler>();
#else
  throw Error(
      ErrorKind::unsupported,
      "this tunefuzz was built without HIP (ROCm's hiprtc was not found when it was configured), so it "
      "cannot compile for " +
          arch +
          "; install the ROCm HIP packages (setup.sh installs Debian's hipcc and "
          "libamdhip64-dev) and configure again");
#endif
}

}  // namespace

bool built_with_hip() {
#ifdef TUNEFUZZ_HAVE_HIP
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Compiler> compiler_for(const GpuSpec& gpu) {
  try {
    std::unique_ptr<Compiler> compiler = make_compiler(gpu.arch);
    compiler->require_target(gpu.arch);
    return compiler;
  } catch (const Error& e) {
    if (!e.where().file.empty()) throw;
    throw Error(e.kind(), e.message(), gpu.arch_where, e.detail());
  }
}

}  // namespace tunefuzz
