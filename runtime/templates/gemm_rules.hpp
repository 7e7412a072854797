// Rules every GEMM template states the same way: the constraints against a device's per-CTA limits (threads,
// shared memory), and the problems a template refuses for shared reasons (a layout it does not compute,
// negative sizes, leading dimensions shorter than the rows, a misaligned C, a grid over 2^31 - 1 CTAs, vector
// loads that K, N, the leading dimensions or the base addresses do not allow), and what the tensor-core
// templates declare alike (their element types, the four layouts, the operands as stored). Refusals are one
// line each, or nullopt when the problem passes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// The element types of the tensor-core templates: fp16 or bf16 inputs with fp16, bf16 or fp32 output, and
/// fp8 e4m3 or e5m2 inputs with the same outputs or their own type (stores saturate).
const std::vector<TypePair>& sixteen_bit_type_pairs();
const std::vector<TypePair>& fp8_type_pairs();
/// RR, RC, CR and CC.
const std::vector<Layout>& all_layouts();

/// LAYOUTS, the storage orders whose entry points a tensor-core template's image exports: one bit per order
/// (RR 1, RC 2, CR 4, CC 8; layout_bit), all four by default. A campaign compiles each candidate for the
/// orders its problems use (tuner/campaign/space_stage.cpp): each order is a whole kernel for the compiler,
/// so an image of one order compiles in about a third of the time of one with four. fp8 on wgmma runs every
/// order through its RC kernel (PACK=1 transposes first), so its image is the same whatever the mask; tf32
/// on wgmma has its RC kernel whatever the mask, for the same transposing PACK=1.
inline constexpr const char* kLayoutsParameter = "LAYOUTS";
inline constexpr int64_t kAllLayouts = 15;
int64_t layout_bit(const Layout& layout);
/// The entry point of `kernel` for a storage order: `tf_gemm_rr` … `tf_gemm_cc`, `tf_gemm_split_rc`, ...
std::string gemm_entry_name(const Layout& layout, std::string_view kernel = "tf_gemm");
/// The index of a storage order's kernel, 2·(A col) + (B col): launchers keep their kernels by it.
int layout_index(const Layout& layout);
/// The ordered names of a mask's storage orders, e.g. "RR, RC".
std::string layout_names(int64_t mask);
ParameterDecl layouts_parameter();
/// `layouts`: LAYOUTS is a mask of the four orders (1 to 15).
Constraint layouts_constraint();
/// A problem whose storage order the point's LAYOUTS leaves out (its image has no kernel for it).
std::optional<std::string> exported_layout_refusal(const Point& point, const GemmShape& shape);

/// Negative M, N or K; zero sizes are valid (a quick return).
std::optional<std::string> size_refusal(const GemmShape& shape);

/// What a launch of a problem with a zero size does instead of the GEMM: nothing at all when M or N is 0 (C
/// is untouched), C = beta·C when only K is 0 (zeros written, C unread, when beta == 0). Every template
/// accepts such a problem once its shared rules pass (no vector or TMA rule applies), and its launcher runs
/// no GEMM kernel for it.
enum class QuickReturn { none, nothing, scale_c };
QuickReturn quick_return(const GemmShape& shape);

/// The kernel every template exports for QuickReturn::scale_c (templates/scale_c.h), and its launch: 256
/// threads per CTA, one CTA per 256 elements of C up to 65535 CTAs (the kernel strides over the rest).
inline constexpr const char* kScaleCEntry = "tf_scale_c";
LaunchGeometry scale_c_geometry(const GemmShape& shape);

/// PACK=1: which operands are copied into zero-padded scratch before the GEMM (tf_pack, templates/pack.h),
/// and the sizes the GEMM then runs with. `rule` says what the kernel's loads need: 16-byte vector loads
/// (`loads16`: stored rows a whole number of 16-byte units long, K padded with zeros when an operand stored
/// along K needs it, leading dimensions and bases on 16 bytes), TMA (`tma`: leading dimensions and bases on
/// 16 bytes; any row length, as TMA reads zeros past it), or TMA of K-major tiles alone (`tma_k_major`: the
/// same, and an operand stored along M or N is transposed on the way, tf_pack_transposed, so the GEMM runs
/// as RC). An operand that already complies is used in place.
enum class PackRule { loads16, tma, tma_k_major };
struct PackPlan {
  bool pack_a = false, pack_b = false;
  bool transpose_a = false,
       transpose_b = false;        ///< the copy is the operand's transpose (tma_k_major)
  Layout layout;                   ///< the storage order the GEMM runs with
  int64_t k = 0;                   ///< K the GEMM runs with (rounded up to 16 bytes when padded along K)
  int64_t a_rows = 0, a_cols = 0;  ///< A as stored, with that K: (M, K) row-major, (K, M) column-major
  int64_t b_rows = 0, b_cols = 0;  ///< B as stored: (K, N) row-major, (N, K) column-major
  int64_t lda = 0;                 ///< leading dimensions the GEMM runs with
  int64_t ldb = 0;
  int64_t a_bytes = 0, b_bytes = 0;  ///< scratch for each packed operand (multiples of 256 bytes)
};
PackPlan pack_plan(const GemmShape& shape, int64_t element_bytes, PackRule rule);
inline constexpr const char* kPackEntry = "tf_pack";
inline constexpr const char* kPackTransposedEntry = "tf_pack_transposed";

