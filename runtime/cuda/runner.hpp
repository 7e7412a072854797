// Running one GEMM on the device: a loaded candidate (KernelRunner, per template) or the cuBLAS baseline,
// both behind the same call so the fuzz and timing jobs treat them alike.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <cublas_v2.h>

#include "runtime/cuda/cuda.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz::device {

/// Device operands of one GEMM; `shape` gives sizes, leading dimensions and base-address alignment.
struct DeviceGemm {
  CUdeviceptr a = 0, b = 0, c = 0;
  GemmShape shape;
  float alpha = 1.0f, beta = 0.0f;
  LaunchOverrides overrides;  ///< fuzz cases only: splits or a grid other than the candidate's
};

class GemmRunner {
 public:
  virtual ~GemmRunner() = default;
  virtual std::string name() const = 0;
  /// Why this GEMM cannot be run, or nullopt.
  virtual std::optional<std::string> refusal(const GemmShape& shape) const = 0;
  /// Scratch bytes `run` needs for this shape (and these overrides).
  virtual int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides = {}) const = 0;
  /// Enqueues the GEMM (and any set-up it needs) on `stream`; does not synchronise.
  virtual void run(const DeviceGemm& gemm, CUdeviceptr workspace, CUstream stream) const = 0;
};

/// Loads a compiled candidate and checks that the module's own record of its geometry (tf_kernel_meta)
/// matches the template's host-side formulas. Throws Error{unsupported} for templates without a runner.
std::unique_ptr<GemmRunner> load_candidate(const Candidate& candidate, const std::string& image);

/// The launchers load_candidate chooses from, one per LauncherKind.
std::unique_ptr<GemmRunner> make_gemm_mma_runner(const Candidate& candidate, const std::string& image);
std::unique_ptr<GemmRunner> make_gemm_simt_runner(const Candidate& candidate, const std::string& image);
std::unique_ptr<GemmRunner> make_gemm_wgmma_runner(const Candidate& candidate, const std::string& image);
std::unique_ptr<GemmRunner> make_gemm_skinny_runner(const Candidate& candidate, const std::string& image);


/// cuBLAS on the same operands, row-major by computing Cᵀ = Bᵀ·Aᵀ: cublasGemmEx with fp32 compute (TF32
/// tensor cores for tf32 inputs, pedantic fp32 for fp32 inputs), or cuBLASLt (cublasLtMatmul) for fp8 inputs.
class CublasRunner final : public GemmRunner {
 public:
  /// `beta`: the problem's, which every run uses (cuBLASLt serves an fp8 output only with beta == 0).
  CublasRunner(TypePair types, double beta, CUstream stream);
  ~CublasRunner() override;
  std::string name() const override;
  std::optional<std::string> refusal(const GemmShape& shape) const override;
  int64_t workspace_bytes(const GemmShape&, const LaunchOverrides& = {}) const override { return 0; }
  void run(const DeviceGemm& gemm, CUdeviceptr workspace, CUstream stream) const override;
  /// e.g. `cuBLAS 13.0.2` (`cuBLASLt 13.0.2` for fp8 inputs).
  std::string version() const;

 private:
  struct Lt;  // fp8 inputs: the cuBLASLt handle, its workspace and one plan per shape
  std::optional<std::string> fp8_refusal(const GemmShape& shape) const;

  TypePair types_;
  double beta_;
  std::unique_ptr<Lt> lt_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace tunefuzz::device
