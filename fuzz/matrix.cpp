// Host matrices in kernel element types and the deterministic materialisation of a case record.
// Rounding goes straight from double to the target format (ties to even) so no value is rounded twice;
// Eigen's half and bfloat16 then only carry values that are already exact in their format, and the fp8 codes
// are packed here, bit by bit, from values already exact in them.
#include "fuzz/matrix.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "fuzz/oracle.hpp"
#include "tuner/common/error.hpp"

namespace tunefuzz::fuzz {

namespace {

/// A binary floating-point format: `precision` significand bits (hidden one included), the exponent of
/// its smallest normal, its largest finite value, and whether it has infinities (fp8e4m3 has none: a value
/// that would round to infinity is NaN there, and its all-ones code 0x7F is its only NaN).
struct Format {
  int precision;
  int min_exponent;
  double max_finite;
  bool has_infinity = true;
};

Format format_of(Precision type) {
  switch (type) {
    case Precision::fp16:
      return {11, -14, 65504.0};
    case Precision::bf16:
      return {8, -126, 0x1.fep127};
    case Precision::fp32:
      return {24, -126, static_cast<double>(std::numeric_limits<float>::max())};
    case Precision::tf32:
      return {11, -126, 0x1.ffcp127};
    case Precision::fp8e4m3:
      return {4, -6, 448.0, false};
    case Precision::fp8e5m2:
      return {3, -14, 57344.0};
  }
  throw Error(ErrorKind::internal, "unknown precision");
}

/// Round a finite, positive double to `format`, ties to even, independent of the FPU rounding mode. Beyond
/// the largest finite value the result is +Inf (round_to turns it into NaN where there is no infinity).
double round_positive(const Format& format, double magnitude) {
  const uint64_t bits = Eigen::numext::bit_cast<uint64_t>(magnitude);
  const int biased = static_cast<int>(bits >> 52);  // the sign bit is 0
  if (biased != 0 && biased - 1023 >= format.min_exponent) {
    // A normal double in the format's normal range: keep the top `precision` bits of the significand, ties to
    // even, on the bit pattern itself (the slow path below with no libm call: the operands of a time job hold
    // 10^8 elements). A carry out of the significand moves into the exponent, as a rounding up should.
    const int drop = 53 - format.precision;
    const uint64_t half = uint64_t{1} << (drop - 1), odd = (bits >> drop) & 1;
    const double rounded =
        Eigen::numext::bit_cast<double>((bits + half - 1 + odd) & ~((uint64_t{1} << drop) - 1));
    return rounded > format.max_finite ? std::numeric_limits<double>::infinity() : rounded;
  }
  // Quantum of the result: the spacing of the format in the binade of `magnitude` (subnormals share the
  // spacing of the smallest normal binade).
  const int exponent = std::max(std::ilogb(magnitude), format.min_exponent);
  const int quantum_exponent = exponent - (format.precision - 1);
  // Scaling by a power of two is exact here: downward only when the result stays ≥ 2^(precision-1).
  const double scaled = std::ldexp(magnitude, -quantum_exponent);  // < 2^precision
  double integral = std::floor(scaled);
  const double fraction = scaled - integral;  // exact: both share the binade of `scaled`
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(integral, 2.0) == 1.0)) integral += 1.0;
  const double rounded = std::ldexp(integral, quantum_exponent);
  return rounded > format.max_finite ? std::numeric_limits<double>::infinity() : rounded;
}

// ---- 8-bit formats: 1 sign bit, 8 - precision exponent bits (bias 1 - min_exponent), precision - 1
// mantissa bits. Both work on values already exact in the format (round_to first).

constexpr uint8_t kSignBit = 0x80;

/// The NaN code a store writes (without its sign): E4M3's only one, E5M2's quiet NaN (what NVIDIA's
/// conversions write for a default NaN).
uint8_t fp8_nan(const Format& format) {
  return format.has_infinity ? 0x7E : 0x7F;
}