/// Split-K's second pass (templates/split_k.h), exported by every template that splits K, and its launch:
/// 256 threads per CTA, a group of threads per four columns of a row of C (tf_reduce_lanes of
/// templates/tile_map.h: one for a large output; for a small one up to 32, a power of two and at most
/// `splits`, as many as keep about 2^15 threads busy), up to 65535 CTAs. Its workspace holds `splits` fp32
/// partials of m rows of split_k_partial_ld elements (N rounded up to 4: the pass reads quads).
inline constexpr const char* kReduceEntry = "tf_reduce";
LaunchGeometry split_k_reduce_geometry(const GemmShape& shape, int64_t splits);
int64_t split_k_partial_ld(const GemmShape& shape);
int64_t split_k_workspace_bytes(const GemmShape& shape, int64_t splits);

/// An operand as stored: its row length (K for row-major A, M for column-major A; N for row-major B, K for
/// column-major B), leading dimension and base alignment: what vector loads, packing and TMA act on.
struct Stored {
  const char* name;         ///< "A" or "B"
  const char* extent_name;  ///< "M", "N" or "K"
  int64_t extent, ld, alignment;
};
std::pair<Stored, Stored> stored_operands(const GemmShape& shape);

/// What the tensor-core templates refuse alike: a storage order outside `layouts` (the message ends with
/// `layout_note`), M, N or K negative, a leading dimension shorter than its stored row, and a C whose base is
/// not aligned to the narrowest output type the template writes (1 byte where it writes fp8: the refusal does
/// not see the candidate's own output type, and every C the tuner makes is aligned to its element).
std::optional<std::string> operands_refusal(std::string_view template_name, const GemmShape& shape,
                                            const std::vector<Layout>& layouts, std::string_view layout_note);

/// `positive`: every tunable of the point is at least 1.
Constraint positive_constraint();

/// `threads`: a CTA of `threads(point)` threads, the formula written out in `formula`, fits the device (and
/// 1024, the most any GPU allows).
Constraint threads_constraint(const std::string& formula, std::function<int64_t(const Point&)> threads);

/// `shared_memory`: the `bytes(point)` of shared memory a CTA asks for, described in `what`, fit the opt-in
/// limit per CTA.
Constraint shared_memory_constraint(const std::string& what, std::function<int64_t(const Point&)> bytes);

/// Row-major A and B only, M, N, K ≥ 0, lda ≥ K, ldb ≥ N, ldc ≥ N, C aligned to `c_element_bytes`, and at
/// most 2^31 - 1 tiles of `tile_m` × `tile_n` (one CTA each).
std::optional<std::string> shape_refusal(std::string_view template_name, const GemmShape& shape,
                                         int64_t c_element_bytes, int64_t tile_m, int64_t tile_n);

/// Loads of `vec` elements (`element_bytes` each) along K of A and N of B: K, N, lda and ldb must be
/// multiples of `vec`, and A's and B's base addresses aligned to a whole vector. `instead` ends the message:
/// what serves such a problem (e.g. "a smaller VEC").
std::optional<std::string> vector_refusal(const GemmShape& shape, int64_t vec, int64_t element_bytes,
                                          std::string_view instead);

/// The same for templates that take every storage order: loads of `vec` elements along the stored rows of A
/// and B (stored_operands), so each stored row length and leading dimension must be a multiple of `vec`, and
/// both base addresses aligned to a whole vector. `instead` ends the message: what serves such a problem.
std::optional<std::string> stored_vector_refusal(const GemmShape& shape, int64_t vec, int64_t element_bytes,
                                                 std::string_view instead);

}  // namespace tunefuzz
