// Resident CTAs per SM from a kernel's threads, registers and shared memory, against the GPU's limits (the
// same arithmetic as the CUDA occupancy calculator, with registers allocated per warp in units of 256).
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