uint8_t fp8_bits(const Format& format, double exact) {
  const uint8_t sign = std::signbit(exact) ? kSignBit : 0;
  const int mantissa_bits = format.precision - 1;
  const uint8_t infinity = static_cast<uint8_t>((0x7F >> mantissa_bits) << mantissa_bits);  // 0x7C in E5M2
  if (std::isnan(exact) || (std::isinf(exact) && !format.has_infinity)) return sign | fp8_nan(format);
  if (std::isinf(exact)) return sign | infinity;
  const double magnitude = std::fabs(exact);
  if (magnitude == 0) return sign;
  const int exponent = std::ilogb(magnitude);
  if (exponent < format.min_exponent) {  // subnormal: exponent field 0, magnitude = mantissa · 2^(emin - m)
    return sign | static_cast<uint8_t>(std::ldexp(magnitude, mantissa_bits - format.min_exponent));
  }
  // Normal: significand in [2^m, 2^(m+1)), the leading one hidden; biased exponent from 1.
  const auto significand = static_cast<unsigned>(std::ldexp(magnitude, mantissa_bits - exponent));
  const auto biased = static_cast<unsigned>(exponent - format.min_exponent + 1);
  return sign | static_cast<uint8_t>((biased << mantissa_bits) | (significand - (1u << mantissa_bits)));
}

double fp8_value(const Format& format, uint8_t bits) {
  const int mantissa_bits = format.precision - 1;
  const unsigned magnitude_bits = bits & 0x7Fu;
  const unsigned biased = magnitude_bits >> mantissa_bits;
  const unsigned mantissa = magnitude_bits & ((1u << mantissa_bits) - 1);
  const unsigned all_ones = 0x7Fu >> mantissa_bits;
  double magnitude;
  if (format.has_infinity && biased == all_ones)
    magnitude =
        mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  else if (!format.has_infinity && magnitude_bits == 0x7Fu)
    magnitude = std::numeric_limits<double>::quiet_NaN();
  else if (biased == 0)
    magnitude = std::ldexp(mantissa, format.min_exponent - mantissa_bits);
  else
    magnitude = std::ldexp((1u << mantissa_bits) | mantissa,
                           static_cast<int>(biased) - 1 + format.min_exponent - mantissa_bits);
  return std::copysign(magnitude, bits & kSignBit ? -1.0 : 1.0);
}

/// Every value of one fp8 format by its bits, decoded once: the checks read each output element of a large
/// fp8 result, and the projections and exact sums read A and B element by element, where fp8_value's ldexp
/// dominated (a check's set-up over fp8 operands 2.3–3.2 s before, 1.3–1.7 s after, with the change to
/// ProjectedCheck's step 3: results/verify-bench-dev.txt).
const std::array<double, 256>& fp8_values(Precision type) {
  const auto decode = [](Precision t) {
    std::array<double, 256> values;
    const Format format = format_of(t);
    for (unsigned bits = 0; bits < 256; ++bits) values[bits] = fp8_value(format, static_cast<uint8_t>(bits));
    return values;
  };
  static const std::array<double, 256> e4m3 = decode(Precision::fp8e4m3), e5m2 = decode(Precision::fp8e5m2);
  return type == Precision::fp8e4m3 ? e4m3 : e5m2;
}

uint16_t half_bits(double exact) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::half(static_cast<float>(exact)));
}

uint16_t bfloat16_bits(double exact) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(static_cast<float>(exact)));
}

/// Whether a finite `value` is already a value of `type` (so round_to would return it unchanged): the cheap
/// test most stores take, since most operands are small integers or values read from a matrix of the type.
/// fp8 always answers false (round_to decides).
bool exact_in(Precision type, double value) {
  if (!std::isfinite(value)) return false;
  const float f = static_cast<float>(value);
  if (static_cast<double>(f) != value) return false;
  const uint32_t bits = Eigen::numext::bit_cast<uint32_t>(f);
  switch (type) {
    case Precision::fp32:
      return true;
    case Precision::tf32:
      return (bits & 0x1FFFu) == 0;
    case Precision::bf16:
      return (bits & 0xFFFFu) == 0;
    case Precision::fp16:
      return static_cast<float>(Eigen::half(f)) == f;
    case Precision::fp8e4m3:
    case Precision::fp8e5m2:
      return false;
  }
  return false;
}

// Separate generator streams per operand, so that changing one matrix's shape leaves the others alone.
constexpr uint64_t kStreamA = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kStreamB = 0xbf58476d1ce4e5b9ull;
constexpr uint64_t kStreamC = 0x94d049bb133111ebull;

enum class Operand { a, b, c };

