// What a GPU runtime offers the runtime's handle, one interface for CUDA (runtime/cuda) and HIP (runtime/hip):
// the device, a compiled candidate loaded into a Kernel that launches checked requests on a stream, and the
// fallback library, where the platform has one. Streams travel as the platform's own handle behind void*.
// Every call may come from any thread at once.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "runtime/dispatch/dispatch.hpp"

namespace tunefuzz::dispatch {

/// One candidate loaded on the device, ready to launch.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Enqueues the GEMM (a request that passed check(), whose kernel accepted `shape`) on `stream`.
  virtual void run(const Request& request, const GemmShape& shape, void* stream) const = 0;
};

class Platform {
 public:
  virtual ~Platform() = default;
  virtual const DeviceInfo& device() const = 0;
  /// Loads a compiled image of `candidate` (a cubin or an AMDGPU code object) and checks its geometry.
  virtual std::unique_ptr<Kernel> load(const Candidate& candidate, const std::string& image) const = 0;
  /// Whether the platform has a fallback library; its name.
  virtual bool has_fallback() const = 0;
  virtual std::string fallback_name() const = 0;
  /// Why the fallback cannot run this GEMM, or nullopt.
  virtual std::optional<std::string> fallback_refusal(const GemmShape& shape, TypePair types,
                                                      float beta) const = 0;
  virtual void run_fallback(const Request& request, const GemmShape& shape, void* stream) const = 0;
};

/// Platform::cuda on CUDA device `ordinal` (its primary context). Throws Error{no_device} without one.
std::unique_ptr<Platform> make_cuda_platform(int ordinal);
/// Platform::hip on HIP device `ordinal`; Error{unsupported} in a build without HIP.
std::unique_ptr<Platform> make_hip_platform(int ordinal);

}  // namespace tunefuzz::dispatch
