// The host-side declaration of templates/gemm_wgmma.cu: the Hopper-native GEMM (sm_90a) on wgmma, TMA and
// warp-specialised producer/consumer warpgroups, with persistent tiles.
#pragma once

#include <string>
#include <vector>

#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// fp16 and bf16 inputs (m64nNk16), any storage order of A and B.
const KernelTemplate& gemm_wgmma_template();
/// fp8 e4m3/e5m2 inputs (m64nNk32), row-major A and column-major B only.
const KernelTemplate& gemm_wgmma_fp8_template();
/// The same kernel on tf32 wgmma (m64nNk8; fp32 storage, fp32 C), any storage order: M/N-major tiles are
/// rewritten K-major in shared memory (PACK=0), or transposed into RC by a pass before (PACK=1).
const KernelTemplate& gemm_wgmma_tf32_template();

/// The box (inner, outer extent in elements) of the TMA tensor map of operand A (`is_a`) or B, as the kernel
/// loads it: a 128-byte slab of the stored rows by the tile's other extent (half of it for an operand the
/// CTAs of a cluster share).
struct TmaBox {
  int64_t inner = 0, outer = 0;
  int64_t swizzle_bytes = 128;  ///< the swizzle of the box's rows: 128 bytes, or 64 for fp8 C
};
TmaBox gemm_wgmma_operand_box(const Point& point, bool is_a, bool stored_along_k, int64_t element_bytes);
/// The CTAs to launch: whole clusters (CLUSTER_M x CLUSTER_N CTAs, one tile each) covering every unit (a
/// cluster tile and one of `splits` K splits of it), or, for `requested` > 0 (a persistent grid), that many
/// rounded up to whole clusters, at most all of them.
int64_t gemm_wgmma_grid(const Point& point, const GemmShape& shape, int64_t requested, int64_t splits);
/// The box of C's tensor map: a slab of 128 bytes of columns (fp8: 64 bytes, 64 columns, 64-byte swizzle) by
/// one consumer's rows.
TmaBox gemm_wgmma_output_box(const Point& point, int64_t output_bytes);
/// Whether the point has a kernel for this storage order (A_REGS = 1 reads row-major A only; a BN that is not
/// whole 64-column slabs reads column-major B only).
bool gemm_wgmma_computes(const Point& point, const Layout& layout);
/// The storage orders the module has a kernel for: all four for 16-bit and tf32 inputs, RC for fp8 (whose
/// wgmma reads K-major tiles alone; PACK=1 transposes the other operands into RC first, as it does for tf32).
std::vector<Layout> gemm_wgmma_kernel_layouts(int64_t element_bytes);
/// What PACK=1 does: copy what TMA cannot read in place (16-bit inputs), and also transpose operands that are
/// not K-major (fp8, tf32).
PackRule gemm_wgmma_pack_rule(int64_t element_bytes);
/// Whether the epilogue stages C through shared memory and TMA (else it stores from registers with bounds
/// checks): a point that stages C (C stored as stated, BN whole 64-column slabs), a row-major C, and C's
/// base, its rows and its row ends all on 16-byte units. A TMA store writes whole 16-byte units of a row: on
/// an H200 a row end inside one had the rest of the unit overwritten (N = 1, 5, 7 in bf16 with padded rows,
/// results/fuzz-run-h200-4bc0226.yaml).
bool gemm_wgmma_tma_epilogue(const Point& point, const GemmShape& shape, int64_t output_bytes,
                             uint64_t c_address);

/// The names of the injected bugs the template accepts through TF_MUTANT (index = code, 0 = none).
const std::vector<std::string>& gemm_wgmma_mutant_names();

}  // namespace tunefuzz
