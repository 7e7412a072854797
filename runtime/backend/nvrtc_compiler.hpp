// NVRTC backend compiler: compiles CUDA C++ templates to cubin for a real sm_XX target, keeping the PTX and
// the ptxas resource report. Thread-safe: campaigns compile candidates on all cores at once.
#pragma once

#include "runtime/backend/compiler.hpp"

namespace tunefuzz {

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler();
  std::string version() const override { return version_; }
  void require_target(const std::string& arch) const override;
  std::string key(const CompileRequest& request) const override;
  CompiledKernel compile(const CompileRequest& request) const override;

  /// The exact options NVRTC receives (besides the defines), part of the key.
  static std::vector<std::string> base_options(const std::string& arch);

 private:
  std::string version_;
};

}  // namespace tunefuzz
