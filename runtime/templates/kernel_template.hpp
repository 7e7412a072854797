// What a kernel template declares to the tuner, in one place: its tunable parameters (name, default,
// one-line meaning), its constraints (each with a one-line reason shown when it prunes), its shared-memory
// and thread-count formulas, the defines it compiles with, which problems it supports, and how it is
// launched. The kernel source under templates/ holds the same names, defaults and static_asserts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/common/precision.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz {

/// A tunable's values at one point of the space, in the template's parameter order.
class Point {
 public:
  Point() = default;
  explicit Point(std::vector<std::pair<std::string, int64_t>> values) : values_(std::move(values)) {}

  /// The value of `name`; throws Error{internal} if the template has no such parameter.
  int64_t operator[](std::string_view name) const;
  const std::vector<std::pair<std::string, int64_t>>& values() const { return values_; }
  /// `BM=128,BN=128,...` in parameter order.
  std::string str() const;

  friend bool operator==(const Point&, const Point&) = default;

 private:
  std::vector<std::pair<std::string, int64_t>> values_;
};

struct ParameterDecl {
  std::string name;
  int64_t default_value;
  std::string meaning;
  bool compile_time = true;  ///< passed to the compiler as a define; false: read only by the launcher
  int64_t minimum = 1;       ///< smallest value: 0 only for switches (SWIZZLE, PACK, ...), else sizes >= 1
};

/// Largest value any parameter may take: far above every useful tile, low enough that the templates'
/// formulas (products of a few parameters and a problem size) cannot overflow.
inline constexpr int64_t kMaxParameterValue = 65536;

/// A rule every kept point must satisfy; `reason` is what `tune space` prints when it prunes.
struct Constraint {
  std::string name;    ///< short key used in counts, e.g. `shared_memory`
  std::string reason;  ///< one line: why a point that breaks it is impossible or useless
  std::function<bool(const Point&, const GpuLimits&)> holds;
};

/// A problem as a kernel sees it: shape, leading dimensions, layout, and the byte alignment of the
/// operands' base addresses.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  Layout layout;
  int64_t a_alignment = 256, b_alignment = 256,
          c_alignment = 256;  ///< bytes the base address is a multiple of
  /// How C is stored: row-major (ldc ≥ N), as every problem is stated; column-major (ldc ≥ M) only in the
  /// transposed form a point that swaps its operands runs (transposed_form).
  Order c_order = Order::row;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

/// A GEMM in the form a kernel runs it, and whether that form trades A for B.
struct GemmForm {
  GemmShape shape;
  bool swapped =
      false;  ///< computed as Cᵀ = Bᵀ·Aᵀ: the kernel's A is the caller's B and its B the caller's A
};

/// The same GEMM, on the same bytes, in the form the kernels serve best (identity where no rewrite applies,
/// and for empty problems):
/// - an operand with a single row or column whose elements are contiguous is read along K: a 1×K column-major
///   A with lda = 1 is the row-major A of the same bytes, a K×1 row-major B with ldb = 1 the column-major B;
/// - a matrix–vector product (N = 1 < M, ldc = 1, so C is one contiguous column) is computed as Cᵀ = Bᵀ·Aᵀ:
///   M and N trade places, A and B trade places (each read in the other storage order, same leading
///   dimension, base alignments with them), and C is the 1×M row it already was, so the skinny-M kernels
///   serve it.
/// A leading dimension of a single row or column only steps to rows that do not exist; where the rewrite
/// chooses one it is K (or M) rounded up to 16 elements. canonical_form(canonical_form(s)) is
/// canonical_form(s).
GemmForm canonical_form(const GemmShape& shape);

/// The same GEMM computed as Cᵀ = Bᵀ·Aᵀ on the same bytes, for a point that swaps its operands
/// (KernelTemplate::swaps_operands): M and N trade places, A and B trade places (each read in the other
/// storage order, same leading dimension, base alignments with them; a single contiguous row or column read
/// along K first, as canonical_form does), and C, the same bytes, is the N×M matrix stored column-major with
/// the same ldc. Identity for a shape whose C is already column-major, so transposed_form(transposed_form(s))
/// is transposed_form(s). A problem with a zero size is transposed too (so a refusal judges its storage order
/// as the point's kernels see it), though launch_form runs its quick return as stated.
GemmForm transposed_form(const GemmShape& shape);

/// The shape of a config problem with packed leading dimensions (row-major: K for A, N for B; column-major:
/// M for A, K for B; C is row-major, N).
GemmShape shape_of(const Problem& problem);

