// Launcher of templates/gemm_simt.cu: optional packing of misaligned or column-major operands into row-major
// scratch (PACK=1), then one kernel on a 1-D grid of output tiles (a zero size: tf_scale_c or nothing).
#include <memory>

#include "runtime/cuda/template_launch.hpp"
#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz::device {

namespace {

class GemmSimtRunner final : public GemmRunner {
 public:
  GemmSimtRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate),
        module_(image),
        gemm_(module_, "tf_gemm",
              [smem = candidate.kernel_template->shared_memory_bytes(candidate.point)](CUfunction f) {
                check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(smem)),
                      "cuFuncSetAttribute(max dynamic shared memory)");
              }),
        pack_(module_, kPackEntry),
        pack_transposed_(module_, kPackTransposedEntry),
        scale_c_(module_, kScaleCEntry) {
    check_kernel_meta(module_, candidate);
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides&) const override {
    return candidate_.kernel_template->geometry(candidate_.point, shape).workspace_bytes;
  }

  void run(const DeviceGemm& g, CUdeviceptr workspace, CUstream stream) const override {
    if (launch_quick_return(scale_c_, g, stream)) return;
    // The template neither splits K nor walks a persistent grid: an override would go unheeded, untested.
    if (g.overrides != LaunchOverrides{})
      throw Error(ErrorKind::internal, candidate_.id() + " was asked for split-K or a persistent grid");
    TfGemmParams p = gemm_params(g);
    if (candidate_.point["PACK"])
      launch_packing({&pack_, &pack_transposed_}, pack_plan(g.shape, 4, PackRule::loads16_row_major), g, 4,
                     workspace, p, stream);
    const LaunchGeometry geo = candidate_.kernel_template->geometry(candidate_.point, g.shape);
    void* args[] = {&p};
    check(cuLaunchKernel(gemm_.get(), static_cast<unsigned>(geo.grid_x), 1, 1,
                         static_cast<unsigned>(geo.block_x), 1, 1,
                         static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
          "cuLaunchKernel(tf_gemm)");
  }

 private:
  Candidate candidate_;
  Module module_;
  LazyFunction gemm_;
  LazyFunction pack_;
  LazyFunction pack_transposed_;
  LazyFunction scale_c_;
};

}  // namespace

std::unique_ptr<GemmRunner> make_gemm_simt_runner(const Candidate& candidate, const std::string& image) {
  return std::make_unique<GemmSimtRunner>(candidate, image);
}

}  // namespace tunefuzz::device
