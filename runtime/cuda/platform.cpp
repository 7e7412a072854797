// The CUDA platform of the runtime's handle: the device's primary context, made current around each call on
// whichever thread makes it (and the caller's own context put back after), candidates loaded through the same
// launchers the worker times (load_candidate), scratch memory (packing copies, split-K partials) taken from
// the handle's own stream-ordered pool on the caller's stream, and cuBLAS as the fallback: one CublasRunner per
// element types, beta's class and stream, so no cuBLAS workspace is shared by two streams.
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "runtime/cuda/runner.hpp"
#include "runtime/dispatch/platform.hpp"

namespace tunefuzz::dispatch {

namespace {

using device::check;

/// The primary context current on this thread for the scope; the caller's context back afterwards.
class ContextScope {
 public:
  explicit ContextScope(CUcontext context) {
    CUcontext current = nullptr;
    check(cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current != context) {
      check(cuCtxPushCurrent(context), "cuCtxPushCurrent");
      pushed_ = true;
    }
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    if (pushed_) cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  bool pushed_ = false;
};

device::DeviceGemm device_gemm(const Request& r, const GemmShape& shape) {
  device::DeviceGemm g;
  g.a = static_cast<CUdeviceptr>(r.a);
  g.b = static_cast<CUdeviceptr>(r.b);
  g.c = static_cast<CUdeviceptr>(r.c);
  g.shape = shape;
  g.alpha = r.alpha;
  g.beta = r.beta;
  return g;
}

/// The handle's scratch pool. It keeps what it has mapped (release threshold: never), so a call's scratch is
/// taken from memory the last call freed instead of being mapped again: with the device's default pool, which
/// hands memory back at every synchronisation, a 268 MB packing copy cost 13 ms per call on an H200 against
/// 0.16 ms for the GEMM. It holds the most scratch one call needed until the handle goes.
class ScratchPool {
 public:
  explicit ScratchPool(CUdevice device) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = static_cast<int>(device);
    check(cuMemPoolCreate(&pool_, &props), "cuMemPoolCreate(scratch)");
    cuuint64_t keep_all = ~cuuint64_t{0};
    check(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all),
          "cuMemPoolSetAttribute(release threshold)");
  }
  ~ScratchPool() { cuMemPoolDestroy(pool_); }  // the driver releases it once outstanding frees complete
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  CUmemoryPool get() const { return pool_; }

  /// Maps the pool's first block now, while the handle is being made: a pool's first allocation cost 8-11 ms
  /// on an H200 (its second from the same block 0.06 ms), which a first call would otherwise pay.
  void prime(CUstream stream) {
    CUdeviceptr block = 0;
    check(cuMemAllocFromPoolAsync(&block, kPrimeBytes, pool_, stream), "cuMemAllocFromPoolAsync(prime)");
    check(cuMemFreeAsync(block, stream), "cuMemFreeAsync(prime)");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize(prime)");
  }

 private:
  static constexpr size_t kPrimeBytes = size_t{1} << 20;
  CUmemoryPool pool_ = nullptr;
};

class CudaKernel final : public Kernel {
 public:
  CudaKernel(std::unique_ptr<device::GemmRunner> runner, CUcontext context, CUmemoryPool scratch)
      : runner_(std::move(runner)), context_(context), scratch_(scratch) {}

  void run(const Request& request, const GemmShape& shape, void* stream) const override {
    const ContextScope scope(context_);
    const auto s = static_cast<CUstream>(stream);
    const device::DeviceGemm g = device_gemm(request, shape);
    const int64_t bytes = runner_->workspace_bytes(shape);
    if (bytes == 0) return runner_->run(g, 0, s);
    CUdeviceptr workspace = 0;
    check(cuMemAllocFromPoolAsync(&workspace, static_cast<size_t>(bytes), scratch_, s),
          "cuMemAllocFromPoolAsync(workspace)");
    try {
      runner_->run(g, workspace, s);
    } catch (...) {
      cuMemFreeAsync(workspace, s);
      throw;
    }
    check(cuMemFreeAsync(workspace, s), "cuMemFreeAsync(workspace)");
  }

 private:
  std::unique_ptr<device::GemmRunner> runner_;
  CUcontext context_;
  CUmemoryPool scratch_;
};

class CudaPlatform final : public Platform {
 public:
  explicit CudaPlatform(int ordinal) : device_(device::query_device(ordinal)) {
    check(cuDeviceGet(&handle_, ordinal), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&context_, handle_), "cuDevicePrimaryCtxRetain");
    const ContextScope scope(context_);
    scratch_ = std::make_unique<ScratchPool>(handle_);
    CUstream stream = nullptr;
    check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate(prime)");
    try {
      scratch_->prime(stream);
    } catch (...) {
      cuStreamDestroy(stream);
      throw;
    }
    cuStreamDestroy(stream);
  }
  ~CudaPlatform() override {
    {
      const ContextScope scope(context_);
      cublas_.clear();  // handles before the context they live in
      scratch_.reset();
    }
    cuDevicePrimaryCtxRelease(handle_);
  }

  const DeviceInfo& device() const override { return device_; }

  std::unique_ptr<Kernel> load(const Candidate& candidate, const std::string& image) const override {
    const ContextScope scope(context_);
    return std::make_unique<CudaKernel>(device::load_candidate(candidate, image), context_, scratch_->get());
  }

  bool has_fallback() const override { return true; }
  std::string fallback_name() const override { return "cuBLAS"; }

  std::optional<std::string> fallback_refusal(const GemmShape& shape, TypePair types, float beta) const override {
    const ContextScope scope(context_);
    const std::lock_guard lock(cublas_mutex_);
    return cublas(types, beta, nullptr, kNoStream).refusal(shape);
  }

  void run_fallback(const Request& request, const GemmShape& shape, void* stream) const override {
    const ContextScope scope(context_);
    const auto s = static_cast<CUstream>(stream);
    unsigned long long stream_id = 0;
    check(cuStreamGetId(s, &stream_id), "cuStreamGetId");
    const std::lock_guard lock(cublas_mutex_);  // a runner's plans and stream are set per call
    cublas({request.a_type, request.c_type}, request.beta, s, stream_id).run(device_gemm(request, shape), 0, s);
  }

 private:
  static constexpr unsigned long long kNoStream = ~0ull;  ///< the runner that only answers refusals

  /// The runner for these types, beta's class (zero or not: cuBLASLt serves an fp8 C only with beta == 0) and
  /// stream (by cuStreamGetId, never reused), made on first use (cublas_mutex_ held).
  device::CublasRunner& cublas(TypePair types, float beta, CUstream stream, unsigned long long stream_id) const {
    const auto key = std::make_tuple(static_cast<int>(types.input), static_cast<int>(types.output), beta != 0,
                                     stream_id);
    auto found = cublas_.find(key);
    if (found == cublas_.end())
      found = cublas_.emplace(key, std::make_unique<device::CublasRunner>(types, beta, stream)).first;
    return *found->second;
  }

  DeviceInfo device_;
  CUdevice handle_ = 0;
  CUcontext context_ = nullptr;
  std::unique_ptr<ScratchPool> scratch_;  ///< made in the context, reset before the context is released
  mutable std::mutex cublas_mutex_;
  mutable std::map<std::tuple<int, int, bool, unsigned long long>, std::unique_ptr<device::CublasRunner>> cublas_;
};

}  // namespace

std::unique_ptr<Platform> make_cuda_platform(int ordinal) {
  return std::make_unique<CudaPlatform>(ordinal);
}

}  // namespace tunefuzz::dispatch
