// Launcher of templates/gemm_wgmma.cu: encodes the TMA tensor maps of A, B (and C, when the epilogue can
// store through TMA) for each problem, then launches one kernel on a grid of units (output tiles × K splits),
// or on as many CTAs as are resident at once when PERSISTENT=1 (or on the fuzz case's grid), in clusters of
// CLUSTER_M x CLUSTER_N CTAs (a launch attribute), and with K splits the second pass, tf_reduce, over the
// partials in the workspace; a zero size launches tf_scale_c (K = 0) or nothing. Maps are kept for the last
// operands seen, so timed repeats of one problem do not pay for encoding; a mutex guards them, and each
// launch takes its own copy, so threads may launch one runner at once.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "templates/gemm_params.h"
#include "runtime/cuda/runner.hpp"
#include "runtime/cuda/template_launch.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_wgmma.hpp"

namespace tunefuzz::device {

namespace {

CUtensorMapDataType tma_type(Precision precision) {
  switch (precision) {
    case Precision::fp16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case Precision::bf16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case Precision::fp32:
    case Precision::tf32:  // fp32 storage; the wgmma reads it as tf32
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case Precision::fp8e4m3:
    case Precision::fp8e5m2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // TMA moves bytes; the wgmma reads them as fp8
    default:
      throw Error(ErrorKind::internal,
                  std::string("gemm_wgmma has no TMA element type for ") + to_string(precision));
  }
}

// A 2-D row-major view (rows × cols, leading dimension ld elements) read in boxes of box.inner columns ×
// box.outer rows with the box's swizzle (128 or 64 bytes); what lies outside reads as zeros.
CUtensorMap encode(CUdeviceptr base, Precision precision, int64_t rows, int64_t cols, int64_t ld,
                   TmaBox box) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld * size_of(precision))};
  const cuuint32_t boxes[2] = {static_cast<cuuint32_t>(box.inner), static_cast<cuuint32_t>(box.outer)};
  const cuuint32_t unit[2] = {1, 1};
  check(
      cuTensorMapEncodeTiled(&map, tma_type(precision), 2, reinterpret_cast<void*>(base), dims, strides,
                             boxes, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                             box.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled");
  return map;
}

class GemmWgmmaRunner final : public GemmRunner {
 public:
  GemmWgmmaRunner(const Candidate& candidate, const std::string& image)
      : candidate_(candidate),
        module_(image),
        scale_c_(module_, kScaleCEntry),
        reduce_(module_, kReduceEntry),
        pack_(module_, kPackEntry),
        pack_transposed_(module_, kPackTransposedEntry),
        element_bytes_(size_of(candidate.types.input)) {
    const KernelTemplate& t = *candidate.kernel_template;
    const int64_t smem = t.shared_memory_bytes(candidate.point);
    const int64_t threads = t.threads_per_block(candidate.point);
    const int64_t cluster = candidate.point["CLUSTER_M"] * candidate.point["CLUSTER_N"];
    // The layouts this point computes (fp8 compiles RC only, and serves the others through PACK=1, as tf32
    // may).
    for (const Layout& layout : gemm_wgmma_kernel_layouts(element_bytes_))
      if (gemm_wgmma_computes(candidate.point, layout)) {
        const int i = layout_index(layout);
        // A persistent grid is as many CTAs of this kernel's clusters as fit on the GPU at once.
        gemm_[i] = gemm_entry(module_, layout, smem, [this, i, threads, smem, cluster](CUfunction f) {
          resident_ctas_[i] = cluster == 1 ? resident_ctas(f, threads, smem)
                                           : resident_clusters(f, cluster, threads, smem) * cluster;
        });
      }
    if (std::none_of(std::begin(gemm_), std::end(gemm_), [](const auto& f) { return f != nullptr; }))
      throw Error(ErrorKind::internal, candidate.id() + ": the point computes no layout the module exports");
    check_kernel_meta(module_, candidate);
  }

  std::string name() const override { return candidate_.id(); }

  std::optional<std::string> refusal(const GemmShape& shape) const override {
    return candidate_.kernel_template->refusal(candidate_.point, shape);
  }

  int64_t workspace_bytes(const GemmShape& shape, const LaunchOverrides& overrides) const override {
    if (quick_return(shape) != QuickReturn::none) return 0;
    const PackPlan plan = pack_plan(shape, element_bytes_, gemm_wgmma_pack_rule(element_bytes_));
    return (candidate_.point["PACK"] ? plan.a_bytes + plan.b_bytes : 0) +
           split_k_workspace_bytes(shape, splits(overrides));
  }

  void run(const DeviceGemm& g, CUdeviceptr workspace, CUstream stream) const override {
    if (launch_quick_return(scale_c_, g, stream)) return;  // before any tensor map is encoded
    const KernelTemplate& t = *candidate_.kernel_template;
    LaunchGeometry geo = t.geometry(candidate_.point, g.shape);
    // The layout the kernel reads: the problem's, or the packed copies' (PACK=1).
    const bool packs = candidate_.point["PACK"] != 0;
    const PackPlan plan = packs ? pack_plan(g.shape, element_bytes_, gemm_wgmma_pack_rule(element_bytes_)) : PackPlan{};
    const Layout layout = packs ? plan.layout : g.shape.layout;
    const int entry = layout_index(layout);
    if (!gemm_[entry])
      throw Error(ErrorKind::unsupported, candidate_.id() + " has no kernel for layout " + to_string(layout));
    const CUfunction gemm = gemm_[entry]->get();  // loads it, and reads its residency, on first use
    const int64_t requested = g.overrides.grid > 0             ? g.overrides.grid
                              : candidate_.point["PERSISTENT"] ? resident_ctas_[entry]
                                                               : 0;
    geo.grid_x = gemm_wgmma_grid(candidate_.point, g.shape, requested, splits(g.overrides));
    // The workspace: the packed (and, for fp8 and tf32, transposed) operands (PACK=1), then the partials.
    TfGemmParams p = gemm_params(g);
    CUdeviceptr partials = workspace;
    DeviceGemm read = g;  // the operands as the kernel reads them: packed or in place
    if (packs) {
      partials += launch_packing({&pack_, &pack_transposed_}, plan, g, element_bytes_, workspace, p, stream);
      read.a = reinterpret_cast<CUdeviceptr>(p.a);
      read.b = reinterpret_cast<CUdeviceptr>(p.b);
      read.shape.k = p.k;
      read.shape.lda = p.lda;
      read.shape.ldb = p.ldb;
      read.shape.layout = plan.layout;
    }
    Maps maps = maps_for(read);  // a copy: another thread may replace the kept maps meanwhile
    p.splits = splits(g.overrides);
    p.workspace = reinterpret_cast<float*>(partials);
    p.ldw = split_k_partial_ld(g.shape);
    void* args[] = {&p, &maps.map_a, &maps.map_b, &maps.map_c, &maps.tma_store_c};
    launch_gemm(gemm, geo, args, stream);
    if (p.splits > 1) launch_split_k_reduce(reduce_, p, g.shape, stream);
  }

 private:
  int64_t splits(const LaunchOverrides& overrides) const {
    return overrides.splits > 0 ? overrides.splits : candidate_.point["SPLIT_K"];
  }

  static void launch_gemm(CUfunction gemm, const LaunchGeometry& geo, void** args, CUstream stream) {
    if (geo.cluster_x == 1) {
      // A plain launch: a cluster dimension of 1 is not the same launch (an H100 campaign that launched every
      // candidate with one read 10-15% slower on several problems than the same kernels launched plainly).
      check(cuLaunchKernel(gemm, static_cast<unsigned>(geo.grid_x), 1, 1, static_cast<unsigned>(geo.block_x),
                           1, 1, static_cast<unsigned>(geo.shared_memory_bytes), stream, args, nullptr),
            "cuLaunchKernel(tf_gemm_*)");
      return;
    }
    CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned>(geo.grid_x);
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = static_cast<unsigned>(geo.block_x);
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(geo.shared_memory_bytes);
    config.hStream = stream;
    CUlaunchAttribute cluster{};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = static_cast<unsigned>(geo.cluster_x);
    cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    check(cuLaunchKernelEx(&config, gemm, args, nullptr), "cuLaunchKernelEx(tf_gemm_*, cluster)");
  }

  // The kernel's tensor-map arguments for one set of operands (passed by value: cuLaunchKernel copies them).
  struct Maps {
    CUdeviceptr a = 0, b = 0, c = 0;
    GemmShape shape;
    float beta = 0;
    CUtensorMap map_a{}, map_b{}, map_c{};
    int tma_store_c = 0;  ///< 1: C's base, rows and row ends are 16-byte aligned, so map_c is encoded
                          ///< (loads C too when beta != 0)
  };

  Maps maps_for(const DeviceGemm& g) const {
    const GemmShape& s = g.shape;
    const std::lock_guard lock(maps_mutex_);
    const bool same = maps_ && maps_->a == g.a && maps_->b == g.b && maps_->c == g.c &&
                      maps_->beta == g.beta && maps_->shape.m == s.m && maps_->shape.n == s.n &&
                      maps_->shape.k == s.k && maps_->shape.lda == s.lda && maps_->shape.ldb == s.ldb &&
                      maps_->shape.ldc == s.ldc && maps_->shape.layout == s.layout;
    if (same) return *maps_;
    const Point& p = candidate_.point;
    const TypePair types = candidate_.types;
    const int64_t eb = size_of(types.input);
    auto m = std::make_unique<Maps>();
    m->a = g.a;
    m->b = g.b;
    m->c = g.c;
    m->shape = s;
    m->beta = g.beta;
    // A is (M, K) row-major or (K, M) column-major; B is (K, N) row-major or (N, K) column-major. The operand
    // stored along K is read in boxes of 128 bytes of K by the tile's rows, the other in boxes of 128 bytes
    // of M (or N) by BK rows of K.
    const bool a_col = s.layout.a == Order::col, b_col = s.layout.b == Order::col;
    m->map_a = encode(g.a, types.input, a_col ? s.k : s.m, a_col ? s.m : s.k, s.lda,
                      gemm_wgmma_operand_box(p, true, !a_col, eb));
    m->map_b = encode(g.b, types.input, b_col ? s.n : s.k, b_col ? s.k : s.n, s.ldb,
                      gemm_wgmma_operand_box(p, false, b_col, eb));
    const int64_t ob = size_of(types.output);
    if (gemm_wgmma_tma_epilogue(p, s, ob, g.c)) {
      m->map_c = encode(g.c, types.output, s.m, s.n, s.ldc, gemm_wgmma_output_box(p, ob));
      m->tma_store_c = 1;
    }
    maps_ = std::move(m);
    return *maps_;
  }

  Candidate candidate_;
  Module module_;
  LazyFunction scale_c_;
  LazyFunction reduce_;
  LazyFunction pack_;
  LazyFunction pack_transposed_;
  int64_t element_bytes_;
  int64_t resident_ctas_[4] = {1, 1, 1, 1};  ///< by layout_index: CTAs of the clusters that fit at once, set
                                             ///< when that kernel loads
  std::unique_ptr<LazyFunction> gemm_[4];    ///< tf_gemm_rr, _rc, _cr, _cc by layout_index; null where not computed
  mutable std::mutex maps_mutex_;
  mutable std::unique_ptr<Maps> maps_;  ///< the last operands' maps, under maps_mutex_
};

}  // namespace

std::unique_ptr<GemmRunner> make_gemm_wgmma_runner(const Candidate& candidate, const std::string& image) {
  return std::make_unique<GemmWgmmaRunner>(candidate, image);
}

}  // namespace tunefuzz::device
