#include "runtime/cuda/template_launch.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz::device {

void check_kernel_meta(const Module& module, const Candidate& candidate) {
  const KernelTemplate& t = *candidate.kernel_template;
  const int64_t smem = t.shared_memory_bytes(candidate.point);
  const int64_t threads = t.threads_per_block(candidate.point);
  int32_t meta[4] = {};
  const auto [address, bytes] = module.global("tf_kernel_meta");
  if (bytes != sizeof meta) throw Error(ErrorKind::internal, "tf_kernel_meta has an unexpected size");
  check(cuMemcpyDtoH(meta, address, sizeof meta), "reading tf_kernel_meta");
  const int64_t bm = candidate.point["BM"], bn = candidate.point["BN"];
  if (meta[0] != threads || meta[1] != smem || meta[2] != bm || meta[3] != bn)
    throw Error(ErrorKind::internal,
                "template and host disagree on geometry for " + candidate.id() +
                    ": kernel says threads=" + std::to_string(meta[0]) + " smem=" + std::to_string(meta[1]) +
                    " BM=" + std::to_string(meta[2]) + " BN=" + std::to_string(meta[3]) +
                    ", host formulas say threads=" + std::to_string(threads) + " smem=" +
                    std::to_string(smem) + " BM=" + std::to_string(bm) + " BN=" + std::to_string(bn));
}

int64_t resident_ctas(CUfunction function, int64_t threads, int64_t shared_memory_bytes) {
  CUdevice device = 0;
  int sm_count = 0, per_sm = 0;
  check(cuCtxGetDevice(&device), "cuCtxGetDevice");
  check(cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
        "cuDeviceGetAttribute(multiprocessor count)");
  check(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, function, static_cast<int>(threads),
                                                    static_cast<size_t>(shared_memory_bytes)),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return static_cast<int64_t>(sm_count) * std::max(per_sm, 1);
}

int64_t resident_clusters(CUfunction function, int64_t cluster_size, int64_t threads,
                          int64_t shared_memory_bytes) {
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(cluster_size);
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(threads);
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(shared_memory_bytes);
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = static_cast<unsigned>(cluster_size);
  cluster.value.clusterDim.y = cluster.value.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  check(cuOccupancyMaxActiveClusters(&clusters, function, &config), "cuOccupancyMaxActiveClusters");
  return std::max(clusters, 1);
}

std::unique_ptr<LazyFunction> gemm_entry(const Module& module, const Layout& layout, int64_t shared_memory_bytes,
                                         std::function<void(CUfunction)> then) {
  return std::make_unique<LazyFunction>(module, gemm_entry_name(layout), [shared_memory_bytes, then](CUfunction f) {
    check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(shared_memory_bytes)),
          "cuFuncSetAttribute(max dynamic shared memory)");
    if (then) then(f);
  });
}

bool launch_quick_return(const LazyFunction& scale_c, const DeviceGemm& g, CUstream stream) {
  switch (quick_return(g.shape)) {
    case QuickReturn::none:
      return false;
    case QuickReturn::nothing:
      return true;
    case QuickReturn::scale_c:
      break;
  }
  TfGemmParams p = gemm_params(g);
  void* args[] = {&p};
  const LaunchGeometry geo = scale_c_geometry(g.shape);
  check(cuLaunchKernel(scale_c.get(), static_cast<unsigned>(geo.grid_x), 1, 1, static_cast<unsigned>(geo.block_x),
                       1, 1, 0, stream, args, nullptr),
        "cuLaunchKernel(tf_scale_c)");
  return true;
}

