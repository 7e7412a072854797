#include "runtime/cuda/template_launch.hpp"

#include <algorithm>
#include <cctype>
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

std::string gemm_entry_name(const Layout& layout) {
  std::string name = "tf_gemm_" + to_string(layout);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

int layout_index(const Layout& layout) {
  return (layout.a == Order::col ? 2 : 0) + (layout.b == Order::col ? 1 : 0);
}

bool launch_quick_return(CUfunction scale_c, const DeviceGemm& g, CUstream stream) {
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
  check(cuLaunchKernel(scale_c, static_cast<unsigned>(geo.grid_x), 1, 1, static_cast<unsigned>(geo.block_x),
                       1, 1, 0, stream, args, nullptr),
        "cuLaunchKernel(tf_scale_c)");
  return true;
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
  return p;
}

}  // namespace tunefuzz::device
