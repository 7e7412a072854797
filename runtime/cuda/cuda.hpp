// Thin RAII over the CUDA driver API for the worker process: the primary context, device buffers, modules
// and streams, every call checked. Errors carry the CUresult so the worker can tell a refused launch from
// a poisoned context (illegal address and friends), after which nothing more can run in this process.
#pragma once

#include <cuda.h>

#include <cstdint>
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
