// Which launcher runs a candidate: the one its kernel source needs (runtime/templates' launcher_kind), so
// templates built from one source share it without naming it again; and the form it runs a GEMM in
// (launch_form), applied in front of every launcher.
#include <utility>

#include "runtime/cuda/runner.hpp"

namespace tunefuzz::device {

namespace {

/// Hands the launcher each GEMM in the form the candidate runs it (canonical_form where the point computes
/// that form): a matrix-vector product as Cᵀ = Bᵀ·Aᵀ, a contiguous single row or column read along K.
class FormRunner final : public GemmRunner {
 public:
  FormRunner(const Candidate& candidate, std::unique_ptr<GemmRunner> launcher)
      : candidate_(candidate), launcher_(std::move(launcher)) {}
  std::string name() const override { return launcher_->name(); }
  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return launcher_->refusal(shape);
  }
  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const override {
    return launcher_->workspace_bytes(form(shape).shape, overrides);
  }
  void run(const DeviceGemm& gemm, CUdeviceptr workspace, CUstream stream) const override {
    const GemmForm f = form(gemm.shape);
    DeviceGemm g = gemm;
    g.shape = f.shape;
    if (f.swapped) std::swap(g.a, g.b);
    launcher_->run(g, workspace, stream);
  }

 private:
  GemmForm form(const GemmShape& shape) const {
    return launch_form(*candidate_.kernel_template, candidate_.point, shape);
  }
  Candidate candidate_;
  std::unique_ptr<GemmRunner> launcher_;
};

std::unique_ptr<GemmRunner> make_launcher(const Candidate& candidate, const std::string& image) {
  const std::optional<LauncherKind> kind = launcher_kind(*candidate.kernel_template);
  if (!kind)
    throw Error(ErrorKind::unsupported, "no device launcher for template " + candidate.kernel_template->name +
                                            " (source " + candidate.kernel_template->source_file + ")");
  switch (*kind) {  // no default: a new kind without a launcher is a compile warning here
    case LauncherKind::gemm_mma:
      return make_gemm_mma_runner(candidate, image);
    case LauncherKind::gemm_simt:
      return make_gemm_simt_runner(candidate, image);
    case LauncherKind::gemm_skinny:
      return make_gemm_skinny_runner(candidate, image);
    case LauncherKind::gemm_wgmma:
      return make_gemm_wgmma_runner(candidate, image);
  }
  throw Error(ErrorKind::unsupported, "no device launcher for template " + candidate.kernel_template->name);
}

}  // namespace

std::unique_ptr<GemmRunner> load_candidate(const Candidate& candidate, const std::string& image) {
  return std::make_unique<FormRunner>(candidate, make_launcher(candidate, image));
}

}  // namespace tunefuzz::device
