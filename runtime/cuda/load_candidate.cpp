// Which launcher runs a candidate: the one its kernel source needs (runtime/templates' launcher_kind), so
// templates built from one source share it without naming it again.
#include "runtime/cuda/runner.hpp"

namespace tunefuzz::device {

std::unique_ptr<GemmRunner> load_candidate(const Candidate& candidate, const std::string& image) {
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

}  // namespace tunefuzz::device
