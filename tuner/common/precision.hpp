// Element types and matrix layouts, named the same in configs, templates and result tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tunefuzz {

/// tf32 is stored as fp32 bits holding a value with 11 significand bits; fp8e4m3 is OCP FP8 E4M3FN (no
/// infinities), fp8e5m2 OCP FP8 E5M2 (IEEE-style infinities and NaNs). tf32 is an input type only; fp8 is an
/// output type only for inputs of the same fp8 type (is_output_type), and such an output saturates.
enum class Precision { fp16, bf16, fp32, tf32, fp8e4m3, fp8e5m2 };

/// Every element type, in the order of the enum.
inline constexpr Precision all_precisions[] = {Precision::fp16, Precision::bf16,    Precision::fp32,
                                               Precision::tf32, Precision::fp8e4m3, Precision::fp8e5m2};

/// `fp16`, `bf16`, `fp32`, `tf32`, `fp8e4m3` or `fp8e5m2`.
const char* to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);
/// fp8e4m3 or fp8e5m2.
bool is_fp8(Precision precision);
/// Whether C may be `output` for A and B of `input`: fp16, bf16 or fp32 (only fp32 for tf32 inputs), or
/// the input type itself for fp8 inputs.
bool is_output_type(Precision input, Precision output);
/// Bytes per element (tf32: 4, its fp32 storage).
int size_of(Precision precision);
/// Unit roundoff u = 2^-p of round-to-nearest in this type (p = significand bits including the hidden one).
double unit_roundoff(Precision precision);
/// The code a kernel template receives for this type (TF_TYPE_* in templates/tunefuzz_rtc.h).
int template_code(Precision precision);

/// Storage order of one matrix.
enum class Order { row, col };

/// Storage orders of A and B, written `RR`, `RC`, `CR`, `CC` (A first). C is always row-major.
struct Layout {
  Order a = Order::row;
  Order b = Order::row;
  friend bool operator==(const Layout&, const Layout&) = default;
};

std::string to_string(Layout layout);
std::optional<Layout> parse_layout(std::string_view text);

}  // namespace tunefuzz