/// How one problem is launched: the main kernel's grid, block and dynamic shared memory, plus the scratch
/// memory the launcher needs for per-problem set-up (packing, split-K workspaces, ...).
struct LaunchGeometry {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t cluster_x = 1;  ///< CTAs per thread-block cluster along x (grid_x is a multiple of it)
  int64_t block_x = 1;
  int64_t shared_memory_bytes = 0;
  int64_t workspace_bytes = 0;
};

/// Launch choices a fuzz case may impose on a candidate to reach code its own settings rarely reach (0 = the
/// candidate's own): the number of K splits and the number of CTAs of a persistent grid.
struct LaunchOverrides {
  int64_t splits = 0;
  int64_t grid = 0;
  friend bool operator==(const LaunchOverrides&, const LaunchOverrides&) = default;
};

/// A compile-time define, always a validated integer: config text never reaches compiler options.
struct Define {
  std::string name;
  int64_t value;
};

/// Element types a candidate is compiled for.
struct TypePair {
  Precision input = Precision::bf16;
  Precision output = Precision::bf16;
  friend bool operator==(const TypePair&, const TypePair&) = default;
};

/// How a kernel sums the K products where that is not fp32 throughout: a narrow first stage (the tensor
/// core's own sum) over runs of `group` products with unit roundoff `group_unit_roundoff`, each run then
/// added into fp32 accumulators. The oracle bounds the error from it (fuzz::ArithmeticModel).
struct Accumulation {
  int64_t group = 0;  ///< 0: no narrow stage
  double group_unit_roundoff = 0;
};

struct KernelTemplate {
  std::string name;                       ///< as written in configs and tables
  std::string source_file;                ///< file under the templates directory
  std::string summary;                    ///< one line for `tune space`
  std::vector<std::string> entry_points;  ///< kernels the module exports (a point may export fewer storage
                                          ///< orders: see its refusal)
  std::vector<ParameterDecl> parameters;
  std::vector<Constraint> constraints;  ///< checked in order; the first that fails names the prune reason
  std::vector<TypePair> supported_types;
  /// Storage orders of A and B the template computes (problems carry their layout; the kernel follows it).
  std::vector<Layout> layouts = {Layout{}};
  std::function<int64_t(const Point&)> shared_memory_bytes;
  std::function<int64_t(const Point&)> threads_per_block;
  /// PTX instructions the template means to use at this point; missing ones mean a slower path was taken.
  std::function<std::vector<std::string>(const Point&)> expected_instructions;
  /// Why this point cannot compute this problem, or nullopt when it can.
  std::function<std::optional<std::string>(const Point&, const GemmShape&)> refusal;
  std::function<LaunchGeometry(const Point&, const GemmShape&)> geometry;
  /// GPU architectures the template runs on (empty: any NVRTC/hiprtc target), and the suffix its code is
  /// compiled with there: `a` for the sm_90a features (wgmma, setmaxnreg), which run on sm_90 only.
  std::vector<std::string> archs;
  std::string arch_suffix;
  /// Phrases of the compiler log that mean the code took a slower path than the template meant (ptxas
  /// serialising wgmma, for one): a candidate whose log has one is pruned with that log line as the reason.
  std::vector<std::string> slow_path_log_phrases;
  /// How the kernel accumulates at a point (empty: fp32 throughout).
  std::function<Accumulation(const Point&)> accumulation;
  /// The injected bugs the source accepts through TF_MUTANT, by code ("none" at 0); empty: none.
  std::vector<std::string> mutants;
  /// Whether the point computes every problem as Cᵀ = Bᵀ·Aᵀ, storing C transposed (transposed_form):
  /// gemm_wgmma's SWAP_AB. Unset: no point does.
  std::function<bool(const Point&)> swaps_operands;
  /// The GEMM kernel a point's launches run, whose resources the compile stage judges (spills, occupancy);
  /// unset: the first tf_gemm* entry point the image exports. gemm_simt names tf_gemm_split_* where SPLIT_K
  /// > 1.
  std::function<std::string(const Point&)> main_entry;
  /// Bytes per global load of A and of B on a problem, where they differ from VEC elements (or 16 bytes
  /// without VEC): gemm_mma copies an operand aligned for 16 bytes in whole chunks whatever its VEC. Unset:
  /// VEC elements for both. Read by the cost model.
  std::function<std::pair<int64_t, int64_t>(const Point&, const GemmShape&)> load_bytes;

