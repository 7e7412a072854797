// What the compile tests read back from a template and its compiled output: the geometry record a kernel
// exports (`tf_kernel_meta`), the messages of the template's static_asserts, and whether a compile stopped at
// exactly one of them.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend/compiler.hpp"
#include "tuner/common/error.hpp"

namespace tunefuzz::test {

/// The initialiser of `tf_kernel_meta` in the PTX, as four 32-bit integers. NVRTC writes it as a byte array
/// with trailing zero bytes left out (`.const .align 4 .b8 tf_kernel_meta[16] = {128, 0, 0, 0, 0, 192};`);
/// a 32-bit array (`.u32`/`.b32`/`.s32 tf_kernel_meta[4] = {...}`) is read too. No initialiser: all zero.
inline std::optional<std::array<int64_t, 4>> kernel_meta(const std::string& ptx) {
  const size_t name = ptx.find(" tf_kernel_meta[");
  if (name == std::string::npos) return std::nullopt;
  const size_t line_start = ptx.rfind('\n', name) + 1;
  const size_t line_end = ptx.find(';', name);
  if (line_end == std::string::npos) return std::nullopt;
  const std::string declaration = ptx.substr(line_start, name - line_start);
  int element_bytes = 0;
  if (declaration.find(".b8") != std::string::npos || declaration.find(".u8") != std::string::npos ||
      declaration.find(".s8") != std::string::npos)
    element_bytes = 1;
  else if (declaration.find("32") != std::string::npos)
    element_bytes = 4;
  else
    return std::nullopt;
  std::vector<uint64_t> elements;
  const size_t open = ptx.find('{', name);
  if (open != std::string::npos && open < line_end) {
    const size_t close = ptx.find('}', open);
    std::string list = ptx.substr(open + 1, close - open - 1);
    size_t start = 0;
    while (start < list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string item = list.substr(start, comma - start);
      if (item.find_first_not_of(" \t\n") != std::string::npos)
        elements.push_back(std::stoull(item, nullptr, 0));
      start = comma + 1;
    }
  }
  const size_t count = 16 / element_bytes;
  if (elements.size() > count) return std::nullopt;
  elements.resize(count, 0);
  std::array<int64_t, 4> words{};
  for (size_t w = 0; w < 4; ++w) {
    uint32_t word = 0;
    if (element_bytes == 4) {
      word = static_cast<uint32_t>(elements[w]);
    } else {
      for (int b = 0; b < 4; ++b) word |= static_cast<uint32_t>(elements[w * 4 + b] & 0xff) << (8 * b);
    }
    words[w] = static_cast<int32_t>(word);
  }
  return words;
}

/// Every static_assert message of a source text (each message is one string literal).
inline std::vector<std::string> static_assert_messages(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = text.find("static_assert("); at != std::string::npos;
       at = text.find("static_assert(", at + 1)) {
    const size_t open = text.find('"', at);
    const size_t close = text.find('"', open + 1);
    out.push_back(text.substr(open + 1, close - open - 1));
  }
  return out;
}

/// Passes when compiling `request` fails with a compile error at the static_assert saying `message` and at
/// no other of `messages` (all of the template's).
inline ::testing::AssertionResult stops_at_static_assert(const Compiler& compiler,
                                                         const CompileRequest& request,
                                                         const std::vector<std::string>& messages,
                                                         const std::string& message) {
  try {
    compiler.compile(request);
  } catch (const Error& error) {
    if (error.kind() != ErrorKind::compile)
      return ::testing::AssertionFailure() << "not a compile error: " << error.what();
    if (error.detail().find("static assertion failed") == std::string::npos)
      return ::testing::AssertionFailure() << "no static assertion failed:\n" << error.detail();
    for (const std::string& other : messages) {
      const bool fired = error.detail().find(other) != std::string::npos;
      if (fired != (other == message))
        return ::testing::AssertionFailure()
               << "'" << other << "' " << (fired ? "fired" : "did not fire") << ":\n"
               << error.detail();
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "compiled";
}

}  // namespace tunefuzz::test
