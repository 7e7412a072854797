// Tests of the element types (tuner/common/precision) and their host storage (fuzz/matrix), stated as laws:
// names round-trip; each type's unit roundoff is half its spacing at 1; template codes are the kernel
// header's; every fp8 code decodes as NVIDIA's conversion does and stores back to itself; storing rounds
// to the nearest code, ties to the even code, as a brute-force search over all 256 codes finds; tf32 keeps
// fp32's exponent range with 11 significand bits; materialised fuzz cases hold only values of their type.
#include <gtest/gtest.h>

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "fuzz/case.hpp"
#include "fuzz/matrix.hpp"
#include "templates/tunefuzz_rtc.h"
#include "tuner/common/precision.hpp"

namespace tunefuzz::fuzz {
namespace {

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();
const Precision fp8_types[] = {Precision::fp8e4m3, Precision::fp8e5m2};

// ---- names, sizes, codes ------------------------------------------------------------------------------

TEST(Precision, NamesRoundTrip) {
  for (Precision type : all_precisions) EXPECT_EQ(parse_precision(to_string(type)), type) << to_string(type);
  EXPECT_STREQ(to_string(Precision::fp16), "fp16");
  EXPECT_STREQ(to_string(Precision::bf16), "bf16");
  EXPECT_STREQ(to_string(Precision::fp32), "fp32");
  EXPECT_STREQ(to_string(Precision::tf32), "tf32");
  EXPECT_STREQ(to_string(Precision::fp8e4m3), "fp8e4m3");
  EXPECT_STREQ(to_string(Precision::fp8e5m2), "fp8e5m2");
  EXPECT_FALSE(parse_precision("fp8"));
  EXPECT_FALSE(parse_precision("FP8E4M3"));
  EXPECT_FALSE(parse_precision("e4m3"));
}

TEST(Precision, SizesAndFp8) {
  EXPECT_EQ(size_of(Precision::fp16), 2);
  EXPECT_EQ(size_of(Precision::bf16), 2);
  EXPECT_EQ(size_of(Precision::fp32), 4);
  EXPECT_EQ(size_of(Precision::tf32), 4);  // fp32 storage
  EXPECT_EQ(size_of(Precision::fp8e4m3), 1);
  EXPECT_EQ(size_of(Precision::fp8e5m2), 1);
  for (Precision type : all_precisions) {
    EXPECT_EQ(is_fp8(type), type == Precision::fp8e4m3 || type == Precision::fp8e5m2) << to_string(type);
    EXPECT_EQ(HostMatrix(type, 3, 2, 5).size_bytes(), static_cast<size_t>(15 * size_of(type)));
  }
}

TEST(Precision, OutputTypesAreFp16Bf16Fp32OrAnFp8InputsOwnType) {
  for (Precision input : all_precisions) {
    for (Precision output : all_precisions) {
      SCOPED_TRACE(std::string(to_string(input)) + " -> " + to_string(output));
      const bool wide = output == Precision::fp16 || output == Precision::bf16 || output == Precision::fp32;
      const bool expected = input == Precision::tf32 ? output == Precision::fp32
                            : is_fp8(output)         ? output == input
                                                     : wide;
      EXPECT_EQ(is_output_type(input, output), expected);
    }
  }
  EXPECT_TRUE(is_output_type(Precision::fp8e4m3, Precision::fp8e4m3));
  EXPECT_FALSE(is_output_type(Precision::fp8e5m2, Precision::fp8e4m3));
  EXPECT_FALSE(is_output_type(Precision::bf16, Precision::fp8e4m3));
  EXPECT_FALSE(is_output_type(Precision::fp16, Precision::tf32));
}

TEST(Precision, TemplateCodesAreTheKernelHeaders) {
  EXPECT_EQ(template_code(Precision::fp16), TF_TYPE_FP16);
  EXPECT_EQ(template_code(Precision::bf16), TF_TYPE_BF16);
  EXPECT_EQ(template_code(Precision::fp32), TF_TYPE_FP32);
  EXPECT_EQ(template_code(Precision::tf32), TF_TYPE_TF32);
  EXPECT_EQ(template_code(Precision::fp8e4m3), TF_TYPE_FP8E4M3);
  EXPECT_EQ(template_code(Precision::fp8e5m2), TF_TYPE_FP8E5M2);
}

TEST(Precision, UnitRoundoffIsHalfTheSpacingAtOne) {
  // u = 2^-p: 1 + u is the tie between 1 and 1 + 2u (to even: 1), just above it rounds up, 1 + 2u is exact.
  for (Precision type : all_precisions) {
    const double u = unit_roundoff(type);
    SCOPED_TRACE(to_string(type));
    EXPECT_EQ(round_to(type, 1 + u), 1.0);
    EXPECT_EQ(round_to(type, 1 + u + u / 64), 1 + 2 * u);
    EXPECT_EQ(round_to(type, 1 + 2 * u), 1 + 2 * u);
  }
  EXPECT_EQ(unit_roundoff(Precision::tf32), 0x1p-11);
  EXPECT_EQ(unit_roundoff(Precision::fp8e4m3), 0x1p-4);
  EXPECT_EQ(unit_roundoff(Precision::fp8e5m2), 0x1p-3);
}

TEST(Precision, SmallestNormals) {
  EXPECT_EQ(smallest_normal(Precision::fp16), 0x1p-14);
  EXPECT_EQ(smallest_normal(Precision::bf16), 0x1p-126);
  EXPECT_EQ(smallest_normal(Precision::fp32), 0x1p-126);
  EXPECT_EQ(smallest_normal(Precision::tf32), 0x1p-126);
  EXPECT_EQ(smallest_normal(Precision::fp8e4m3), 0x1p-6);
  EXPECT_EQ(smallest_normal(Precision::fp8e5m2), 0x1p-14);
}

// ---- fp8 codes ----------------------------------------------------------------------------------------

__nv_fp8_interpretation_t nvidia_kind(Precision type) {
  return type == Precision::fp8e4m3 ? __NV_E4M3 : __NV_E5M2;
}

/// The value of `code` by NVIDIA's host conversion (cuda_fp8.h: fp8 → fp16 bits, exact).
double nvidia_value(Precision type, uint8_t code) {
  const __half_raw half = __nv_cvt_fp8_to_halfraw(code, nvidia_kind(type));
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(half.x)));
}