  const ParameterDecl* parameter(std::string_view parameter_name) const;
  /// The defines a candidate compiles with: every compile-time parameter, the types, TF_MUTANT and
  /// TF_PERTURB (templates/perturb.h) when set.
  std::vector<Define> defines(const Point& point, TypePair types, int mutant = 0, int64_t perturb = 0) const;
  /// The point with every parameter at its default.
  Point default_point() const;
  /// The target to compile for on a GPU of `gpu_arch` (`sm_90` gives `sm_90a` where arch_suffix is `a`).
  /// Throws Error{bad_input} at `where` when the template does not run on that architecture.
  std::string compile_arch(const std::string& gpu_arch, const SourceLocation& where = {}) const;
};

/// One unit of work for the campaign: a template at one point, compiled for one pair of element types.
struct Candidate {
  const KernelTemplate* kernel_template = nullptr;
  Point point;
  TypePair types;
  int mutant = 0;  ///< an injected bug (fuzzer validation only); 0 in tuning campaigns
  /// The seed of schedule perturbation (templates/perturb.h): small delays at hand-off points, so races lose
  /// in ordinary fuzz cases. Fuzz images only: a perturbed candidate is never timed. 0 = none.
  int64_t perturb = 0;

  /// `gemm_mma/bf16-bf16/BM=128,...` (`/mutant=N`, then `/perturb=S`, appended when set): the key of
  /// journals and tables.
  std::string id() const;
  /// The same candidate without schedule perturbation (the image that is timed and shipped).
  Candidate unperturbed() const;
};

/// The host launcher a kernel source needs (its entry points, parameter block, extra passes such as split-K's
/// reduce and packing); templates built from one source (gemm_wgmma and its fp8 and tf32 siblings) share it.
enum class LauncherKind { gemm_mma, gemm_simt, gemm_skinny, gemm_wgmma };
/// The launcher of the template's source, or nullopt for a source no launcher serves.
std::optional<LauncherKind> launcher_kind(const KernelTemplate& kernel_template);

/// The version of what the launchers launch for a candidate beyond its image (the form a problem runs in, the
/// packing and reduce passes, their grids): part of every stored verdict's key (tuner/campaign/verdict_keys),
/// so raise it with any such change and campaigns fuzz and time the candidates again.
// 1: canonical forms (ce8e14d) and packing with several rows per CTA (27fd877)
inline constexpr int kLaunchVersion = 1;

/// What `form` does to `shape`, in words for a user ("as Cᵀ = Bᵀ·Aᵀ: 1×8192×8192 RC", "as 1×12288×3072 RC"),
/// or "" when the kernel runs the shape as given.
std::string describe_form(const GemmShape& shape, const GemmForm& form);

/// The form a template's point runs `shape` in: transposed_form for a point that swaps its operands, else
/// canonical_form where the point computes that form, else the shape as given. The runners launch this form
/// and the template's refusal accepts a problem that either form serves (serve_canonical_forms), so tuning,
/// fuzzing and the runtime all run one form per point.
GemmForm launch_form(const KernelTemplate& kernel_template, const Point& point, const GemmShape& shape);

/// Makes `t.refusal` and `t.geometry` (set to the kernel's own, on the shape the kernel runs) answer for the
/// problem as a caller states it: refused only where both forms are (a point that swaps its operands: where
/// its transposed form is), laid out as launch_form runs it; a column-major C is refused by every point that
/// does not swap. Every template's declaration ends with it.
void serve_canonical_forms(KernelTemplate& t);

/// A point's CTA tile as the caller states the problem: `rows` of C by `cols` (BM × BN, or BN × BM for a
/// point that swaps its operands, whose kernel tiles Cᵀ). Where a fuzz case's partial tiles lie, and where
/// sampled checks look for tile-boundary errors.
struct OutputTile {
  int64_t rows = 0, cols = 0;
};
OutputTile stated_tile(const KernelTemplate& kernel_template, const Point& point);

/// Every template tunefuzz knows, by name.
const std::vector<const KernelTemplate*>& all_templates();
/// Throws Error{bad_input} naming the known templates when `name` is not one of them.
const KernelTemplate& find_template(std::string_view name, const SourceLocation& where = {});

/// Parses `gemm_mma/bf16-bf16/BM=128,...[/mutant=N][/perturb=S]` back into a candidate (the inverse of
/// Candidate::id).
Candidate parse_candidate_id(std::string_view id);

}  // namespace tunefuzz
