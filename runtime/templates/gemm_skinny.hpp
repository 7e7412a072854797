// The host-side declaration of templates/gemm_skinny.cu (skinny-M / decode GEMM on mma.sync, sm_80+), and the
// launch arithmetic its launcher and its geometry share.
#pragma once

#include <cstdint>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// fp16 and bf16 inputs, M ≤ 128, any storage order.
const KernelTemplate& gemm_skinny_template();
/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_skinny_mutant_names();

/// Output tiles of one problem, ceil(M/BM) · ceil(N/BN): the split-K counters the launcher keeps, one each.
int64_t gemm_skinny_tiles(const Point& point, const GemmShape& shape);

/// The launch of one problem: one CTA per unit, units = tiles × K splits (SPLIT_K, or overrides.splits when
/// set; overrides.grid is not used: the kernel has no persistent mode). With more than one split the
/// workspace holds every split's fp32 partial tile, tiles × splits × BM × BN floats.
LaunchGeometry gemm_skinny_geometry(const Point& point, const GemmShape& shape, const LaunchOverrides& overrides);

}  // namespace tunefuzz