/// The code stored for `value` (a one-element matrix: set, then its byte).
uint8_t stored_code(Precision type, double value) {
  HostMatrix matrix(type, 1, 1, 1);
  matrix.set(0, 0, value);
  return static_cast<uint8_t>(matrix.bytes()[0]);
}

/// The value a matrix reads back for `code` (its byte, then get).
double read_code(Precision type, uint8_t code) {
  HostMatrix matrix(type, 1, 1, 1);
  matrix.bytes()[0] = static_cast<std::byte>(code);
  return matrix.get(0, 0);
}

bool same_value(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
}

TEST(Fp8, EveryCodeDecodesAsNvidiaDoesAndStoresBackToItself) {
  for (Precision type : fp8_types) {
    int nans = 0, infinities = 0;
    for (int code = 0; code < 256; ++code) {
      SCOPED_TRACE(std::string(to_string(type)) + " code " + std::to_string(code));
      const double value = read_code(type, static_cast<uint8_t>(code));
      ASSERT_TRUE(same_value(value, nvidia_value(type, static_cast<uint8_t>(code)))) << value;
      if (std::isnan(value)) {
        ++nans;
        // A NaN stores as the one NaN code a store writes, with the sign of the NaN read.
        const uint8_t canonical = type == Precision::fp8e4m3 ? 0x7F : 0x7E;
        EXPECT_EQ(stored_code(type, value), (code & 0x80) | canonical);
        continue;
      }
      infinities += std::isinf(value);
      EXPECT_EQ(stored_code(type, value), code) << value;
    }
    // E4M3FN: one NaN per sign and no infinity; E5M2: three NaN payloads and one infinity per sign.
    EXPECT_EQ(nans, type == Precision::fp8e4m3 ? 2 : 6);
    EXPECT_EQ(infinities, type == Precision::fp8e4m3 ? 0 : 2);
  }
}

