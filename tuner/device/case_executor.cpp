#include "tuner/device/case_executor.hpp"

namespace tunefuzz::device {

std::optional<std::string> CudaCaseDevice::launch(const CaseLaunch& l) {
  DeviceGemm gemm;
  gemm.a = buffer(CaseBuffer::a).get() + l.a_offset;
  gemm.b = buffer(CaseBuffer::b).get() + l.b_offset;
  gemm.c = buffer(CaseBuffer::c).get() + l.c_offset;
  gemm.shape = l.shape;
  gemm.alpha = l.alpha;
  gemm.beta = l.beta;
  gemm.overrides = l.overrides;
  const CUdeviceptr workspace = buffer(CaseBuffer::workspace).get();
  return launch_error([&] {
    // Scratch starts as NaN (all-ones bytes), so a kernel that reads workspace it never wrote shows up.
    if (l.workspace_bytes > 0)
      check(cuMemsetD8Async(workspace, 0xFF, static_cast<size_t>(l.workspace_bytes), stream_),
            "cuMemsetD8Async(workspace)");
    runner_.run(gemm, workspace, stream_);
    check(cuStreamSynchronize(stream_), "cuStreamSynchronize after the kernel");
  });
}

}  // namespace tunefuzz::device
