// Which launcher runs a candidate: one factory per template, chosen by the template's name.
#include "runtime/cuda/runner.hpp"

namespace tunefuzz::device {

std::unique_ptr<GemmRunner> load_candidate(const Candidate& candidate, const std::string& image) {
  const std::string& name = candidate.kernel_template->name;
  if (name == "gemm_mma" || name == "gemm_mma_tf32" || name == "gemm_mma_fp8")
    return make_gemm_mma_runner(candidate, image);
  if (name == "gemm_simt") return make_gemm_simt_runner(candidate, image);
  if (name == "gemm_skinny") return make_gemm_skinny_runner(candidate, image);
  if (name == "gemm_wgmma" || name == "gemm_wgmma_fp8") return make_gemm_wgmma_runner(candidate, image);
  throw Error(ErrorKind::unsupported, "no device launcher for template " + name);
}

}  // namespace tunefuzz::device
