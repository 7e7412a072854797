// What loading one kernel image costs, phase by phase, with the driver API alone: the profile behind the
// runtime's first-call figure (docs/runtime.md). Not part of the build; compile it where the CUDA toolkit is:
//   g++ -O2 -std=c++17 scripts/load_probe.cpp -I/usr/local/cuda/include -lcuda -o load_probe
// Usage: load_probe IMAGE.cubin SCRATCH_BYTES FUNCTION...   (run it under CUDA_MODULE_LOADING=LAZY and =EAGER)
// Prints one line per phase in microseconds: the image's load, each function's handle, the kernel-meta read
// (tf_kernel_meta through cuMemcpyDtoH), a first and a second allocation from a fresh stream-ordered pool.
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

double us_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "load_probe: %s: %s\n", what, name ? name : "?");
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: load_probe IMAGE.cubin SCRATCH_BYTES FUNCTION...\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  using Clock = std::chrono::steady_clock;
  check(cuInit(0), "cuInit");
  CUdevice device;
  CUcontext context;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUmoduleLoadingMode mode;
  check(cuModuleGetLoadingMode(&mode), "cuModuleGetLoadingMode");
  std::printf("image: {bytes: %zu, loading: %s}\n", image.size(), mode == CU_MODULE_LAZY_LOADING ? "lazy" : "eager");
  auto t0 = Clock::now();
  CUmodule module;
  check(cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  std::printf("module_load_us: %.1f\n", us_since(t0));
  for (int i = 3; i < argc; ++i) {
    t0 = Clock::now();
    CUfunction f;
    if (cuModuleGetFunction(&f, module, argv[i]) != CUDA_SUCCESS) {
      std::printf("function: {name: %s, absent: true}\n", argv[i]);
      continue;
    }
    const double get = us_since(t0);
    t0 = Clock::now();
    check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0), "cuFuncSetAttribute");
    std::printf("function: {name: %s, get_us: %.1f, set_attribute_us: %.1f}\n", argv[i], get, us_since(t0));
  }
  t0 = Clock::now();
  CUdeviceptr meta;
  size_t bytes;
  if (cuModuleGetGlobal(&meta, &bytes, module, "tf_kernel_meta") == CUDA_SUCCESS) {
    int values[4];
    check(cuMemcpyDtoH(values, meta, sizeof values), "cuMemcpyDtoH");
    std::printf("kernel_meta_us: %.1f\n", us_since(t0));
  }
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool;
  check(cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  const size_t scratch = std::stoull(argv[2]);
  for (int round = 0; round < 2 && scratch > 0; ++round) {
    t0 = Clock::now();
    CUdeviceptr p;
    check(cuMemAllocFromPoolAsync(&p, scratch, pool, stream), "cuMemAllocFromPoolAsync");
    check(cuMemFreeAsync(p, stream), "cuMemFreeAsync");
    std::printf("scratch_alloc_us: {round: %d, bytes: %zu, us: %.1f}\n", round, scratch, us_since(t0));
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  return 0;
}
