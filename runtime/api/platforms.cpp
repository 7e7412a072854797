// The platforms a build has: CUDA always (runtime/cuda), HIP where ROCm's HIP was found (runtime/hip).
#include "runtime/dispatch/platform.hpp"

namespace tunefuzz::dispatch {

#ifndef TUNEFUZZ_HAVE_HIP
std::unique_ptr<Platform> make_hip_platform(int) {
  throw Error(ErrorKind::unsupported, "this tunefuzz runtime was built without HIP (ROCm's HIP was not found when "
                                      "it was configured): a handle for Platform::hip cannot be made");
}
#endif

}  // namespace tunefuzz::dispatch
