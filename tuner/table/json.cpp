#include "tuner/table/json.hpp"

#include <cmath>
#include <cstdio>
#include <regex>

namespace tunefuzz {

size_t utf8_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t at) { return at < text.size() ? static_cast<unsigned char>(text[at]) : 0u; };
  const unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  const auto continuation = [&](size_t at, unsigned low = 0x80, unsigned high = 0xBF) {
    return byte(at) >= low && byte(at) <= high;
  };
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(i + 1, low, high) && continuation(i + 2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(i + 1, low, high) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
}

namespace {

// A JSON string is valid UTF-8 whatever the text holds: a byte that is not part of a well-formed sequence
// becomes U+FFFD (a table's problem name read from a file need not be UTF-8).
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8_sequence_length(text, i);
      if (length == 0) {
        out += "\\ufffd";
      } else {
        out.append(text, i, length);
        i += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string scalar(const YAML::Node& node) {
  static const std::regex number(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return quoted(text);  // quoted in the source: a string
  if (text == "true" || text == "false" || text == "null") return text;
  if (text == "~") return "null";
  if (std::regex_match(text, number)) return text;
  return quoted(text);
}

void write(const YAML::Node& node, int depth, std::string& out) {
  const std::string indent(2 * (depth + 1), ' '), close(2 * depth, ' ');
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      if (node.size() == 0) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (const auto& entry : node) {
        out += (first ? "" : ",\n") + indent + quoted(entry.first.Scalar()) + ": ";
        write(entry.second, depth + 1, out);
        first = false;
      }
      out += "\n" + close + "}";
      return;
    }
    case YAML::NodeType::Sequence: {
      if (node.size() == 0) {
        out += "[]";
        return;
      }
      out += "[\n";
      for (size_t i = 0; i < node.size(); ++i) {
        out += (i ? ",\n" : "") + indent;
        write(node[i], depth + 1, out);
      }
      out += "\n" + close + "]";
      return;
    }
    case YAML::NodeType::Scalar:
      out += scalar(node);
      return;
    default:
      out += "null";
      return;
  }
}

}  // namespace

std::string to_json(const YAML::Node& node) {
  std::string out;
  write(node, 0, out);
  return out + "\n";
}

}  // namespace tunefuzz
