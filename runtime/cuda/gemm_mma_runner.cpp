// Launcher of templates/gemm_mma.cu: optional packing of misaligned operands into scratch (PACK=1), then the
// GEMM kernel on a 1-D grid of units (output tiles × K splits; fewer CTAs than units when persistent), then,
// with more than one split, the in-order reduction of the partials. A zero size launches tf_scale_c (K = 0)
// or nothing.
#include <algorithm>
#include <memory>
#include <string>

#include "templates/gemm_params.h"
#include "runtime/cuda/runner.hpp"
#include "runtime/cuda/template_launch.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz::device {

namespace {

class GemmMmaRunner final : public GemmRunner {
 public:
  GemmMmaRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate),
        module_(image),
        pack_(module_, "tf_pack"),
        reduce_(module_, kReduceEntry),
        scale_c_(module_, kScaleCEntry),
        element_bytes_(size_of(candidate.types.input)) {
    const KernelTemplate& t = *candidate.kernel_template;
    const int64_t smem = t.shared_memory_bytes(candidate.point);
    const int64_t threads = t.threads_per_block(candidate.point);
    for (const Layout& layout : t.layouts) {  // the module exports the storage orders the template computes
      const int i = layout_index(layout);
      // A persistent grid is as many CTAs of this kernel as are resident at once.
      gemm_[i] = gemm_entry(module_, layout, smem,
                            [this, i, threads, smem](CUfunction f) { resident_ctas_[i] = resident_ctas(f, threads, smem); });
    }
    check_kernel_meta(module_, candidate);
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const override {
    if (quick_return(shape) != QuickReturn::none) return 0;  // nothing packed, no partials
    return gemm_mma_geometry(candidate_.point, shape, overrides, element_bytes_).workspace_bytes;
  }

  void run(const DeviceGemm& g, CUdeviceptr workspace, CUstream stream) const override {
    if (launch_quick_return(scale_c_, g, stream)) return;
    const int entry = layout_index(g.shape.layout);
    if (!gemm_[entry])
      throw Error(ErrorKind::unsupported,
                  candidate_.id() + " has no kernel for layout " + to_string(g.shape.layout));
    const CUfunction gemm = gemm_[entry]->get();  // loads it, and reads its residency, on first use
    LaunchOverrides launch = g.overrides;
    if (launch.grid == 0 && candidate_.point["PERSISTENT"]) launch.grid = resident_ctas_[entry];
    const LaunchGeometry geo = gemm_mma_geometry(candidate_.point, g.shape, launch, element_bytes_);
    TfGemmParams p = gemm_params(g);
    p.splits = launch.splits > 0 ? launch.splits : candidate_.point["SPLIT_K"];
    p.ldw = split_k_partial_ld(g.shape);
    CUdeviceptr partials = workspace;
    if (candidate_.point["PACK"])
      partials += launch_packing({&pack_, nullptr}, pack_plan(g.shape, element_bytes_, PackRule::loads16), g,
                                 element_bytes_, workspace, p, stream);
    p.workspace = reinterpret_cast<float*>(partials);
    void* args[] = {&p};
    check(cuLaunchKernel(gemm, static_cast<unsigned>(geo.grid_x), 1, 1, static_cast<unsigned>(geo.block_x), 1,
                         1, static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
          "cuLaunchKernel(tf_gemm_*)");
    if (p.splits > 1) launch_split_k_reduce(reduce_, p, g.shape, stream);
  }

 private:
  Candidate candidate_;
  Module module_;
  LazyFunction pack_;
  LazyFunction reduce_;
  LazyFunction scale_c_;
  int64_t element_bytes_;
  int64_t resident_ctas_[4] = {1, 1, 1, 1};  ///< by layout_index, set when that kernel loads
  std::unique_ptr<LazyFunction> gemm_[4];    ///< tf_gemm_rr, _rc, _cr, _cc by layout_index; null where not exported
};

}  // namespace

std::unique_ptr<GemmRunner> make_gemm_mma_runner(const Candidate& candidate, const std::string& image) {
  return std::make_unique<GemmMmaRunner>(candidate, image);
}

}  // namespace tunefuzz::device
