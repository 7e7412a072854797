#include "tuner/campaign/occupancy.hpp"

#include <algorithm>

namespace tunefuzz {

Occupancy occupancy(int64_t threads, int registers, int64_t shared_memory, const GpuLimits& limits) {
  const int64_t warps = (threads + 31) / 32;
  // Registers are allocated per warp, 256 at a time (8 per thread).
  const int64_t registers_per_warp = (static_cast<int64_t>(std::max(registers, 1)) * 32 + 255) / 256 * 256;
  const int64_t by_registers = (limits.registers_per_sm / registers_per_warp) / warps;
  const int64_t by_threads = limits.max_threads_per_sm / (warps * 32);
  const int64_t per_block_smem = shared_memory + limits.shared_memory_reserved_per_block;
  const int64_t by_smem =
      per_block_smem > 0 ? limits.shared_memory_per_sm / per_block_smem : limits.max_blocks_per_sm;
  Occupancy o{limits.max_blocks_per_sm, "blocks"};
  if (by_threads < o.blocks_per_sm) o = {by_threads, "threads"};
  if (by_registers < o.blocks_per_sm) o = {by_registers, "registers"};
  if (by_smem < o.blocks_per_sm) o = {by_smem, "shared_memory"};
  return o;
}

}  // namespace tunefuzz
