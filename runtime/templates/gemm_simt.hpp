// The host-side declaration of templates/gemm_simt.cu: GEMM on CUDA cores (fused multiply-adds, no tensor
// cores), every storage order read in place. gemm_simt takes fp32 and compiles under NVRTC and hiprtc alike;
// gemm_simt_16bit is the same source on fp16 or bf16 inputs (CUDA).
#pragma once

#include <string>
#include <vector>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

const KernelTemplate& gemm_simt_template();
const KernelTemplate& gemm_simt_16bit_template();

/// The launch of a point on a problem with the launcher's overrides (a split count in place of SPLIT_K; a
/// persistent grid is not a gemm_simt launch): one CTA per (output tile, K split), and the workspace of the
/// packed operands (PACK=1, `element_bytes` per input element) followed by the splits' fp32 partials.
LaunchGeometry gemm_simt_geometry(const Point& point, const GemmShape& shape,
                                  const LaunchOverrides& overrides, int64_t element_bytes);

/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_simt_mutant_names();

}  // namespace tunefuzz