TEST(Fp8, LandmarkCodes) {
  const auto e4m3 = [](uint8_t code) { return read_code(Precision::fp8e4m3, code); };
  const auto e5m2 = [](uint8_t code) { return read_code(Precision::fp8e5m2, code); };
  EXPECT_EQ(e4m3(0x38), 1.0);       // exponent 7 = bias
  EXPECT_EQ(e4m3(0x7E), 448.0);     // largest finite
  EXPECT_EQ(e4m3(0x08), 0x1p-6);    // smallest normal
  EXPECT_EQ(e4m3(0x07), 0x1.cp-7);  // largest subnormal, 7 · 2^-9
  EXPECT_EQ(e4m3(0x01), 0x1p-9);    // smallest subnormal
  EXPECT_EQ(e4m3(0xC0), -2.0);
  EXPECT_TRUE(std::isnan(e4m3(0x7F)) && std::isnan(e4m3(0xFF)));
  EXPECT_TRUE(std::signbit(e4m3(0x80)) && e4m3(0x80) == 0.0);
  EXPECT_EQ(e5m2(0x3C), 1.0);      // exponent 15 = bias
  EXPECT_EQ(e5m2(0x7B), 57344.0);  // largest finite
  EXPECT_EQ(e5m2(0x7C), inf);
  EXPECT_EQ(e5m2(0xFC), -inf);
  EXPECT_EQ(e5m2(0x04), 0x1p-14);  // smallest normal
  EXPECT_EQ(e5m2(0x01), 0x1p-16);  // smallest subnormal
  EXPECT_TRUE(std::isnan(e5m2(0x7D)) && std::isnan(e5m2(0x7E)) && std::isnan(e5m2(0x7F)));
}