/// Fills the rows × cols elements of `matrix` (row-major order of draws) per the record's distribution.
void fill_values(HostMatrix& matrix, Operand operand, const CaseRecord& record, uint64_t stream) {
  std::mt19937_64 engine(record.seed ^ stream);
  boost::random::uniform_int_distribution<int> small_int(-2, 2);
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  boost::random::uniform_int_distribution<int> large(-64, 64);
  boost::random::uniform_int_distribution<int> one_in(0, 499);
  boost::random::uniform_int_distribution<int> coin(0, 1);
  // Smallest normal of the type / 8: a scale that lands values in the subnormal range.
  const double subnormal_scale = smallest_normal(matrix.type()) / 8;
  // The stored bytes of every integer the distributions draw (-64 to 64), each made once by set(): an integer
  // element is copied from here, the same bytes set() would store, without its rounding (most elements are
  // integers; scripts/host_bench.cpp's materialise phase went from 0.69 to 0.57 s on the development
  // machine).
  constexpr int kLowest = -64, kIntegers = 129;
  HostMatrix codes(matrix.type(), 1, kIntegers, kIntegers);
  for (int v = 0; v < kIntegers; ++v) codes.set(0, v, kLowest + v);
  const size_t element = static_cast<size_t>(size_of(matrix.type()));
  const auto store_integer = [&](int64_t row, int64_t col, int value) {
    std::byte* to = matrix.bytes() + static_cast<size_t>(row * matrix.ld() + col) * element;
    const std::byte* from = codes.bytes() + static_cast<size_t>(value - kLowest) * element;
    switch (element) {
      case 1:
        *to = *from;
        return;
      case 2:
        std::memcpy(to, from, 2);
        return;
      default:
        std::memcpy(to, from, 4);
    }
  };
  for (int64_t row = 0; row < matrix.rows(); ++row) {
    for (int64_t col = 0; col < matrix.cols(); ++col) {
      switch (record.distribution) {
        case Distribution::small_int:
          store_integer(row, col, small_int(engine));
          break;
        case Distribution::ones:
          store_integer(row, col, 1);
          break;
        case Distribution::normal:
          matrix.set(row, col, normal(engine));
          break;
        case Distribution::sequential:
          store_integer(row, col,
                        operand == Operand::a   ? static_cast<int>(row % 7) - 3
                        : operand == Operand::b ? static_cast<int>(col % 5) - 2
                                                : static_cast<int>((row + col) % 3) - 1);
          break;
        case Distribution::alternating: {
          // K runs along A's columns and B's rows. A's sign flips every step of K and B's every second step,
          // so the products' signs run + - - + along K and the sums cancel (with the same period in both,
          // every product would be positive).
          const int64_t along_k = operand == Operand::a ? col : row;
          const bool negative = operand == Operand::b ? (along_k / 2) % 2 : along_k % 2;
          store_integer(row, col, (negative ? -1 : 1) * static_cast<int>(1 + (row + col) % 3));
          break;
        }
        case Distribution::large:
          store_integer(row, col, large(engine));
          break;
        case Distribution::denormal: {
          const double value = normal(engine);  // drawn before the coin, in this order
          matrix.set(row, col, value * (coin(engine) ? subnormal_scale : 1.0));
          break;
        }
        case Distribution::identity:
          store_integer(row, col, operand == Operand::a ? (row == col ? 1 : 0) : small_int(engine));
          break;
        case Distribution::sparse_nonfinite: {  // ±Inf is stored as NaN in fp8e4m3 (no infinities)
          const int value = small_int(engine);
          const int pick = one_in(engine);
          if (pick == 0)
            matrix.set(row, col, std::numeric_limits<double>::quiet_NaN());
          else if (pick == 1)
            matrix.set(row, col, std::numeric_limits<double>::infinity());
          else if (pick == 2)
            matrix.set(row, col, -std::numeric_limits<double>::infinity());
          else
            store_integer(row, col, value);
          break;
        }
      }
    }
  }
}

}  // namespace

double round_to(Precision type, double value) {
  if (std::isnan(value) || value == 0) return value;  // NaN and ±0 are kept as they are
  const Format format = format_of(type);
  const double magnitude = std::isinf(value) ? value : round_positive(format, std::fabs(value));
  if (std::isinf(magnitude) && !format.has_infinity)
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), value);
  return std::copysign(magnitude, value);
}

bool output_saturates(Precision type) {
  return is_fp8(type);
}

double largest_finite(Precision type) {
  return format_of(type).max_finite;
}

double saturate(Precision type, double value) {
  if (!output_saturates(type) || std::isnan(value)) return value;
  const double largest = largest_finite(type);
  return std::clamp(value, -largest, largest);
}

double round_to_output(Precision type, double value) {
  return round_to(type, saturate(type, value));
}

double smallest_normal(Precision type) {
  return std::ldexp(1.0, format_of(type).min_exponent);
}

