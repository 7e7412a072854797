// Thin RAII over the HIP runtime for AMD GPUs, the counterpart of runtime/cuda/cuda.hpp: the device, device
// buffers, modules (code objects from hiprtc, loaded with hipModuleLoadData), streams and event timing, every
// call checked. Errors carry the hipError_t so a caller can tell a refused launch from a poisoned context.
// Built only when ROCm's HIP is found; it has been compiled here, never run on an AMD GPU (see README).
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz::device::hip {

class HipError : public Error {
 public:
  HipError(hipError_t code, const std::string& what);
  hipError_t code() const { return code_; }
  /// True for the errors after which the process's device state cannot be trusted (it must be replaced).
  bool poisons_context() const;

 private:
  hipError_t code_;
};

void check(hipError_t result, const char* what);

/// Reads HIP device `ordinal`: name, `gfx*` target, limits (warp_size = the wavefront width), memory.
/// Throws Error{no_device} when there is no usable AMD GPU.
DeviceInfo query_device(int ordinal = 0);

/// Makes device `ordinal` current on this thread.
class Device {
 public:
  explicit Device(int ordinal = 0);
  int ordinal() const { return ordinal_; }

 private:
  int ordinal_ = 0;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  hipDeviceptr_t get() const { return pointer_; }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;
  /// Every byte set to `value` (0xff over floats is a NaN pattern).
  void fill(unsigned char value);
  /// Makes sure the buffer holds at least `bytes` (contents are lost when it grows).
  void reserve(size_t bytes);

 private:
  hipDeviceptr_t pointer_ = nullptr;
  size_t bytes_ = 0;
};

class Module {
 public:
  /// Loads a code object (what HiprtcCompiler::compile returns as the image).
  explicit Module(const std::string& image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  hipFunction_t function(const std::string& name) const;
  /// Address and size of a __device__/__constant__ symbol.
  std::pair<hipDeviceptr_t, size_t> global(const std::string& name) const;

 private:
  hipModule_t module_ = nullptr;
};

/// A blocking stream: ordered after the null stream, which runs the synchronous copies (as on CUDA, where a
/// non-blocking stream let kernels overtake the tail of a pageable copy).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  hipStream_t get() const { return stream_; }
  void synchronize() const;

 private:
  hipStream_t stream_ = nullptr;
};

/// Two events around work enqueued on a stream; milliseconds between them.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(hipStream_t stream);
  void stop(hipStream_t stream);
  /// Waits for the stop event.
  double milliseconds() const;

 private:
  hipEvent_t start_ = nullptr;
  hipEvent_t stop_ = nullptr;
};

}  // namespace tunefuzz::device::hip