namespace {

// One operand (rows × cols, leading dimension src_ld) into a zero-padded dst_rows × dst_cols buffer: as it
// is, or its transpose (then dst_rows covers cols and dst_cols covers rows).
void pack_operand(const PackKernels& kernels, bool transpose, CUdeviceptr src, CUdeviceptr dst, int64_t rows,
                  int64_t cols, int64_t src_ld, int64_t dst_rows, int64_t dst_cols, int64_t element_bytes,
                  CUstream stream) {
  TfPackParams p{reinterpret_cast<const void*>(src), reinterpret_cast<void*>(dst), rows, cols, src_ld, dst_rows,
                 dst_cols};
  void* args[] = {&p};
  if (transpose) {  // 32×32 tiles of dst, 32×8 threads each
    if (!kernels.transposed) throw Error(ErrorKind::internal, "a plan transposes, but the module has no tf_pack_transposed");
    const auto grid_x = static_cast<unsigned>(std::min<int64_t>((dst_cols + 31) / 32, 65535));
    const auto grid_y = static_cast<unsigned>(std::min<int64_t>((dst_rows + 31) / 32, 65535));
    check(cuLaunchKernel(kernels.transposed->get(), grid_x, grid_y, 1, 32, 8, 1, 0, stream, args, nullptr),
          "cuLaunchKernel(tf_pack_transposed)");
    return;
  }
  // 256 threads: one per 16-byte vector of a dst row, as many rows per CTA as a row leaves threads for, so
  // short rows (K = 7, or a single column) do not leave 255 of 256 threads idle in each of thousands of CTAs
  // (20.6 µs to pack an 8192×1 column on an H200 with one row per CTA: results/profile-h200-7d4addd).
  const int64_t vectors = dst_cols / (16 / element_bytes);
  const int64_t threads = 256;
  const auto row_threads = static_cast<unsigned>(
      std::min<uint64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(vectors, 1))), threads));
  const unsigned rows_per_cta = static_cast<unsigned>(threads) / row_threads;
  const auto grid_x =
      static_cast<unsigned>(std::min<int64_t>((vectors + row_threads - 1) / row_threads, 65535));
  const auto grid_y =
      static_cast<unsigned>(std::min<int64_t>((dst_rows + rows_per_cta - 1) / rows_per_cta, 65535));
  check(cuLaunchKernel(kernels.pack->get(), grid_x, grid_y, 1, row_threads, rows_per_cta, 1, 0, stream, args,
                       nullptr),
        "cuLaunchKernel(tf_pack)");
}

}  // namespace

int64_t launch_packing(const PackKernels& kernels, const PackPlan& plan, const DeviceGemm& g,
                       int64_t element_bytes, CUdeviceptr workspace, TfGemmParams& p, CUstream stream) {
  if (plan.pack_a) {
    const bool col = g.shape.layout.a == Order::col;
    pack_operand(kernels, plan.transpose_a, g.a, workspace, col ? g.shape.k : g.shape.m,
                 col ? g.shape.m : g.shape.k, g.shape.lda, plan.a_rows, plan.lda, element_bytes, stream);
    p.a = reinterpret_cast<const void*>(workspace);
  }
  if (plan.pack_b) {
    const CUdeviceptr b_scratch = workspace + plan.a_bytes;
    const bool col = g.shape.layout.b == Order::col;
    pack_operand(kernels, plan.transpose_b, g.b, b_scratch, col ? g.shape.n : g.shape.k,
                 col ? g.shape.k : g.shape.n, g.shape.ldb, plan.b_rows, plan.ldb, element_bytes, stream);
    p.b = reinterpret_cast<const void*>(b_scratch);
  }
  p.k = plan.k;
  p.lda = plan.lda;
  p.ldb = plan.ldb;
  return plan.a_bytes + plan.b_bytes;
}

void launch_split_k_reduce(const LazyFunction& reduce, const TfGemmParams& p, const GemmShape& shape,
                           CUstream stream) {
  TfGemmParams arguments = p;
  void* args[] = {&arguments};
  const LaunchGeometry geo = split_k_reduce_geometry(shape, p.splits);
  check(cuLaunchKernel(reduce.get(), static_cast<unsigned>(geo.grid_x), 1, 1, static_cast<unsigned>(geo.block_x), 1, 1,
                       0, stream, args, nullptr),
        "cuLaunchKernel(tf_reduce)");
}

CUdeviceptr SplitCounters::zeroed(int64_t count, CUstream stream) const {
  unsigned long long stream_id = 0;
  check(cuStreamGetId(stream, &stream_id), "cuStreamGetId");
  DeviceBuffer& counters = buffers_[stream_id];
  const size_t bytes = static_cast<size_t>(count) * sizeof(uint32_t);
  if (bytes > counters.bytes()) {
    check(cuStreamSynchronize(stream), "cuStreamSynchronize (growing the split-K counters)");
    counters.reserve(bytes);
    check(cuMemsetD32Async(counters.get(), 0, static_cast<size_t>(count), stream),
          "zeroing split-K counters");
  }
  return counters.get();
}

TfGemmParams gemm_params(const DeviceGemm& g) {
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
  p.splits = 1;  // a template that splits K sets its own count (and the workspace and ldw with it)
  return p;
}

}  // namespace tunefuzz::device