template <typename T>
T* ZeroedAllocator<T>::allocate(size_t n) {
  if (n == 0) return nullptr;
  void* p = std::calloc(n, sizeof(T));
  if (!p) throw std::bad_alloc();
  return static_cast<T*>(p);
}

template <typename T>
void ZeroedAllocator<T>::deallocate(T* p, size_t) noexcept {
  std::free(p);
}

template struct ZeroedAllocator<std::byte>;

HostMatrix::HostMatrix(Precision type, int64_t rows, int64_t cols, int64_t ld)
    : type_(type), rows_(rows), cols_(cols), ld_(ld) {
  if (rows < 0 || cols < 0 || ld < cols) {
    throw Error(ErrorKind::bad_input, "matrix " + std::to_string(rows) + "x" + std::to_string(cols) +
                                          " with leading dimension " + std::to_string(ld) + " is not valid");
  }
  storage_.resize(static_cast<size_t>(rows * ld * size_of(type)));  // zero: ZeroedAllocator
}

void HostMatrix::get_row(int64_t row, double* out) const {
  const std::byte* at = storage_.data() + static_cast<size_t>(row * ld_ * size_of(type_));
  // The element decoder of get, chosen once for the row.
  const auto decode_all = [&](auto element, size_t bytes) {
    for (int64_t col = 0; col < cols_; ++col) out[col] = element(at + static_cast<size_t>(col) * bytes);
  };
  const auto half_of = [](auto tag) {
    return [](const std::byte* p) {
      uint16_t bits;
      std::memcpy(&bits, p, sizeof bits);
      return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<decltype(tag)>(bits)));
    };
  };
  switch (type_) {
    case Precision::fp32:
    case Precision::tf32:
      return decode_all(
          [](const std::byte* p) {
            float value;
            std::memcpy(&value, p, sizeof value);
            return static_cast<double>(value);
          },
          sizeof(float));
    case Precision::fp8e4m3:
    case Precision::fp8e5m2:
      return decode_all(
          [&values = fp8_values(type_)](const std::byte* p) { return values[static_cast<uint8_t>(*p)]; }, 1);
    case Precision::fp16:
      return decode_all(half_of(Eigen::half{}), sizeof(uint16_t));
    case Precision::bf16:
      return decode_all(half_of(Eigen::bfloat16{}), sizeof(uint16_t));
  }
  for (int64_t col = 0; col < cols_; ++col) out[col] = get(row, col);
}

namespace {

// Row i takes its values from stream i % 16, whoever fills it: `draw(rng)` in row order, the same on every
// host and thread count.
template <typename Draw>
void fill_rows(HostMatrix& matrix, uint64_t seed, unsigned threads, const Draw& draw) {
  constexpr unsigned kStreams = 16;
  threads = std::clamp(threads, 1u, kStreams);
  const int64_t rows = matrix.rows();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (unsigned stream = t; stream < kStreams; stream += threads) {
        std::mt19937_64 rng(seed * 1000003 + stream);
        auto value = draw;  // a distribution per stream
        for (int64_t i = stream; i < rows; i += kStreams)
          for (int64_t j = 0; j < matrix.cols(); ++j) matrix.set(i, j, value(rng));
      }
    });
  for (auto& thread : pool) thread.join();
}

}  // namespace

void side_by_side(const std::vector<std::function<void()>>& jobs, unsigned threads) {
  std::atomic<size_t> next{0};
  std::exception_ptr failed;
  std::mutex mutex;
  const auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) try {
        jobs[i]();
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failed) failed = std::current_exception();
      }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min<size_t>(std::max(threads, 1u), jobs.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (failed) std::rethrow_exception(failed);
}

void fill_integers(HostMatrix& matrix, uint64_t seed, unsigned threads, int lo, int hi) {
  const boost::random::uniform_int_distribution<int> integer(lo, hi);
  fill_rows(matrix, seed, threads,
            [integer](std::mt19937_64& rng) mutable { return static_cast<double>(integer(rng)); });
}

