// Launcher of templates/gemm_mma.cu: optional packing of misaligned operands into scratch (PACK=1), then the
// GEMM kernel on a 1-D grid of output tiles.
#include <memory>

#include "templates/gemm_params.h"
#include "tuner/device/runner.hpp"
#include "tuner/templates/gemm_mma.hpp"

namespace tunefuzz::device {

namespace {

class GemmMmaRunner final : public GemmRunner {
 public:
  GemmMmaRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate),
        module_(image),
        gemm_(module_.function("tf_gemm")),
        pack_(module_.function("tf_pack")) {
    const KernelTemplate& t = *candidate.kernel_template;
    const int64_t smem = t.shared_memory_bytes(candidate.point);
    const int64_t threads = t.threads_per_block(candidate.point);
    int32_t meta[4] = {};
    const auto [address, bytes] = module_.global("tf_kernel_meta");
    if (bytes != sizeof meta) throw Error(ErrorKind::internal, "tf_kernel_meta has an unexpected size");
    check(cuMemcpyDtoH(meta, address, sizeof meta), "reading tf_kernel_meta");
    if (meta[0] != threads || meta[1] != smem || meta[2] != candidate.point["BM"] ||
        meta[3] != candidate.point["BN"])
      throw Error(ErrorKind::internal, "template and host disagree on geometry for " + candidate.id() +
                                           ": kernel says threads=" + std::to_string(meta[0]) +
                                           " smem=" + std::to_string(meta[1]) +
                                           ", host formulas say threads=" + std::to_string(threads) +
                                           " smem=" + std::to_string(smem));
    check(cuFuncSetAttribute(gemm_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem)),
          "cuFuncSetAttribute(max dynamic shared memory)");
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  int64_t workspace_bytes(const GemmShape& shape) const override {
    return candidate_.kernel_template->geometry(candidate_.point, shape).workspace_bytes;
  }

  void run(const DeviceGemm& g, CUdeviceptr workspace, CUstream stream) const override {
    const KernelTemplate& t = *candidate_.kernel_template;
    TfGemmParams p{};
    p.a = reinterpret_cast<const void*>(g.a);
    p.b = reinterpret_cast<const void*>(g.b);
    p.c = reinterpret_cast<void*>(g.c);
    p.m = g.shape.m;
    p.n = g.shape.n;
    p.k = g.shape.k;
    p.lda = g.shape.lda;
    p.ldb = g.shape.ldb;
    p.ldc = g.shape.ldc;
    p.alpha = g.alpha;
    p.beta = g.beta;
    if (candidate_.point["PACK"]) {
      const GemmMmaPackPlan plan = gemm_mma_pack_plan(g.shape);
      if (plan.pack_a) {
        pack(g.a, workspace, g.shape.m, g.shape.k, g.shape.lda, g.shape.m, plan.lda, stream);
        p.a = reinterpret_cast<const void*>(workspace);
      }
      if (plan.pack_b) {
        const CUdeviceptr b_scratch = workspace + plan.a_bytes;
        pack(g.b, b_scratch, g.shape.k, g.shape.n, g.shape.ldb, plan.k, plan.ldb, stream);
        p.b = reinterpret_cast<const void*>(b_scratch);
      }
      p.k = plan.k;
      p.lda = plan.lda;
      p.ldb = plan.ldb;
    }
    const LaunchGeometry geo = t.geometry(candidate_.point, g.shape);
    void* args[] = {&p};
    check(cuLaunchKernel(gemm_, static_cast<unsigned>(geo.grid_x), 1, 1, static_cast<unsigned>(geo.block_x),
                         1, 1, static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
          "cuLaunchKernel(tf_gemm)");
  }

 private:
  void pack(CUdeviceptr src, CUdeviceptr dst, int64_t rows, int64_t cols, int64_t src_ld, int64_t dst_rows,
            int64_t dst_cols, CUstream stream) const {
    TfPackParams p{reinterpret_cast<const void*>(src),
                   reinterpret_cast<void*>(dst),
                   rows,
                   cols,
                   src_ld,
                   dst_rows,
                   dst_cols};
    void* args[] = {&p};
    const int64_t vectors = dst_cols / 8;
    const unsigned threads = 256;
    const unsigned grid_x =
        static_cast<unsigned>(std::min<int64_t>((vectors + threads - 1) / threads, 65535));
    const unsigned grid_y = static_cast<unsigned>(std::min<int64_t>(dst_rows, 65535));
    check(cuLaunchKernel(pack_, grid_x, grid_y, 1, threads, 1, 1, 0, stream, args, nullptr),
          "cuLaunchKernel(tf_pack)");
  }

  Candidate candidate_;
  Module module_;
  CUfunction gemm_;
  CUfunction pack_;
};

}  // namespace

std::unique_ptr<GemmRunner> load_candidate(const Candidate& candidate, const std::string& image) {
  if (candidate.kernel_template->name == "gemm_mma") return std::make_unique<GemmMmaRunner>(candidate, image);
  throw Error(ErrorKind::unsupported, "no device launcher for template " + candidate.kernel_template->name);
}

}  // namespace tunefuzz::device
