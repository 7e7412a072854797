// Host matrices in the element types a kernel sees (fp16, bf16 as their 16-bit patterns; fp32; tf32 as fp32
// bits; fp8e4m3, fp8e5m2 as their 8-bit patterns), row-major with a leading dimension, and their
// materialisation from a case record. Element access goes through double, rounding to nearest-even on
// store, so the oracle can work in one type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <utility>
#include <vector>

#include "fuzz/case.hpp"
#include "tuner/common/precision.hpp"

namespace tunefuzz::fuzz {

/// Round a double to the nearest value of `type` (ties to even) and return it as a double. NaN and ±0 are
/// kept; a value beyond the largest finite one (±Inf included) becomes ±Inf, or NaN of the same sign in
/// fp8e4m3, which has no infinities.
double round_to(Precision type, double value);

/// Whether a kernel's store into C of `type` saturates: fp8 outputs (cvt.rn.satfinite) do, the others
/// overflow to ±Inf.
bool output_saturates(Precision type);

/// The largest finite value of `type` (448 fp8e4m3, 57344 fp8e5m2, 65504 fp16, ...).
double largest_finite(Precision type);

/// `value` clamped to ±largest finite where C of `type` saturates (±Inf included; NaN stays NaN), else as is.
double saturate(Precision type, double value);

/// What a kernel stores in C of `type` for `value`: round_to(saturate(value)).
double round_to_output(Precision type, double value);

/// The smallest positive normal value of `type` (2^-14 fp16, 2^-126 bf16/fp32/tf32, 2^-6 fp8e4m3, 2^-14
/// fp8e5m2).
double smallest_normal(Precision type);

/// An allocator of bytes that come zeroed from calloc, so a vector of them sized up writes nothing: the pages
/// of a large matrix are zero from the kernel and are first touched by whoever fills them (the fill's
/// threads), not once more by a single-threaded zeroing. 8192² bf16 operands and output took 0.42 s to
/// allocate zeroed through std::vector's own zeroing on the development machine's two cores. For vectors
/// sized once (HostMatrix's): sized down and up again within its capacity, a vector would not be zeroed.
template <typename T>
struct ZeroedAllocator {
  using value_type = T;
  ZeroedAllocator() = default;
  template <typename U>
  ZeroedAllocator(const ZeroedAllocator<U>&) noexcept {}
  T* allocate(size_t n);
  void deallocate(T* p, size_t) noexcept;
  /// Value-initialising an element is a no-op: calloc's memory is zero already.
  template <typename U>
  void construct(U*) noexcept {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const ZeroedAllocator<U>&) const noexcept {
    return true;
  }
};

class HostMatrix {
 public:
  HostMatrix() = default;
  /// rows × cols, row-major, `ld` ≥ cols elements per row; every element (padding too) is zero.
  HostMatrix(Precision type, int64_t rows, int64_t cols, int64_t ld);

  Precision type() const { return type_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t ld() const { return ld_; }

  /// Element (row, col) as a double; `col` may reach into the padding (up to ld − 1). Unchecked.
  double get(int64_t row, int64_t col) const;
  /// The row's `cols()` elements as doubles into `out`, each as get gives it (one type dispatch per row).
  void get_row(int64_t row, double* out) const;
  /// Stores `value` rounded to the element type (round_to: ties to even; NaN kept, ±Inf kept except in
  /// fp8e4m3, where it is NaN). NaN is stored as 0x7F (fp8e4m3) or 0x7E (fp8e5m2) with its sign. Unchecked.
  void set(int64_t row, int64_t col, double value);
  /// Fills every element, the padding between rows included, with `value` (NaN allowed).
  void fill(double value);

  /// Raw storage: rows·ld elements (the last row padded too), as the device buffer holds them.
  std::byte* bytes() { return storage_.data(); }
  const std::byte* bytes() const { return storage_.data(); }
  size_t size_bytes() const { return storage_.size(); }

 private:
  Precision type_ = Precision::fp32;
  int64_t rows_ = 0, cols_ = 0, ld_ = 0;
  std::vector<std::byte, ZeroedAllocator<std::byte>> storage_;
};

/// Every element of `matrix` uniform in [-1, 1), from a counter-based hash of (seed, row, column), so the
/// values depend on the seed alone, not on the host or `threads` (1 to 16 share the rows). fp32: a grid of
/// 2^24 steps, every value exact. The other types: one of the 2^16 midpoints of [-1, 1) split evenly, rounded
/// to the type; that grid's step (2^-15) is no coarser than bf16's and fp8's anywhere, nor than fp16's and
/// tf32's above 1/32 in magnitude. For the time job's operands, whose values only have to be varied.
void fill_uniform(HostMatrix& matrix, uint64_t seed, unsigned threads);
/// Which values fill_uniform draws for a seed, raised whenever they change: the verdict store's screens and
/// timings were measured on them (2: the hash; 1: mt19937 streams).
inline constexpr int kUniformFillVersion = 2;

/// Runs `jobs` on up to `threads` threads (the calling one among them), each job once; the first exception a
/// job throws is rethrown once all have ended. For work that is the same whichever thread does it.
void side_by_side(const std::vector<std::function<void()>>& jobs, unsigned threads);
/// Integers uniform in [lo, hi], row i from mt19937_64 stream i mod 16 of `seed`, the streams shared by
/// `threads` (1 to 16): the same on every host and thread count for a seed.
void fill_integers(HostMatrix& matrix, uint64_t seed, unsigned threads, int lo, int hi);
/// Integers uniform in [lo, hi] (at most 256 of them), each from a counter-based hash of (seed, row, column):
/// a few ns an element against fill_integers' 27, and the same on every host and thread count. Other values
/// than fill_integers' for the same seed: the fuzz generator keeps that one, so recorded cases replay
/// unchanged; the time job's exact checks, whose inputs no record names, use this one.
void fill_hashed_integers(HostMatrix& matrix, uint64_t seed, unsigned threads, int lo, int hi);

/// The three operands of a case, materialised: A (m×k), B (k×n), C (m×n, the input C; NaN everywhere when
/// beta == 0, so that a kernel reading it shows up).
struct CaseOperands {
  HostMatrix a, b, c;
};

/// The operand `logical` as a kernel reads it when stored column-major with leading dimension `ld` (≥ its
/// rows): its transpose, with NaN in the padding.
HostMatrix transposed(const HostMatrix& logical, int64_t ld);

/// Deterministic in (record, types): the same record gives the same matrices on every machine.
/// A and B are in `input`, C in `output`; the row padding of all three is NaN. A and B are logical (m×k,
/// k×n) and row-major; one the record stores column-major has no padding here: its device image is
/// `transposed(a, record.lda())`. Throws Error(bad_input)
/// for a record with a size below 1 or a negative padding.
CaseOperands materialise(const CaseRecord& record, Precision input, Precision output);

}  // namespace tunefuzz::fuzz
