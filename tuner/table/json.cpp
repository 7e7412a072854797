#include "tuner/table/json.hpp"

#include <cmath>
#include <cstdio>
#include <regex>

namespace tunefuzz {

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
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
