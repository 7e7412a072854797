// Launcher of templates/gemm_simt.cu (gemm_simt and gemm_simt_16bit): optional packing of misaligned operands
// into zero-padded scratch in their own storage order (PACK=1), then the kernel of the problem's storage
// order on a 1-D grid of units (output tiles × K splits), then, with more than one split, the in-order
// reduction of the partials (a zero size: tf_scale_c or nothing).
#include <functional>
#include <memory>

#include "runtime/cuda/template_launch.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_simt.hpp"

namespace tunefuzz::device {

namespace {

class GemmSimtRunner final : public GemmRunner {
 public:
  GemmSimtRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate),
        module_(image),
        pack_(module_, kPackEntry),
        reduce_(module_, kReduceEntry),
        scale_c_(module_, kScaleCEntry),
        element_bytes_(size_of(candidate.types.input)) {
    for (const Layout& layout : candidate.kernel_template->layouts)
      if (candidate.point[kLayoutsParameter] & layout_bit(layout)) {
        gemm_[layout_index(layout)] =
            std::make_unique<LazyFunction>(module_, gemm_entry_name(layout), opt_in(candidate));
        gemm_split_[layout_index(layout)] = std::make_unique<LazyFunction>(
            module_, gemm_entry_name(layout, "tf_gemm_split"), opt_in(candidate));
      }
    check_kernel_meta(module_, candidate);
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const override {
    return gemm_simt_geometry(candidate_.point, shape, overrides, element_bytes_).workspace_bytes;
  }

  void run(const DeviceGemm& g, CUdeviceptr workspace, CUstream stream) const override {
    if (launch_quick_return(scale_c_, g, stream)) return;
    // The template does not walk a persistent grid: such an override would go unheeded, untested.
    if (g.overrides.grid != 0)
      throw Error(ErrorKind::internal, candidate_.id() + " was asked for a persistent grid");
    const LaunchGeometry geo = gemm_simt_geometry(candidate_.point, g.shape, g.overrides, element_bytes_);
    TfGemmParams p = gemm_params(g);
    p.splits = g.overrides.splits > 0 ? g.overrides.splits : candidate_.point["SPLIT_K"];
    p.ldw = split_k_partial_ld(g.shape);
    CUdeviceptr partials = workspace;  // after the packed copies (PACK=1)
    if (candidate_.point["PACK"])
      partials += launch_packing({&pack_, nullptr}, pack_plan(g.shape, element_bytes_, PackRule::loads16), g,
                                 element_bytes_, workspace, p, stream);
    p.workspace = reinterpret_cast<float*>(partials);
    const int order = layout_index(g.shape.layout);
    const std::unique_ptr<LazyFunction>& gemm = p.splits > 1 ? gemm_split_[order] : gemm_[order];
    if (!gemm)
      throw Error(ErrorKind::unsupported,
                  candidate_.id() + " has no kernel for layout " + to_string(g.shape.layout));
    void* args[] = {&p};
    check(cuLaunchKernel(gemm->get(), static_cast<unsigned>(geo.grid_x), 1, 1,
                         static_cast<unsigned>(geo.block_x), 1, 1,
                         static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
          "cuLaunchKernel(tf_gemm_* / tf_gemm_split_*)");
    if (p.splits > 1) launch_split_k_reduce(reduce_, p, g.shape, stream);
  }

 private:
  Candidate candidate_;
  Module module_;
  /// Sets the dynamic shared memory a kernel of the candidate may use, when the kernel is loaded.
  static std::function<void(CUfunction)> opt_in(const Candidate& candidate) {
    return [smem = candidate.kernel_template->shared_memory_bytes(candidate.point)](CUfunction f) {
      check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem)),
            "cuFuncSetAttribute(max dynamic shared memory)");
    };
  }

  std::unique_ptr<LazyFunction>
      gemm_[4];  ///< tf_gemm_rr, _rc, _cr, _cc by layout_index; null if not in LAYOUTS
  std::unique_ptr<LazyFunction>
      gemm_split_[4];  ///< tf_gemm_split_rr, ...: the launch with more than one K split
  LazyFunction pack_;
  LazyFunction reduce_;
  LazyFunction scale_c_;
  int64_t element_bytes_;
};

}  // namespace

std::unique_ptr<GemmRunner> make_gemm_simt_runner(const Candidate& candidate, const std::string& image) {
  return std::make_unique<GemmSimtRunner>(candidate, image);
}

}  // namespace tunefuzz::device