namespace {

// splitmix64's output function: the state advanced by the golden-ratio step, then mixed.
uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Calls f(std::integral_constant<size_t, B>) for the B bytes an element of `type` takes, so that copies of
// whole elements have a size the compiler knows.
template <typename F>
void by_element_size(Precision type, const F& f) {
  switch (size_of(type)) {
    case 1:
      return f(std::integral_constant<size_t, 1>{});
    case 2:
      return f(std::integral_constant<size_t, 2>{});
    case 4:
      return f(std::integral_constant<size_t, 4>{});
    default:
      throw Error(ErrorKind::internal, "an element of " + std::to_string(size_of(type)) + " bytes");
  }
}

// Calls write_row(row bytes, columns, state) for every row, rows shared by up to 16 threads; the row's hash
// state is the seed's and the row's alone, so the bytes are the same on every host and thread count.
template <typename WriteRow>
void hashed_rows(HostMatrix& matrix, uint64_t seed, unsigned threads, const WriteRow& write_row) {
  const size_t element = static_cast<size_t>(size_of(matrix.type()));
  const int64_t rows = matrix.rows(), cols = matrix.cols();
  std::atomic<int64_t> next{0};
  const auto work = [&] {
    for (int64_t row = next++; row < rows; row = next++) {
      uint64_t state =
          seed * 0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(row) + 1) * 0xd1b54a32d192ed03ull;
      write_row(matrix.bytes() + static_cast<size_t>(row * matrix.ld()) * element, cols, state);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::clamp<unsigned>(threads, 1u, 16u); ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
}

}  // namespace

void fill_uniform(HostMatrix& matrix, uint64_t seed, unsigned threads) {
  if (matrix.type() == Precision::fp32) {  // 24 random bits: every value exact in float
    hashed_rows(matrix, seed, threads, [](std::byte* out, int64_t cols, uint64_t& state) {
      for (int64_t col = 0; col < cols; ++col) {
        const auto draw = static_cast<int64_t>(splitmix(state) >> 40);  // [0, 2^24)
        const float value = static_cast<float>(draw - (int64_t{1} << 23)) * 0x1p-23f;
        std::memcpy(out + static_cast<size_t>(col) * sizeof(float), &value, sizeof(float));
      }
    });
    return;
  }
  // The 2^16 midpoints of [-1, 1) split evenly, each rounded to the type once.
  constexpr int64_t kCodes = int64_t{1} << 16;
  HostMatrix codes(matrix.type(), 1, kCodes, kCodes);
  for (int64_t v = 0; v < kCodes; ++v) codes.set(0, v, -1.0 + (2.0 * static_cast<double>(v) + 1.0) / kCodes);
  by_element_size(matrix.type(), [&](auto size) {
    constexpr size_t kBytes = decltype(size)::value;
    hashed_rows(matrix, seed, threads, [&](std::byte* out, int64_t cols, uint64_t& state) {
      for (int64_t col = 0; col < cols; col += 4) {  // four 16-bit draws from each hash
        uint64_t z = splitmix(state);
        for (int64_t c = col; c < std::min(cols, col + 4); ++c, z >>= 16)
          std::memcpy(out + static_cast<size_t>(c) * kBytes, codes.bytes() + (z & 0xffff) * kBytes, kBytes);
      }
    });
  });
}

void fill_hashed_integers(HostMatrix& matrix, uint64_t seed, unsigned threads, int lo, int hi) {
  const int64_t count = int64_t{hi} - lo + 1;
  if (count < 1 || count > 256)
    throw Error(ErrorKind::bad_input, "fill_hashed_integers: [" + std::to_string(lo) + ", " +
                                          std::to_string(hi) + "] must hold 1 to 256 integers");
  // Each value's stored bytes, looked up instead of rounded element by element.
  HostMatrix codes(matrix.type(), 1, count, count);
  for (int64_t v = 0; v < count; ++v) codes.set(0, v, static_cast<double>(lo + v));
  by_element_size(matrix.type(), [&](auto size) {
    constexpr size_t kBytes = decltype(size)::value;
    hashed_rows(matrix, seed, threads, [&](std::byte* out, int64_t cols, uint64_t& state) {
      for (int64_t col = 0; col < cols; ++col) {
        const uint64_t index = ((splitmix(state) >> 32) * static_cast<uint64_t>(count)) >> 32;
        std::memcpy(out + static_cast<size_t>(col) * kBytes, codes.bytes() + index * kBytes, kBytes);
      }
    });
  });
}

double HostMatrix::get(int64_t row, int64_t col) const {
  const size_t index = static_cast<size_t>(row * ld_ + col);
  switch (type_) {
    case Precision::fp32:
    case Precision::tf32: {
      float value;
      std::memcpy(&value, storage_.data() + index * sizeof(float), sizeof(float));
      return value;
    }
    case Precision::fp8e4m3:
    case Precision::fp8e5m2:
      return fp8_values(type_)[static_cast<uint8_t>(storage_[index])];
    case Precision::fp16: {
      uint16_t bits;
      std::memcpy(&bits, storage_.data() + index * sizeof(uint16_t), sizeof(uint16_t));
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
    }
    case Precision::bf16: {
      uint16_t bits;
      std::memcpy(&bits, storage_.data() + index * sizeof(uint16_t), sizeof(uint16_t));
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(bits));
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void HostMatrix::set(int64_t row, int64_t col, double value) {
  const size_t index = static_cast<size_t>(row * ld_ + col);
  // Exact in the element type from here on.
  const double rounded = exact_in(type_, value) ? value : round_to(type_, value);
  switch (type_) {
    case Precision::fp32:
    case Precision::tf32: {  // tf32: the rounded value is exact in float, its low 13 mantissa bits zero
      const float stored = static_cast<float>(rounded);
      std::memcpy(storage_.data() + index * sizeof(float), &stored, sizeof(float));
      return;
    }
    case Precision::fp8e4m3:
    case Precision::fp8e5m2:
      storage_[index] = static_cast<std::byte>(fp8_bits(format_of(type_), rounded));
      return;
    case Precision::fp16: {
      const uint16_t bits = half_bits(rounded);
      std::memcpy(storage_.data() + index * sizeof(uint16_t), &bits, sizeof(uint16_t));
      return;
    }
    case Precision::bf16: {
      const uint16_t bits = bfloat16_bits(rounded);
      std::memcpy(storage_.data() + index * sizeof(uint16_t), &bits, sizeof(uint16_t));
      return;
    }
  }
}

void HostMatrix::fill(double value) {
  if (rows_ == 0 || ld_ == 0) return;
  set(0, 0, value);  // one rounded element, then copied byte for byte, doubling the filled prefix each time
  size_t filled = static_cast<size_t>(size_of(type_));
  while (filled < storage_.size()) {
    const size_t chunk = std::min(filled, storage_.size() - filled);
    std::memcpy(storage_.data() + filled, storage_.data(), chunk);
    filled += chunk;
  }
}

HostMatrix transposed(const HostMatrix& logical, int64_t ld) {
  HostMatrix out(logical.type(), logical.cols(), logical.rows(), ld);
  out.fill(std::numeric_limits<double>::quiet_NaN());
  // The elements' bytes moved as they are (each is exact in its type already, NaNs and signed zeros
  // included), in square tiles so that both sides stay in cache (a time job's operands hold 10^8 elements).
  const auto move = [&](auto size) {
    constexpr size_t kBytes = decltype(size)::value;
    const std::byte* from = logical.bytes();
    std::byte* to = out.bytes();
    constexpr int64_t kTile = 64;
    const int64_t rows = logical.rows(), cols = logical.cols(), from_ld = logical.ld();
    for (int64_t i0 = 0; i0 < rows; i0 += kTile)
      for (int64_t j0 = 0; j0 < cols; j0 += kTile)
        for (int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
          for (int64_t j = j0; j < std::min(cols, j0 + kTile); ++j)
            std::memcpy(to + static_cast<size_t>(j * ld + i) * kBytes,
                        from + static_cast<size_t>(i * from_ld + j) * kBytes, kBytes);
  };
  by_element_size(logical.type(), move);
  return out;
}

CaseOperands materialise(const CaseRecord& record, Precision input, Precision output) {
  if (record.m < 0 || record.n < 0 || record.k < 0 || record.lda_pad < 0 || record.ldb_pad < 0 ||
      record.ldc_pad < 0) {
    throw Error(ErrorKind::bad_input, "case record with a negative size or padding: " + to_string(record));
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool a_row = record.layout.a == Order::row, b_row = record.layout.b == Order::row;
  CaseOperands operands{HostMatrix(input, record.m, record.k, a_row ? record.lda() : record.k),
                        HostMatrix(input, record.k, record.n, b_row ? record.ldb() : record.n),
                        HostMatrix(output, record.m, record.n, record.ldc())};
  // NaN first, values second: padding (and C when beta == 0) keeps the NaN, poisoning any read of it. Each
  // operand draws from a stream of its own, so the three are made side by side with the same values.
  side_by_side({[&] {
                  operands.a.fill(nan);
                  fill_values(operands.a, Operand::a, record, kStreamA);
                },
                [&] {
                  operands.b.fill(nan);
                  fill_values(operands.b, Operand::b, record, kStreamB);
                },
                [&] {
                  operands.c.fill(nan);
                  if (record.beta != 0) fill_values(operands.c, Operand::c, record, kStreamC);
                }},
               host_threads());
  return operands;
}

}  // namespace tunefuzz::fuzz