/// Where storing `value` must land, found without the rounding code: among the finite codes and the one
/// past the largest finite (E4M3: 0x7F, NaN; E5M2: 0x7C, infinity), the nearest to |value|, a tie going to
/// the even code (adjacent values have adjacent codes, so the even code is the one with an even mantissa).
uint8_t nearest_code(Precision type, double value) {
  const double magnitude = std::fabs(value);
  const uint8_t past_largest = type == Precision::fp8e4m3 ? 0x7F : 0x7C;
  const double past_value = type == Precision::fp8e4m3 ? 480.0 : 65536.0;  // 1.875 · 2^8, 2^16
  int best = -1;
  double best_distance = inf;
  // Distances are exact near |value| (neighbours within a factor of 2 subtract exactly), but not beyond
  // the past-largest value, where 1e300 - 448 == 1e300 - 480: every such value is nearest that one.
  for (int code = magnitude >= past_value ? past_largest : 0; code <= past_largest; ++code) {
    const double candidate = code == past_largest ? past_value : read_code(type, static_cast<uint8_t>(code));
    const double distance = std::fabs(candidate - magnitude);
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  if (best == past_largest && type == Precision::fp8e4m3) best = 0x7F;  // no infinity: NaN
  return static_cast<uint8_t>(best | (std::signbit(value) ? 0x80 : 0));
}

/// Values around every code: the codes' own values, the midpoints between neighbours (ties), and a little
/// either side of those, plus random magnitudes from far below the subnormals to far beyond the largest.
std::vector<double> probe_values(Precision type, uint64_t seed) {
  std::vector<double> values;
  const int last_finite = type == Precision::fp8e4m3 ? 0x7E : 0x7B;
  for (int code = 0; code <= last_finite; ++code) {
    const double low = read_code(type, static_cast<uint8_t>(code));
    const double high = code == last_finite ? (type == Precision::fp8e4m3 ? 480.0 : 65536.0)
                                            : read_code(type, static_cast<uint8_t>(code + 1));
    const double middle = (low + high) / 2;
    for (double v :
         {low, middle, std::nextafter(middle, 0.0), std::nextafter(middle, inf), low + (high - low) / 3})
      values.push_back(v);
  }
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> exponent(-24, 20), mantissa(1, 2);
  for (int i = 0; i < 20000; ++i)
    values.push_back(std::ldexp(mantissa(engine), static_cast<int>(exponent(engine))));
  for (double v : {1e6, 1e300, 0x1p-30, 0x1p-1000}) values.push_back(v);
  return values;
}

TEST(Fp8, StoringRoundsToTheNearestCodeTiesToEven) {
  const uint64_t seed = 20261201;
  for (Precision type : fp8_types) {
    for (double magnitude : probe_values(type, seed)) {
      for (double value : {magnitude, -magnitude}) {
        SCOPED_TRACE(std::string(to_string(type)) + " value " + std::to_string(value) + " seed " +
                     std::to_string(seed));
        const uint8_t code = stored_code(type, value);
        ASSERT_EQ(code, nearest_code(type, value)) << std::hexfloat << value;
        // NVIDIA's own double → fp8 conversion (no saturation) agrees bit for bit.
        ASSERT_EQ(code, __nv_cvt_double_to_fp8(value, __NV_NOSAT, nvidia_kind(type)))
            << std::hexfloat << value;
        // round_to is storing and reading back.
        ASSERT_TRUE(same_value(round_to(type, value), read_code(type, code))) << std::hexfloat << value;
      }
    }
  }
}

TEST(Fp8, TiesSubnormalsAndOverflow) {
  const Precision e4m3 = Precision::fp8e4m3, e5m2 = Precision::fp8e5m2;
  // Ties to even: e4m3 spacing at 1 is 2^-3, e5m2's 2^-2.
  EXPECT_EQ(round_to(e4m3, 1 + 0x1p-4), 1.0);
  EXPECT_EQ(round_to(e4m3, 1 + 3 * 0x1p-4), 1.25);
  EXPECT_EQ(round_to(e4m3, 1 + 0x1p-4 + 0x1p-40), 1.125);  // just above the tie: no double rounding
  EXPECT_EQ(round_to(e5m2, 1 + 0x1p-3), 1.0);
  EXPECT_EQ(round_to(e5m2, 1 + 3 * 0x1p-3), 1.5);
  // Subnormals: e4m3 spacing 2^-9, e5m2 2^-16; half the smallest is a tie with zero.
  EXPECT_EQ(round_to(e4m3, 0x1p-10), 0.0);
  EXPECT_EQ(round_to(e4m3, 3 * 0x1p-10), 0x1p-8);
  EXPECT_TRUE(std::signbit(round_to(e4m3, -0x1p-11)));
  EXPECT_EQ(round_to(e5m2, 0x1p-17), 0.0);
  EXPECT_EQ(round_to(e5m2, 0x1.8p-17), 0x1p-16);
  // Overflow. e4m3: 464 is the tie between 448 (even) and 480 (0x7F, NaN); above it, NaN; ±Inf is NaN.
  EXPECT_EQ(round_to(e4m3, 464.0), 448.0);
  EXPECT_TRUE(std::isnan(round_to(e4m3, std::nextafter(464.0, inf))));
  EXPECT_TRUE(std::isnan(round_to(e4m3, inf)));
  EXPECT_EQ(stored_code(e4m3, inf), 0x7F);
  EXPECT_EQ(stored_code(e4m3, -inf), 0xFF);
  EXPECT_EQ(stored_code(e4m3, -1e9), 0xFF);
  EXPECT_EQ(stored_code(e4m3, -nan), 0xFF);
  // e5m2: 61440 is the tie between 57344 (odd code 0x7B) and 2^16 (0x7C): infinity, as in IEEE formats.
  EXPECT_EQ(round_to(e5m2, std::nextafter(61440.0, 0.0)), 57344.0);
  EXPECT_EQ(round_to(e5m2, 61440.0), inf);
  EXPECT_EQ(round_to(e5m2, -inf), -inf);
  EXPECT_EQ(stored_code(e5m2, -inf), 0xFC);
  EXPECT_EQ(stored_code(e5m2, nan), 0x7E);
}

TEST(Fp8, OutputStoresSaturateAsNvidiasSatfiniteConversionDoes) {
  // A kernel's fp8 store (cvt.rn.satfinite): nearest, ties to even, and beyond the largest finite value, ±Inf
  // included, that value; NaN stays NaN. cuda_fp8.h's __NV_SATFINITE conversion is the host twin of it.
  const uint64_t seed = 20261202;
  for (Precision type : fp8_types) {
    EXPECT_TRUE(output_saturates(type));
    std::vector<double> values = probe_values(type, seed);
    values.insert(values.end(), {inf, 1e300, 464.0, 61440.0, 0.0});
    for (double magnitude : values) {
      for (double value : {magnitude, -magnitude}) {
        SCOPED_TRACE(std::string(to_string(type)) + " value " + std::to_string(value) + " seed " +
                     std::to_string(seed));
        const uint8_t code = __nv_cvt_double_to_fp8(value, __NV_SATFINITE, nvidia_kind(type));
        ASSERT_TRUE(same_value(round_to_output(type, value), read_code(type, code)))
            << std::hexfloat << value;
      }
    }
    EXPECT_TRUE(std::isnan(round_to_output(type, nan)));
  }
  EXPECT_EQ(largest_finite(Precision::fp8e4m3), 448.0);
  EXPECT_EQ(largest_finite(Precision::fp8e5m2), 57344.0);
  EXPECT_EQ(round_to_output(Precision::fp8e4m3, 1000.0), 448.0);
  EXPECT_EQ(round_to_output(Precision::fp8e5m2, -inf), -57344.0);
  // The other outputs overflow to infinity: their store is round_to.
  for (Precision type : {Precision::fp16, Precision::bf16, Precision::fp32}) {
    EXPECT_FALSE(output_saturates(type)) << to_string(type);
    for (double value : {1e300, -inf, 70000.0, 0.1, nan})
      EXPECT_TRUE(same_value(round_to_output(type, value), round_to(type, value)))
          << to_string(type) << value;
  }
}

// ---- tf32 ---------------------------------------------------------------------------------------------

/// fp32 bits rounded to tf32 (10 stored mantissa bits) to nearest, ties to even: the usual bit trick, which
/// carries into the exponent (and on to infinity) by itself. For finite floats only.
uint32_t tf32_reference(uint32_t bits) {
  return (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
}

TEST(Tf32, RoundsEveryFloatLikeTheBitTrickAndStoresFp32Bits) {
  const uint64_t seed = 29;
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<uint32_t> random_bits;
  HostMatrix matrix(Precision::tf32, 1, 1, 1);
  for (int trial = 0; trial < 200000; ++trial) {
    uint32_t pattern = random_bits(engine);
    if (trial % 4 == 0) pattern = (pattern & ~0xFFFu) | (trial % 8 == 0 ? 0x1000u : 0x0FFFu);  // near ties
    float value;
    std::memcpy(&value, &pattern, sizeof(value));
    if (!std::isfinite(value)) continue;
    const uint32_t expected_bits = tf32_reference(pattern);
    float expected;
    std::memcpy(&expected, &expected_bits, sizeof(expected));
    ASSERT_TRUE(same_value(round_to(Precision::tf32, value), expected))
        << "seed " << seed << " bits " << pattern;
    matrix.set(0, 0, value);
    uint32_t stored;
    std::memcpy(&stored, matrix.bytes(), sizeof(stored));
    ASSERT_EQ(stored, expected_bits) << "seed " << seed << " bits " << pattern;
    ASSERT_TRUE(same_value(matrix.get(0, 0), expected));
  }
}

TEST(Tf32, RangeIsFp32sWithElevenSignificandBits) {
  const Precision tf32 = Precision::tf32;
  EXPECT_EQ(round_to(tf32, 0x1.ffcp127), 0x1.ffcp127);  // largest finite
  EXPECT_EQ(round_to(tf32, std::nextafter(0x1.ffep127, 0.0)), 0x1.ffcp127);
  EXPECT_EQ(round_to(tf32, 0x1.ffep127), inf);  // the tie with 2^128 goes to infinity
  EXPECT_EQ(round_to(tf32, -inf), -inf);
  EXPECT_EQ(round_to(tf32, 0x1p-136), 0x1p-136);  // smallest subnormal: 2^-126 · 2^-10
  EXPECT_EQ(round_to(tf32, 0x1p-137), 0.0);       // tie with zero
  EXPECT_EQ(round_to(tf32, 3 * 0x1p-137), 0x1p-135);
  EXPECT_EQ(round_to(tf32, 1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-10);  // just above a tie: no double rounding
  EXPECT_EQ(round_to(tf32, 0.1), 0x1.998p-4);
}

// ---- materialised cases -------------------------------------------------------------------------------

const Distribution every_distribution[] = {
    Distribution::small_int,  Distribution::ones,        Distribution::normal,
    Distribution::sequential, Distribution::alternating, Distribution::large,
    Distribution::denormal,   Distribution::identity,    Distribution::sparse_nonfinite};

CaseRecord record_of(Distribution distribution, uint64_t seed) {
  CaseRecord record;
  record.m = 40;
  record.n = 48;
  record.k = 64;
  record.lda_pad = 3;
  record.beta = 0.5;
  record.distribution = distribution;
  record.seed = seed;
  return record;
}

struct Census {
  int64_t nan = 0, infinity = 0, subnormal = 0, nonzero = 0;
};

/// Checks every stored element of `matrix` (padding too) is one a store writes, and counts kinds.
Census check_stored_values(const HostMatrix& matrix) {
  Census census;
  const Precision type = matrix.type();
  for (int64_t row = 0; row < matrix.rows(); ++row) {
    for (int64_t col = 0; col < matrix.ld(); ++col) {
      const double value = matrix.get(row, col);
      const size_t index = static_cast<size_t>(row * matrix.ld() + col);
      if (is_fp8(type)) {
        const uint8_t code = static_cast<uint8_t>(matrix.bytes()[index]);
        EXPECT_EQ(stored_code(type, value), code) << "a code no store writes: " << int(code);
      } else if (type == Precision::tf32) {
        uint32_t bits;
        std::memcpy(&bits, matrix.bytes() + index * 4, 4);
        if (!std::isnan(value)) {
          EXPECT_EQ(bits & 0x1FFFu, 0u) << "tf32 with low mantissa bits: " << value;
        }
      }
      census.nan += std::isnan(value);
      census.infinity += std::isinf(value);
      census.subnormal += value != 0 && std::fabs(value) < smallest_normal(type);
      census.nonzero += value != 0 && !std::isnan(value);
    }
  }
  return census;
}

TEST(Materialise, NewTypesHoldOnlyTheirOwnValues) {
  const uint64_t seed = 4242;
  for (Precision input : {Precision::tf32, Precision::fp8e4m3, Precision::fp8e5m2}) {
    const Precision output = input == Precision::tf32 ? Precision::fp32 : Precision::bf16;
    for (Distribution distribution : every_distribution) {
      const CaseRecord record = record_of(distribution, seed);
      SCOPED_TRACE(std::string(to_string(input)) + " " + to_string(record));
      const CaseOperands operands = materialise(record, input, output);
      Census census;
      for (const HostMatrix* matrix : {&operands.a, &operands.b}) {
        const Census one = check_stored_values(*matrix);
        census.infinity += one.infinity;
        census.subnormal += one.subnormal;
        census.nonzero += one.nonzero;
      }
      check_stored_values(operands.c);
      EXPECT_GT(census.nonzero, 0);
      // Subnormal inputs reach the kernel: the scale follows the type's own smallest normal.
      if (distribution == Distribution::denormal) {
        EXPECT_GT(census.subnormal, 0);
      }
      // ±Inf stays infinite where the type has infinities; E4M3 stores NaN instead (counted in the padding
      // too, so only the absence of infinities is checked for it).
      if (distribution == Distribution::sparse_nonfinite) {
        if (input == Precision::fp8e4m3) {
          EXPECT_EQ(census.infinity, 0);
        } else {
          EXPECT_GT(census.infinity, 0);
        }
      }
    }
  }
}

TEST(Materialise, SmallIntegersAreExactInFp8) {
  // The exact-mode distributions must not be rounded by the input type, or the bit-exact check would be
  // comparing against values the kernel never saw.
  for (Precision input : fp8_types) {
    for (Distribution distribution :
         {Distribution::small_int, Distribution::sequential, Distribution::ones}) {
      const CaseRecord record = record_of(distribution, 77);
      const CaseOperands fp8 = materialise(record, input, Precision::fp32);
      const CaseOperands wide = materialise(record, Precision::fp32, Precision::fp32);
      for (int64_t row = 0; row < record.m; ++row)
        for (int64_t col = 0; col < record.k; ++col)
          ASSERT_EQ(fp8.a.get(row, col), wide.a.get(row, col))
              << to_string(input) << " " << to_string(record);
    }
  }
}

}  // namespace
}  // namespace tunefuzz::fuzz
