// The HIP platform of the runtime's handle: device `ordinal` made current on the calling thread around each
// call (hipSetDevice is per thread), candidates loaded through the HIP launcher the worker's HIP fuzz job uses,
// and no fallback library (this build has no rocBLAS or hipBLAS baseline). Compiled and linked here; never run
// on an AMD GPU (docs/architecture.md, "HIP backend").
#include "runtime/dispatch/platform.hpp"
#include "runtime/hip/gemm_simt_hip.hpp"

namespace tunefuzz::dispatch {

namespace {

class HipKernel final : public Kernel {
 public:
  HipKernel(std::unique_ptr<device::hip::HipGemmRunner> runner, int ordinal)
      : runner_(std::move(runner)), ordinal_(ordinal) {}

  void run(const Request& r, const GemmShape& shape, void* stream) const override {
    const device::hip::Device current(ordinal_);
    device::hip::HipGemm g;
    g.a = reinterpret_cast<hipDeviceptr_t>(r.a);
    g.b = reinterpret_cast<hipDeviceptr_t>(r.b);
    g.c = reinterpret_cast<hipDeviceptr_t>(r.c);
    g.shape = shape;
    g.alpha = r.alpha;
    g.beta = r.beta;
    runner_->run(g, static_cast<hipStream_t>(stream));
  }

 private:
  std::unique_ptr<device::hip::HipGemmRunner> runner_;
  int ordinal_;
};

class HipPlatform final : public Platform {
 public:
  explicit HipPlatform(int ordinal) : device_(device::hip::query_device(ordinal)), ordinal_(ordinal) {}

  const DeviceInfo& device() const override { return device_; }

  std::unique_ptr<Kernel> load(const Candidate& candidate, const std::string& image) const override {
    const device::hip::Device current(ordinal_);
    return std::make_unique<HipKernel>(device::hip::load_candidate(candidate, image), ordinal_);
  }

  bool has_fallback() const override { return false; }
  std::string fallback_name() const override { return {}; }
  std::optional<std::string> fallback_refusal(const GemmShape&, TypePair, float) const override {
    return std::string("no fallback library on HIP");
  }
  void run_fallback(const Request&, const GemmShape&, void*) const override {
    throw Error(ErrorKind::internal, "HIP has no fallback library, yet it was asked to run one");
  }

 private:
  DeviceInfo device_;
  int ordinal_;
};

}  // namespace

std::unique_ptr<Platform> make_hip_platform(int ordinal) {
  return std::make_unique<HipPlatform>(ordinal);
}

}  // namespace tunefuzz::dispatch
