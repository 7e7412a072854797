// The host-side declaration of templates/gemm_mma.cu (mma.sync tensor-core GEMM, sm_80+), and the packing
// plan its launcher and its geometry share.
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

/// With PACK=1, which operands are copied into zero-padded scratch (stored rows padded to 16 bytes) before
/// the GEMM, and the padded sizes the GEMM then runs with. An operand that is already aligned is used in
/// place.
struct GemmMmaPackPlan {
  bool pack_a = false, pack_b = false;
  int64_t k = 0;                   ///< K the GEMM runs with (rounded up to 16 bytes when packed along K)
  int64_t a_rows = 0, a_cols = 0;  ///< A as stored, with that K: (M, K) row-major, (K, M) column-major
  int64_t b_rows = 0, b_cols = 0;  ///< B as stored: (K, N) row-major, (N, K) column-major
  int64_t lda = 0;                 ///< leading dimensions the GEMM runs with
  int64_t ldb = 0;
  int64_t a_bytes = 0, b_bytes = 0;  ///< scratch for each packed operand (multiples of 256 bytes)
};

GemmMmaPackPlan gemm_mma_pack_plan(const GemmShape& shape, int64_t element_bytes);

/// The launch of one problem: units = output tiles × K splits (SPLIT_K, or overrides.splits), one CTA per
/// unit, or overrides.grid CTAs when set (a persistent grid; the launcher sets it to the resident CTA count
/// when PERSISTENT=1). The workspace holds the packed operands, then the split-K partials. `element_bytes` is
/// the input element size (2, 4 for tf32, 1 for fp8).
LaunchGeometry gemm_mma_geometry(const Point& point, const GemmShape& shape, const LaunchOverrides& overrides,
                                 int64_t element_bytes);

/// Row length, in floats, of one split's partial tile in the workspace (N rounded up to 4).
int64_t gemm_mma_partial_ld(const GemmShape& shape);

/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_mma_mutant_names();

}  // namespace tunefuzz
