// Launcher of templates/gemm_skinny.cu: one kernel on a 1-D grid of units (output tiles × K splits). With more
// than one split, the splits' fp32 partials go to the workspace and each tile's arrival counter lives in a
// buffer this launcher owns: zeroed when allocated, and put back to zero by the kernel itself (the last split
// of a tile resets its counter), so a launch needs no memset. The counters stay outside the workspace because
// the fuzzer fills the workspace with NaN before every launch. One buffer per stream (by cuStreamGetId, which
// a new stream never reuses): launches on one stream are ordered, so no two launches share counters at once,
// and threads may launch one runner on their own streams together.
#include <map>
#include <memory>
#include <mutex>
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
    CUdeviceptr counters = 0;
    std::unique_lock<std::mutex> lock(counters_mutex_, std::defer_lock);  // held until the launch is enqueued
    if (p.splits > 1) {
      lock.lock();
      counters = zeroed_counters(gemm_skinny_tiles(candidate_.point, g.shape), stream);
    }
    const std::unique_ptr<LazyFunction>& gemm = gemm_[layout_index(g.shape.layout)];
    if (!gemm)
      throw Error(ErrorKind::unsupported,
                  candidate_.id() + " has no kernel for layout " + to_string(g.shape.layout));
    void* args[] = {&p, &counters};
    check(cuLaunchKernel(gemm->get(), static_cast<unsigned>(geo.grid_x), 1, 1,
                         static_cast<unsigned>(geo.block_x), 1, 1, static_cast<unsigned>(geo.shared_memory_bytes),
                         stream, args, nullptr),
          "cuLaunchKernel(tf_gemm_*)");
  }

 private:
  /// At least `count` counters of `stream`, all zero when its next launch starts (counters_mutex_ held). A
  /// buffer grows (and is zeroed) only when a problem has more tiles than any before on its stream; after the
  /// stream has drained, since a launch still running may use the old one.
  CUdeviceptr zeroed_counters(int64_t count, CUstream stream) const {
    unsigned long long stream_id = 0;
    check(cuStreamGetId(stream, &stream_id), "cuStreamGetId");
    DeviceBuffer& counters = counters_[stream_id];
    const size_t bytes = static_cast<size_t>(count) * sizeof(uint32_t);
    if (bytes > counters.bytes()) {
      check(cuStreamSynchronize(stream), "cuStreamSynchronize (growing the split-K counters)");
      counters.reserve(bytes);
      check(cuMemsetD32Async(counters.get(), 0, static_cast<size_t>(count), stream), "zeroing split-K counters");
    }
    return counters.get();
  }

  Candidate candidate_;
  Module module_;
  LazyFunction scale_c_;
  std::unique_ptr<LazyFunction> gemm_[4];  ///< tf_gemm_rr, _rc, _cr, _cc by layout_index
  mutable std::mutex counters_mutex_;
  mutable std::map<unsigned long long, DeviceBuffer> counters_;  ///< by stream id, under counters_mutex_
};

}  // namespace

std::unique_ptr<GemmRunner> make_gemm_skinny_runner(const Candidate& candidate, const std::string& image) {
  return std::make_unique<GemmSkinnyRunner>(candidate, image);
}

}  // namespace tunefuzz::device
