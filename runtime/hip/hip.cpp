#include "runtime/hip/hip.hpp"

#include <string>
#include <utility>

namespace tunefuzz::device::hip {

namespace {

std::string describe(hipError_t code) {
  const std::string name = hipGetErrorName(code), text = hipGetErrorString(code);
  return text == name ? name : name + " (" + text + ")";
}

ErrorKind kind_of(hipError_t code) {
  switch (code) {
    case hipErrorNoDevice:
    case hipErrorInsufficientDriver:
    case hipErrorNotInitialized:
      return ErrorKind::no_device;
    case hipErrorOutOfMemory:
      return ErrorKind::device_limit;
    default:
      return ErrorKind::launch;
  }
}

/// hipDeviceProp_t::gcnArchName is the target with its features (`gfx90a:sramecc+:xnack-`): the target alone.
std::string target_of(const char* gcn_arch_name) {
  const std::string name = gcn_arch_name;
  return name.substr(0, name.find(':'));
}

}  // namespace

HipError::HipError(hipError_t code, const std::string& what)
    : Error(kind_of(code), what + ": " + describe(code)), code_(code) {}

bool HipError::poisons_context() const {
  switch (code_) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
    case hipErrorECCNotCorrectable:
    case hipErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

void check(hipError_t result, const char* what) {
  if (result != hipSuccess) throw HipError(result, what);
}

DeviceInfo query_device(int ordinal) {
  int count = 0;
  const hipError_t counted = hipGetDeviceCount(&count);
  if (counted != hipSuccess || count == 0)
    throw Error(ErrorKind::no_device,
                "no usable HIP device: " + (counted != hipSuccess ? "hipGetDeviceCount: " + describe(counted)
                                                                  : std::string("no AMD GPU present")));
  if (ordinal >= count)
    throw Error(ErrorKind::no_device, "HIP device " + std::to_string(ordinal) + " requested but " +
                                          std::to_string(count) + " present");
  hipDeviceProp_t properties{};
  check(hipGetDeviceProperties(&properties, ordinal), "hipGetDeviceProperties");
  const auto attribute = [&](hipDeviceAttribute_t a) {
    int value = 0;
    check(hipDeviceGetAttribute(&value, a, ordinal), "hipDeviceGetAttribute");
    return static_cast<int64_t>(value);
  };
  DeviceInfo info;
  info.name = properties.name;
  info.arch = target_of(properties.gcnArchName);
  GpuLimits& limits = info.limits;
  // AMD has no opt-in beyond the per-workgroup LDS and reserves none per workgroup.
  limits.shared_memory_per_block_optin = static_cast<int64_t>(properties.sharedMemPerBlock);
  limits.shared_memory_per_sm = attribute(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor);
  limits.shared_memory_reserved_per_block = 0;
  limits.registers_per_sm = attribute(hipDeviceAttributeMaxRegistersPerMultiprocessor);
  limits.max_threads_per_block = properties.maxThreadsPerBlock;
  limits.max_threads_per_sm = properties.maxThreadsPerMultiProcessor;
  // HIP does not report workgroups per CU on AMD; gfx9 (GCN, CDNA) has barrier resources for 16 workgroups
  // of more than one wavefront per CU (LLVM AMDGPUBaseInfo, getMaxWorkGroupsPerCU), as the configs state.
  if (info.arch.rfind("gfx9", 0) == 0) limits.max_blocks_per_sm = 16;
  limits.sm_count = properties.multiProcessorCount;
  limits.warp_size = properties.warpSize;
  info.l2_bytes = properties.l2CacheSize;
  info.memory_bytes = static_cast<int64_t>(properties.totalGlobalMem);
  int driver = 0;
  check(hipDriverGetVersion(&driver), "hipDriverGetVersion");
  info.driver_version = "HIP " + std::to_string(driver);
  info.device_count = count;
  return info;
}

Device::Device(int ordinal) : ordinal_(ordinal) {
  check(hipSetDevice(ordinal), "hipSetDevice");
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
  reserve(bytes);
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_) (void)hipFree(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_) (void)hipFree(pointer_);
    pointer_ = std::exchange(other.pointer_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_ && pointer_) return;
  if (pointer_) check(hipFree(pointer_), "hipFree");
  pointer_ = nullptr;
  bytes_ = 0;
  check(hipMalloc(&pointer_, bytes ? bytes : 1), "hipMalloc");
  bytes_ = bytes;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  if (offset + bytes > bytes_) throw Error(ErrorKind::internal, "upload past the end of a device buffer");
  if (bytes == 0) return;  // an empty operand (a zero size)
  check(hipMemcpyHtoD(static_cast<char*>(pointer_) + offset, const_cast<void*>(host), bytes),
        "hipMemcpyHtoD");
}

void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  if (offset + bytes > bytes_) throw Error(ErrorKind::internal, "download past the end of a device buffer");
  if (bytes == 0) return;
  check(hipMemcpyDtoH(host, static_cast<char*>(pointer_) + offset, bytes), "hipMemcpyDtoH");
}

void DeviceBuffer::fill(unsigned char value) {
  check(hipMemsetD8(pointer_, value, bytes_), "hipMemsetD8");
}

Module::Module(const std::string& image) {
  check(hipModuleLoadData(&module_, image.data()), "hipModuleLoadData");
}

Module::~Module() {
  if (module_) (void)hipModuleUnload(module_);
}

hipFunction_t Module::function(const std::string& name) const {
  hipFunction_t f = nullptr;
  check(hipModuleGetFunction(&f, module_, name.c_str()), ("hipModuleGetFunction " + name).c_str());
  return f;
}

std::pair<hipDeviceptr_t, size_t> Module::global(const std::string& name) const {
  hipDeviceptr_t pointer = nullptr;
  size_t bytes = 0;
  check(hipModuleGetGlobal(&pointer, &bytes, module_, name.c_str()), ("hipModuleGetGlobal " + name).c_str());
  return {pointer, bytes};
}

Stream::Stream() {
  check(hipStreamCreateWithFlags(&stream_, hipStreamDefault), "hipStreamCreateWithFlags");
}

Stream::~Stream() {
  if (stream_) (void)hipStreamDestroy(stream_);
}

void Stream::synchronize() const {
  check(hipStreamSynchronize(stream_), "hipStreamSynchronize");
}

EventTimer::EventTimer() {
  check(hipEventCreate(&start_), "hipEventCreate");
  const hipError_t created = hipEventCreate(&stop_);
  if (created != hipSuccess) {
    (void)hipEventDestroy(start_);
    throw HipError(created, "hipEventCreate");
  }
}

EventTimer::~EventTimer() {
  if (start_) (void)hipEventDestroy(start_);
  if (stop_) (void)hipEventDestroy(stop_);
}

void EventTimer::start(hipStream_t stream) {
  check(hipEventRecord(start_, stream), "hipEventRecord");
}

void EventTimer::stop(hipStream_t stream) {
  check(hipEventRecord(stop_, stream), "hipEventRecord");
}

double EventTimer::milliseconds() const {
  check(hipEventSynchronize(stop_), "hipEventSynchronize");
  float ms = 0;
  check(hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime");
  return ms;
}

}  // namespace tunefuzz::device::hip
