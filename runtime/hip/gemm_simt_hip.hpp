// Launching a compiled candidate on an AMD GPU through the HIP module API, behind the same shape as the CUDA
// runners (runtime/cuda/runner.hpp): load the code object, check the kernel's own record of its geometry
// against the host formulas, refuse what the template refuses, enqueue on a stream. gemm_simt is the template
// that compiles for AMD targets.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "runtime/hip/hip.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz::device::hip {

/// Device operands of one GEMM; `shape` gives sizes, leading dimensions and base-address alignment.
struct HipGemm {
  hipDeviceptr_t a = nullptr, b = nullptr, c = nullptr;
  GemmShape shape;
  float alpha = 1.0f, beta = 0.0f;
};

class HipGemmRunner {
 public:
  virtual ~HipGemmRunner() = default;
  virtual std::string name() const = 0;
  /// Why this GEMM cannot be run, or nullopt.
  virtual std::optional<std::string> refusal(const GemmShape& shape) const = 0;
  /// Enqueues the GEMM on `stream`; does not synchronise.
  virtual void run(const HipGemm& gemm, hipStream_t stream) const = 0;
};

/// Loads a candidate compiled by hiprtc. Throws Error{internal} when the module's tf_kernel_meta disagrees
/// with the template's formulas, Error{unsupported} for a template without a HIP launcher.
std::unique_ptr<HipGemmRunner> load_candidate(const Candidate& candidate, const std::string& image);

}  // namespace tunefuzz::device::hip
