#include "tuner/campaign/occupancy.hpp"

#include <algorithm>

namespace tunefuzz {

namespace {
// Registers are handed to a warp in blocks of this many per thread (NVIDIA: 256 per warp of 32; gfx90a and
// later: VGPR granule 8 per lane).
constexpr int64_t kRegisterGranule = 8;
}  // namespace

Occupancy occupancy(int64_t threads, int registers, int64_t shared_memory, const GpuLimits& limits) {
  const int64_t warp = std::max<int64_t>(limits.warp_size, 1);
  const int64_t warps = (threads + warp - 1) / warp;
  const int64_t registers_per_warp =
      (std::max<int64_t>(registers, 1) + kRegisterGranule - 1) / kRegisterGranule * kRegisterGranule * warp;
  const int64_t by_registers = (limits.registers_per_sm / registers_per_warp) / warps;
  const int64_t by_threads = limits.max_threads_per_sm / (warps * warp);
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
