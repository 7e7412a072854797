#include "tuner/device/hip/case_device.hpp"

namespace tunefuzz::device::hip {

std::optional<std::string> HipCaseDevice::launch(const CaseLaunch& l) {
  // The HIP launcher neither splits K nor walks a persistent grid (takes_overrides: its case space never
  // asks): an override would go unheeded, untested.
  if (l.overrides != LaunchOverrides{})
    throw Error(ErrorKind::internal, runner_.name() + " was asked for split-K or a persistent grid");
  const auto at = [&](CaseBuffer which, size_t offset) {
    return static_cast<hipDeviceptr_t>(static_cast<char*>(buffer(which).get()) + offset);
  };
  const HipGemm gemm{at(CaseBuffer::a, l.a_offset),
                     at(CaseBuffer::b, l.b_offset),
                     at(CaseBuffer::c, l.c_offset),
                     l.shape,
                     l.alpha,
                     l.beta};
  return launch_error([&] {
    runner_.run(gemm, stream_);
    check(hipStreamSynchronize(stream_), "hipStreamSynchronize after the kernel");
  });
}

}  // namespace tunefuzz::device::hip
