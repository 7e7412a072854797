// What making a CUDA context costs when many processes make theirs at once: the probe behind the serving
// workers' start-up (issue 20). Not part of the build; compile it where the CUDA toolkit is:
//   g++ -O2 -std=c++17 scripts/context_probe.cpp -I/usr/local/cuda/include -lcuda -o context_probe
// Usage: context_probe [HOLD_SECONDS]. Prints one line: the wall-clock microsecond (CLOCK_REALTIME) at which
// each step ended, so lines from processes started together show whether their steps overlap or queue:
// main, cuInit, the primary context's retain, a first stream, a first 1 MiB allocation. With HOLD_SECONDS it
// then keeps the context that long (a process holding the device while others start).
#include <cuda.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

long long now_us() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "context_probe: %s: %s\n", what, name ? name : "?");
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const long long main_us = now_us();
  check(cuInit(0), "cuInit");
  const long long init_us = now_us();
  CUdevice device;
  CUcontext context;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  const long long context_us = now_us();
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const long long stream_us = now_us();
  CUdeviceptr p;
  check(cuMemAlloc(&p, 1 << 20), "cuMemAlloc");
  check(cuMemsetD8Async(p, 0, 1 << 20, stream), "cuMemsetD8Async");
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  const long long alloc_us = now_us();
  std::printf("pid %d main %lld init %lld context %lld stream %lld alloc %lld\n", getpid(), main_us, init_us,
              context_us, stream_us, alloc_us);
  std::fflush(stdout);
  if (argc > 1) sleep(static_cast<unsigned>(std::atoi(argv[1])));
  return 0;
}
