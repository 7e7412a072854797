// The host-side declaration of templates/gemm_mma.cu (mma.sync tensor-core GEMM, sm_80+), and the packing
// plan its launcher and its geometry share.
#pragma once

#include <cstdint>

#include "tuner/templates/kernel_template.hpp"

namespace tunefuzz {

const KernelTemplate& gemm_mma_template();

/// With PACK=1, which operands are copied into zero-padded scratch (rows padded to 8 elements) before the
/// GEMM, and the padded sizes the GEMM then runs with. An operand that is already aligned is used in place.
struct GemmMmaPackPlan {
  bool pack_a = false, pack_b = false;
  int64_t k = 0;    ///< K the GEMM runs with (K rounded up to 8 when any operand is packed along K)
  int64_t lda = 0;  ///< leading dimensions the GEMM runs with
  int64_t ldb = 0;
  int64_t a_bytes = 0, b_bytes = 0;  ///< scratch for each packed operand (multiples of 256 bytes)
};

GemmMmaPackPlan gemm_mma_pack_plan(const GemmShape& shape);

/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_mma_mutant_names();

}  // namespace tunefuzz
