// Launcher of templates/gemm_skinny.cu: one kernel on a 1-D grid of units (output tiles × K splits). With
// more than one split, the splits' fp32 partials go to the workspace and each tile's arrival counter lives in
// the launcher's SplitCounters (runtime/cuda/template_launch.hpp), so a launch needs no memset.
#include <memory>
#include <string>

#include "templates/gemm_params.h"
#include "runtime/cuda/runner.hpp"
#include "runtime/cuda/template_launch.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_skinny.hpp"

namespace tunefuzz::device {

namespace {

class GemmSkinnyRunner final : public GemmRunner {
 public:
  GemmSkinnyRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate), module_(image), scale_c_(module_, kScaleCEntry) {
    const KernelTemplate& t = *candidate.kernel_template;
    const int64_t smem = t.shared_memory_bytes(candidate.point);
    for (const Layout& layout : t.layouts) gemm_[layout_index(layout)] = gemm_entry(module_, layout, smem);
    check_kernel_meta(module_, candidate);
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const override {
    if (quick_return(shape) != QuickReturn::none) return 0;  // no partials
    return gemm_skinny_geometry(candidate_.point, shape, overrides).workspace_bytes;
  }

  void run(const DeviceGemm& g, CUdeviceptr workspace, CUstream stream) const override {
    if (launch_quick_return(scale_c_, g, stream)) return;
    const LaunchGeometry geo = gemm_skinny_geometry(candidate_.point, g.shape, g.overrides);
    TfGemmParams p = gemm_params(g);
    p.splits = g.overrides.splits > 0 ? g.overrides.splits : candidate_.point["SPLIT_K"];
    p.workspace = reinterpret_cast<float*>(workspace);
    const std::unique_ptr<LazyFunction>& gemm = gemm_[layout_index(g.shape.layout)];
    if (!gemm)
      throw Error(ErrorKind::unsupported,
                  candidate_.id() + " has no kernel for layout " + to_string(g.shape.layout));
    const auto launch = [&](CUdeviceptr counters) {
      void* args[] = {&p, &counters};
      check(cuLaunchKernel(gemm->get(), static_cast<unsigned>(geo.grid_x), 1, 1,
                           static_cast<unsigned>(geo.block_x), 1, 1,
                           static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
            "cuLaunchKernel(tf_gemm_*)");
    };
    if (p.splits > 1)
      counters_.with_zeroed(gemm_skinny_tiles(candidate_.point, g.shape), stream, launch);
    else
      launch(0);
  }

 private:
  Candidate candidate_;
  Module module_;
  LazyFunction scale_c_;
  std::unique_ptr<LazyFunction> gemm_[4];  ///< tf_gemm_rr, _rc, _cr, _cc by layout_index
  SplitCounters counters_;
};

}  // namespace

std::unique_ptr<GemmRunner> make_gemm_skinny_runner(const Candidate& candidate, const std::string& image) {
  return std::make_unique<GemmSkinnyRunner>(candidate, image);
}

}  // namespace tunefuzz::device
