// hiprtc backend compiler: compiles the same CUDA C++ templates to an AMDGPU code object for a `gfx*` target,
// with the resources read from the code object's metadata (VGPRs, SGPRs, static LDS, scratch, spills). The
// targets it accepts are the ones the ROCm code-object manager (comgr), which hiprtc compiles through,
// reports: asked for any other, hiprtc of ROCm 5.2 aborts the whole process, so require_target refuses first.
// Thread-safe: campaigns compile candidates on all cores at once.
#pragma once

#include <string>
#include <vector>

#include "runtime/backend/compiler.hpp"

namespace tunefuzz {

class HiprtcCompiler final : public Compiler {
 public:
  HiprtcCompiler();
  /// e.g. `hiprtc 5.2.21153 (comgr 2.4)`: the HIP release the backend was built against and the comgr
  /// library it runs with.
  std::string version() const override { return version_; }
  void require_target(const std::string& arch) const override;
  std::string key(const CompileRequest& request) const override;
  CompiledKernel compile(const CompileRequest& request) const override;

  /// The exact options hiprtc receives (besides the defines), part of the key.
  static std::vector<std::string> base_options(const std::string& arch);
  /// The `gfx*` targets this toolchain compiles for, as comgr lists them.
  const std::vector<std::string>& supported_targets() const { return targets_; }

 private:
  std::string version_;
  std::vector<std::string> targets_;
};

}  // namespace tunefuzz
