#include "runtime/hip/gemm_simt_hip.hpp"

#include <array>
#include <cstdint>
#include <utility>

#include "runtime/templates/gemm_rules.hpp"
#include "templates/gemm_params.h"

namespace tunefuzz::device::hip {

namespace {

using Geometry = std::array<int64_t, 4>;  // {threads per block, shared memory bytes, BM, BN}

std::string describe(const Geometry& g) {
  return "threads=" + std::to_string(g[0]) + " smem=" + std::to_string(g[1]) + " BM=" + std::to_string(g[2]) +
         " BN=" + std::to_string(g[3]);
}

/// tf_kernel_meta as the module holds it (written by the kernel's constexprs) against the host formulas.
void check_geometry(const Module& module, const Candidate& candidate) {
  int32_t meta[4] = {};
  const auto [address, bytes] = module.global("tf_kernel_meta");
  if (bytes != sizeof meta) throw Error(ErrorKind::internal, "tf_kernel_meta has an unexpected size");
  check(hipMemcpyDtoH(meta, address, sizeof meta), "reading tf_kernel_meta");
  const KernelTemplate& t = *candidate.kernel_template;
  const Geometry kernel = {meta[0], meta[1], meta[2], meta[3]};
  const Geometry host = {t.threads_per_block(candidate.point), t.shared_memory_bytes(candidate.point),
                         candidate.point["BM"], candidate.point["BN"]};
  if (kernel != host)
    throw Error(ErrorKind::internal, "template and host disagree on geometry for " + candidate.id() +
                                         ": kernel says " + describe(kernel) + ", host formulas say " +
                                         describe(host));
}

/// templates/gemm_simt.cu: the kernel of the problem's storage order on a 1-D grid of output tiles, dynamic
/// LDS, no scratch. LDS up to the 64 KiB a workgroup may address needs no opt-in on AMD.
class GemmSimtRunner final : public HipGemmRunner {
 public:
  GemmSimtRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate), module_(image), scale_c_(module_.function(kScaleCEntry)) {
    for (const Layout& layout : all_layouts())
      if (candidate.point[kLayoutsParameter] & layout_bit(layout))
        gemm_[layout_index(layout)] = module_.function(gemm_entry_name(layout));
    check_geometry(module_, candidate);
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    if (candidate_.point["PACK"])
      return std::string("PACK=1 runs on CUDA only: this launcher has no packing pass");
    if (candidate_.point["SPLIT_K"] > 1)
      return std::string("SPLIT_K > 1 runs on CUDA only: this launcher has no reduce pass");
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  void run(const HipGemm& gemm, hipStream_t stream) const override {
    // The form this point runs the GEMM in (launch_form): a matrix-vector product may run as Cᵀ = Bᵀ·Aᵀ.
    const GemmForm form = launch_form(*candidate_.kernel_template, candidate_.point, gemm.shape);
    HipGemm g = gemm;
    g.shape = form.shape;
    if (form.swapped) std::swap(g.a, g.b);
    const GemmShape& s = g.shape;
    // Fields in declaration order: operands, sizes, leading dimensions, scales, then no split-K workspace.
    TfGemmParams p{g.a, g.b, g.c, s.m, s.n, s.k, s.lda, s.ldb, s.ldc, g.alpha, g.beta, nullptr, 0, 1};
    void* args[] = {&p};
    // A zero size: nothing to do for M or N = 0, C = beta·C (tf_scale_c) for K = 0.
    const QuickReturn quick = quick_return(s);
    if (quick == QuickReturn::nothing) return;
    if (quick == QuickReturn::scale_c) {
      const LaunchGeometry geo = scale_c_geometry(s);
      check(hipModuleLaunchKernel(scale_c_, static_cast<unsigned>(geo.grid_x), 1, 1,
                                  static_cast<unsigned>(geo.block_x), 1, 1, 0, stream, args, nullptr),
            "hipModuleLaunchKernel(tf_scale_c)");
      return;
    }
    const LaunchGeometry geo = candidate_.kernel_template->geometry(candidate_.point, g.shape);
    const hipFunction_t kernel = gemm_[layout_index(s.layout)];
    if (!kernel)
      throw Error(ErrorKind::unsupported,
                  candidate_.id() + " has no kernel for layout " + to_string(s.layout));
    check(hipModuleLaunchKernel(kernel, static_cast<unsigned>(geo.grid_x), static_cast<unsigned>(geo.grid_y),
                                static_cast<unsigned>(geo.grid_z), static_cast<unsigned>(geo.block_x), 1, 1,
                                static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
          "hipModuleLaunchKernel(tf_gemm_*)");
  }

 private:
  Candidate candidate_;
  Module module_;
  hipFunction_t gemm_[4] = {};  ///< tf_gemm_rr, _rc, _cr, _cc; null where LAYOUTS leaves the order out
  hipFunction_t scale_c_;
};

}  // namespace

std::unique_ptr<HipGemmRunner> load_candidate(const Candidate& candidate, const std::string& image) {
  if (candidate.kernel_template->name == "gemm_simt")
    return std::make_unique<GemmSimtRunner>(candidate, image);
  throw Error(ErrorKind::unsupported, "no HIP launcher for template " + candidate.kernel_template->name +
                                          " (gemm_simt is the template that targets AMD GPUs)");
}

}  // namespace tunefuzz::device::hip
