#include "tuner/common/precision.hpp"

#include <cmath>
#include <iterator>

namespace tunefuzz {

namespace {

/// What the host knows of an element type.
struct Traits {
  const char* name;
  int bytes;             // of its storage
  int significand_bits;  // p, the hidden one included
  int code;              // TF_TYPE_* in templates/tunefuzz_rtc.h (tests/test_precision.cpp checks)
};

/// In the order of the enum.
constexpr Traits traits[] = {
    {"fp16", 2, 11, 0}, {"bf16", 2, 8, 1},    {"fp32", 4, 24, 2},
    {"tf32", 4, 11, 3}, {"fp8e4m3", 1, 4, 4}, {"fp8e5m2", 1, 3, 5},
};
static_assert(std::size(traits) == std::size(all_precisions));

const Traits& traits_of(Precision precision) {
  return traits[static_cast<size_t>(precision)];
}

}  // namespace

const char* to_string(Precision precision) {
  return traits_of(precision).name;
}

std::optional<Precision> parse_precision(std::string_view text) {
  for (Precision precision : all_precisions) {
    if (text == to_string(precision)) return precision;
  }
  return std::nullopt;
}

bool is_fp8(Precision precision) {
  return precision == Precision::fp8e4m3 || precision == Precision::fp8e5m2;
}

bool is_output_type(Precision input, Precision output) {
  if (input == Precision::tf32) return output == Precision::fp32;
  if (is_fp8(output)) return output == input;
  return output == Precision::fp16 || output == Precision::bf16 || output == Precision::fp32;
}

int size_of(Precision precision) {
  return traits_of(precision).bytes;
}

double unit_roundoff(Precision precision) {
  return std::ldexp(1.0, -traits_of(precision).significand_bits);
}

int template_code(Precision precision) {
  return traits_of(precision).code;
}

std::string to_string(Layout layout) {
  std::string out;
  out += layout.a == Order::row ? 'R' : 'C';
  out += layout.b == Order::row ? 'R' : 'C';
  return out;
}

std::optional<Layout> parse_layout(std::string_view text) {
  if (text.size() != 2) return std::nullopt;
  auto order = [](char c) -> std::optional<Order> {
    if (c == 'R') return Order::row;
    if (c == 'C') return Order::col;
    return std::nullopt;
  };
  auto a = order(text[0]);
  auto b = order(text[1]);
  if (!a || !b) return std::nullopt;
  return Layout{*a, *b};
}

}  // namespace tunefuzz
