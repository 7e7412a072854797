// Resident CTAs per SM (workgroups per CU on AMD) from a kernel's threads, registers and shared memory,
// against the GPU's limits: the arithmetic of the CUDA occupancy calculator, with threads grouped into warps
// (wavefronts) of `limits.warp_size` and registers allocated per warp, 8 per thread at a time (256 per
// 32-thread warp on NVIDIA, 512 per 64-wide wavefront on CDNA).
#pragma once

#include <cstdint>
#include <string>

#include "tuner/config/config.hpp"

namespace tunefuzz {

struct Occupancy {
  int64_t blocks_per_sm = 0;
  std::string limited_by;  ///< threads | registers | shared_memory | blocks
};

Occupancy occupancy(int64_t threads_per_block, int registers_per_thread, int64_t shared_memory_per_block,
                    const GpuLimits& limits);

}  // namespace tunefuzz
