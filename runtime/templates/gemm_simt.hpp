// The host-side declaration of templates/gemm_simt.cu: fp32 GEMM on CUDA cores (fused multiply-adds, no
// tensor cores), a portable template that compiles under NVRTC and hiprtc alike.
#pragma once

#include <string>
#include <vector>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

const KernelTemplate& gemm_simt_template();

/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_simt_mutant_names();

}  // namespace tunefuzz
