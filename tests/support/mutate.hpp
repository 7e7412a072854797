// Malformed documents for the readers' tests: a few edits applied to a real file. Each edit is (position,
// kind): flip a bit of a byte, delete a run, insert a piece of YAML syntax, or truncate.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tunefuzz::test {

using Edits = std::vector<std::pair<size_t, int>>;

/// YAML punctuation and values that readers stumble on.
inline const std::vector<std::string>& yaml_insertions() {
  static const std::vector<std::string> pieces = {":",  "- ", "{",  "}",  "[",         "]", "\n",    "  ",
                                                  "\"", "'",  "&a ", "*a", "!!binary ", "#", "---\n", "? ",
                                                  "|",  ">",  "%",  "\t", "\xff",      "1e999"};
  return pieces;
}

inline std::string mutate(std::string text, const Edits& edits,
                          const std::vector<std::string>& insertions = yaml_insertions()) {
  for (const auto& [position, kind] : edits) {
    if (text.empty()) break;
    const size_t at = position % text.size();
    switch (kind % 4) {
      case 0: text[at] = static_cast<char>(text[at] ^ (1 << (position % 7))); break;
      case 1: text.erase(at, 1 + position % 40); break;
      case 2: text.insert(at, insertions[position % insertions.size()]); break;
      case 3: text.resize(at); break;
    }
  }
  return text;
}

}  // namespace tunefuzz::test
