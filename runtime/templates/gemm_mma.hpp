// The host-side declaration of templates/gemm_mma.cu (mma.sync tensor-core GEMM, sm_80+) and the launch
// geometry its launcher shares.
#pragma once

#include <cstdint>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// fp16 and bf16 inputs (m16n8k16).
const KernelTemplate& gemm_mma_template();
/// The same kernel on tf32 tensor cores (fp32 storage, m16n8k8).
const KernelTemplate& gemm_mma_tf32_template();
/// The same kernel on fp8 e4m3/e5m2 tensor cores (m16n8k32, sm_89+), layout RC only.
const KernelTemplate& gemm_mma_fp8_template();

/// The launch of one problem: units = output tiles × K splits (SPLIT_K, or overrides.splits), one CTA per
/// unit, or overrides.grid CTAs when set (a persistent grid; the launcher sets it to the resident CTA count
/// when PERSISTENT=1). The workspace holds the packed operands, then the split-K partials. `element_bytes` is
/// the input element size (2, 4 for tf32, 1 for fp8).
LaunchGeometry gemm_mma_geometry(const Point& point, const GemmShape& shape, const LaunchOverrides& overrides,
                                 int64_t element_bytes);

/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_mma_mutant_names();

}  // namespace tunefuzz
