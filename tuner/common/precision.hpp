// Element types and matrix layouts, named the same in configs, templates and result tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tunefuzz {

enum class Precision { fp16, bf16, fp32 };

/// `fp16`, `bf16` or `fp32`.
const char* to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);
/// Bytes per element.
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
