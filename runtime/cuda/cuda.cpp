#include "runtime/cuda/cuda.hpp"

#include <cstdio>
#include <fstream>
#include <regex>
#include <utility>

namespace tunefuzz::device {

namespace {
std::string describe(CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(code, &name);
  cuGetErrorString(code, &text);
  return std::string(name ? name : "CUDA_ERROR_?") + " (" + (text ? text : "unknown") + ")";
}

ErrorKind kind_of(CUresult code) {
  switch (code) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return ErrorKind::no_device;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return ErrorKind::device_limit;
    default:
      return ErrorKind::launch;
  }
}

std::string read_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::smatch m;
  static const std::regex version(R"(Kernel Module\s+(?:for \S+\s+)?([0-9]+\.[0-9]+(?:\.[0-9]+)?))");
  while (std::getline(in, line))
    if (std::regex_search(line, m, version)) return m[1];
  return "unknown";
}
}  // namespace

CudaError::CudaError(CUresult code, const std::string& what)
    : Error(kind_of(code), what + ": " + describe(code)), code_(code) {}

bool CudaError::poisons_context() const {
  switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

void check(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) throw CudaError(result, what);
}

namespace {
// `GPU-` and the 16 bytes in nvidia-smi's grouping (8-4-4-4-12 hex digits).
std::string format_uuid(const CUuuid& uuid) {
  std::string out = "GPU-";
  char digits[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += digits;
  }
  return out;
}
}  // namespace

DeviceInfo query_device(int ordinal) {
  const CUresult init = cuInit(0);
  if (init != CUDA_SUCCESS)
    throw Error(ErrorKind::no_device, "no usable CUDA device: cuInit: " + describe(init));
  int count = 0;
  check(cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal >= count)
    throw Error(ErrorKind::no_device, "CUDA device " + std::to_string(ordinal) + " requested but " +
                                          std::to_string(count) + " present");
  CUdevice device;
  check(cuDeviceGet(&device, ordinal), "cuDeviceGet");
  const auto attribute = [&](CUdevice_attribute a) {
    int value = 0;
    check(cuDeviceGetAttribute(&value, a, device), "cuDeviceGetAttribute");
    return static_cast<int64_t>(value);
  };
  DeviceInfo p;
  char name[256] = {};
  check(cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  p.name = name;
  p.arch = "sm_" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
           std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  p.limits.shared_memory_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  p.limits.shared_memory_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  p.limits.shared_memory_reserved_per_block = attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  p.limits.registers_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  p.limits.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.limits.max_threads_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  p.limits.max_blocks_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  p.limits.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t memory = 0;
  check(cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem");
  p.memory_bytes = static_cast<int64_t>(memory);
  check(cuDriverGetVersion(&p.cuda_driver_api), "cuDriverGetVersion");
  p.driver_version = read_driver_version();
  p.device_count = count;
  CUuuid uuid;
  check(cuDeviceGetUuid(&uuid, device), "cuDeviceGetUuid");
  p.uuid = format_uuid(uuid);
  return p;
}

Context::Context(int ordinal) {
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

Context::~Context() {
  if (context_) cuDevicePrimaryCtxRelease(device_);
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
  reserve(bytes);
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_) cuMemFree(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_) cuMemFree(pointer_);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_ && pointer_) return;
  if (pointer_) check(cuMemFree(pointer_), "cuMemFree");
  pointer_ = 0;
  bytes_ = 0;
  check(cuMemAlloc(&pointer_, bytes ? bytes : 1), "cuMemAlloc");
  bytes_ = bytes;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  if (offset + bytes > bytes_) throw Error(ErrorKind::internal, "upload past the end of a device buffer");
  if (bytes == 0) return;  // an empty operand (a zero size)
  check(cuMemcpyHtoD(pointer_ + offset, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  if (offset + bytes > bytes_) throw Error(ErrorKind::internal, "download past the end of a device buffer");
  if (bytes == 0) return;
  check(cuMemcpyDtoH(host, pointer_ + offset, bytes), "cuMemcpyDtoH");
}

Module::Module(const std::string& image) {
  check(cuModuleLoadData(&module_, image.data()), "cuModuleLoadData");
}

Module::~Module() {
  if (module_) cuModuleUnload(module_);
}

CUfunction Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  check(cuModuleGetFunction(&f, module_, name.c_str()), ("cuModuleGetFunction " + name).c_str());
  return f;
}

LazyFunction::LazyFunction(const Module& module, std::string name, std::function<void(CUfunction)> prepare)
    : module_(module), name_(std::move(name)), prepare_(std::move(prepare)) {}

CUfunction LazyFunction::get() const {
  std::call_once(once_, [this] {
    const CUfunction f = module_.function(name_);
    if (prepare_) prepare_(f);
    function_ = f;
  });
  return function_;
}

std::pair<CUdeviceptr, size_t> Module::global(const std::string& name) const {
  CUdeviceptr pointer = 0;
  size_t bytes = 0;
  check(cuModuleGetGlobal(&pointer, &bytes, module_, name.c_str()), ("cuModuleGetGlobal " + name).c_str());
  return {pointer, bytes};
}

// A blocking stream: work on it is ordered after the legacy stream, which runs the synchronous copies. A
// pageable cuMemcpyHtoD returns before its DMA lands; a non-blocking stream let kernels overtake that tail
// (the fuzzer caught it as "unwritten" outputs overwritten by the late NaN poison).
Stream::Stream() {
  check(cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
}

Stream::~Stream() {
  if (stream_) cuStreamDestroy(stream_);
}

void Stream::synchronize() const {
  check(cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

}  // namespace tunefuzz::device
