// Thin RAII over the CUDA driver API for the worker process: the primary context, device buffers, modules
// and streams, every call checked. Errors carry the CUresult so the worker can tell a refused launch from
// a poisoned context (illegal address and friends), after which nothing more can run in this process.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "tuner/common/error.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz::device {

class CudaError : public Error {
 public:
  CudaError(CUresult code, const std::string& what);
  CUresult code() const { return code_; }
  /// True for the sticky errors that leave the context unusable (the process must be replaced).
  bool poisons_context() const;

 private:
  CUresult code_;
};

void check(CUresult result, const char* what);

/// Initialises the driver and reads device `ordinal`. Throws Error{no_device} when there is none.
DeviceInfo query_device(int ordinal = 0);

/// The device's primary context, current on this thread for the object's lifetime.
class Context {
 public:
  explicit Context(int ordinal = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  CUdevice device() const { return device_; }

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
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

  CUdeviceptr get() const { return pointer_; }
  size_t bytes() const { return bytes_; }
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;
  /// Makes sure the buffer holds at least `bytes` (contents are lost when it grows).
  void reserve(size_t bytes);

 private:
  CUdeviceptr pointer_ = 0;
  size_t bytes_ = 0;
};

class Module {
 public:
  explicit Module(const std::string& image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function(const std::string& name) const;
  /// Address and size of a __device__/__constant__ symbol.
  std::pair<CUdeviceptr, size_t> global(const std::string& name) const;

 private:
  CUmodule module_ = nullptr;
};

/// One kernel of a module, looked up on first use. Under lazy module loading (the driver's default since CUDA
/// 12.2) cuModuleGetFunction is what loads a kernel's code onto the GPU, so a runner whose module holds several
/// entry points (one per storage order, packing, the split-K reduce, the K = 0 scaling) loads only those its
/// calls launch. `prepare`, when given, runs once on the loaded function before get() hands it out (an
/// attribute to set, an occupancy to read); a throw leaves it unloaded for the next get(). Thread-safe.
class LazyFunction {
 public:
  LazyFunction(const Module& module, std::string name, std::function<void(CUfunction)> prepare = {});
  LazyFunction(const LazyFunction&) = delete;
  LazyFunction& operator=(const LazyFunction&) = delete;
  CUfunction get() const;
  const std::string& name() const { return name_; }

 private:
  const Module& module_;
  std::string name_;
  std::function<void(CUfunction)> prepare_;
  mutable std::once_flag once_;
  mutable CUfunction function_ = nullptr;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

}  // namespace tunefuzz::device
