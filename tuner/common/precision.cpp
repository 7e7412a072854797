#include "tuner/common/precision.hpp"

namespace tunefuzz {

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
    case Precision::fp32:
      return "fp32";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view text) {
  if (text == "fp16") return Precision::fp16;
  if (text == "bf16") return Precision::bf16;
  if (text == "fp32") return Precision::fp32;
  return std::nullopt;
}

int size_of(Precision precision) {
  return precision == Precision::fp32 ? 4 : 2;
}

double unit_roundoff(Precision precision) {
  switch (precision) {
    case Precision::fp16:
      return 0x1p-11;
    case Precision::bf16:
      return 0x1p-8;
    case Precision::fp32:
      return 0x1p-24;
  }
  return 0;
}

int template_code(Precision precision) {
  // Must match TF_TYPE_FP16 / TF_TYPE_BF16 / TF_TYPE_FP32 in templates/tunefuzz_rtc.h.
  switch (precision) {
    case Precision::fp16:
      return 0;
    case Precision::bf16:
      return 1;
    case Precision::fp32:
      return 2;
  }
  return -1;
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
