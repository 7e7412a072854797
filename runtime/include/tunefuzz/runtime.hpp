// tunefuzz's runtime: call the tuned GEMM kernels from a program. A Handle serves one GPU; it picks each
// GEMM's kernel from a table of tuned winners by the documented lookup rule (docs/results-format.md), loads it
// from an image compiled ahead of time or compiles it on first use through the persistent kernel cache, and
// launches it on the caller's stream with the very launch code the tuner timed. Errors are tunefuzz::Error
// carrying the reason; nothing here exits the process. C++17; the C entry shaped like cublasGemmEx is
// <tunefuzz/runtime.h>. Use: docs/runtime.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefuzz/error.hpp"

struct CUstream_st;    // CUstream and cudaStream_t are pointers to it
struct ihipStream_t;  // hipStream_t is a pointer to it

namespace tunefuzz::runtime {

/// Element types, named as in the tables: tf32 is fp32 storage read as tf32; fp8 are OCP E4M3FN and E5M2.
enum class Type { fp16, bf16, fp32, tf32, fp8e4m3, fp8e5m2 };

/// Storage order of a matrix.
enum class Order { row, col };

/// C (m × n) = alpha · A (m × k) · B (k × n) + beta · C. A and B are stored in their own order with their
/// leading dimension (row-major A: lda >= k, column-major A: lda >= m; row-major B: ldb >= n, column-major
/// B: ldb >= k); C is row-major with ldc >= n. A and B have one type; C fp16, bf16 or fp32 (fp32 for tf32
/// inputs), or the inputs' own fp8 type.
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  Type a = Type::bf16, b = Type::bf16, c = Type::bf16;
  Order a_order = Order::row, b_order = Order::row;
  int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
};

/// Device addresses of the operands.
struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
};

/// One tuned problem of a table and its winner, named as `tune export` writes them.
struct TunedRow {
  std::string card, arch, problem;
  long long m = 0, n = 0, k = 0;
  std::string precision, output, layout;  ///< types of A and B, of C; storage orders of A and B ("RC")
  std::string candidate;                  ///< the winner's candidate id
  double tflops = 0;                      ///< the winner's median TFLOP/s on `card` when tuned
  std::string template_hash;              ///< SHA-256 of its template's source when tuned; empty: unknown
  double alpha = 1, beta = 0;             ///< the tuned problem's scalars (beta != 0 reads C: another epilogue)
  std::string code_sha256;                ///< the winner's code digest when tuned; empty: not recorded
};

/// A kernel image compiled ahead of time (`tune export --format cmake --embed-kernels`): a cubin for an
/// `sm_*` target or an AMDGPU code object for a `gfx*` one.
struct KernelImage {
  std::string candidate, arch;  ///< the candidate id and the target it was compiled for (sm_90a, gfx90a)
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};

/// The tuned winners a handle chooses from, and any images compiled ahead of time for them.
class Table {
 public:
  /// A table written by `tune run` (results/<gpu>.yaml), its template hashes included. Throws
  /// Error{bad_input} naming file, line and field on any defect.
  static Table from_file(const std::string& path);
  /// The rows of an exported header (tunefuzz_tables::kRows) or any range of records with the same fields.
  template <class Rows>
  static Table from_rows(const Rows& rows);
  /// Adds images compiled ahead of time (tunefuzz_tables::kImages); they must outlive every handle using it.
  template <class Images>
  Table& with_images(const Images& images);

  std::vector<TunedRow> rows;
  std::vector<KernelImage> images;
};

/// Which step of the lookup rule chose the kernel, or that no kernel runs.
enum class Source {
  quick_return,   ///< M or N is 0: nothing runs, C is untouched
  exact,          ///< a row of this card with this very problem
  nearest_shape,  ///< the nearest row of this card (|ln m - ln m'| + |ln n - ln n'| + |ln k - ln k'|)
  same_arch,      ///< the nearest row of any card of this arch
  safe_default,   ///< gemm_mma at its default point
  cublas,         ///< no candidate of the table accepts the problem: cuBLAS serves it
};
const char* to_string(Source source);

/// What a problem gets, and why.
struct Choice {
  Source source = Source::quick_return;
  std::string kernel;  ///< the candidate id, "cublas", or empty for a quick return
  std::string row;     ///< the table row it came from ("card: problem"), empty otherwise
  std::string image;   ///< "embedded", "compiled on first use", or empty where no image is needed
  std::vector<std::string> passed_over;  ///< "candidate id: why it refused", in the rule's order
  /// How the kernel runs the problem where that is another form of it ("as Cᵀ = Bᵀ·Aᵀ: 1×8192×8192 RC" for
  /// an 8192×1×8192 RR product: docs/architecture.md, canonical forms); empty: as given.
  std::string form;
  /// One paragraph: the kernel, the step of the rule, each candidate passed over and why.
  std::string explain() const;
};

/// Which runtime serves the handle's device.
enum class Platform { cuda, hip };

struct Options {
  Platform platform = Platform::cuda;
  int device = 0;                   ///< ordinal of the GPU
  bool cublas_fallback = true;      ///< cuBLAS when no candidate accepts a problem (CUDA only)
  std::string cache_directory;      ///< empty: $TUNEFUZZ_CACHE_DIR, $XDG_CACHE_HOME/tunefuzz, ~/.cache/tunefuzz
  std::string template_directory;   ///< empty: $TUNEFUZZ_TEMPLATE_DIR, else the installed share/tunefuzz/templates
};

/// One GPU's tuned GEMMs. Thread-safe: any thread may call it, and calls on different streams run
/// concurrently. Kernels are loaded on first use, once.
class Handle {
 public:
  /// Throws Error{no_device} when the GPU cannot be used, Error{unsupported} for a platform this build lacks.
  explicit Handle(Table table, Options options = {});
  ~Handle();
  Handle(Handle&&) noexcept;
  Handle& operator=(Handle&&) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  /// Enqueues C = alpha·A·B + beta·C on `stream` (a CUstream or cudaStream_t; null is the legacy default
  /// stream) and returns without waiting. Invalid arguments throw Error{bad_input} before anything is
  /// launched; M or N zero launches nothing; K zero computes C = beta·C.
  void gemm(const Problem& problem, const Operands& operands, CUstream_st* stream) const;
  /// The same on an AMD GPU (Platform::hip); `stream` is a hipStream_t.
  void gemm(const Problem& problem, const Operands& operands, ihipStream_t* stream) const;

  /// Which kernel `gemm` would run for this problem (and these operands' alignments), and why. Checks the
  /// arguments as gemm does; loads nothing.
  Choice choose(const Problem& problem, const Operands& operands) const;

  /// The GPU as its driver names it ("NVIDIA H100 80GB HBM3") and its target ("sm_90", "gfx90a").
  const std::string& device_name() const;
  const std::string& device_arch() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// ---- templates ----

template <class Rows>
Table Table::from_rows(const Rows& rows) {
  Table table;
  for (const auto& r : rows)
    table.rows.push_back(TunedRow{std::string(r.card), std::string(r.arch), std::string(r.problem), r.m, r.n,
                                  r.k, std::string(r.precision), std::string(r.output), std::string(r.layout),
                                  std::string(r.candidate), r.tflops, std::string(r.template_hash), r.alpha,
                                  r.beta, std::string(r.code_sha256)});
  return table;
}

template <class Images>
Table& Table::with_images(const Images& images) {
  for (const auto& i : images)
    this->images.push_back(KernelImage{std::string(i.candidate), std::string(i.arch), i.data, i.size});
  return *this;
}

}  // namespace tunefuzz::runtime
