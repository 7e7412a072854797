#include "tuner/common/error.hpp"

namespace tunefuzz {

std::string SourceLocation::str() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  if (!field.empty()) out += out.empty() ? field : ": " + field;
  return out;
}

namespace {
std::string with_location(const std::string& message, const SourceLocation& where) {
  const std::string prefix = where.str();
  return prefix.empty() ? message : prefix + ": " + message;
}
}  // namespace

Error::Error(ErrorKind kind, const std::string& message, SourceLocation where, std::string detail)
    : std::runtime_error(with_location(message, where)),
      kind_(kind),
      where_(std::move(where)),
      message_(message),
      detail_(std::move(detail)) {}

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::bad_input:
      return "bad_input";
    case ErrorKind::unsupported:
      return "unsupported";
    case ErrorKind::compile:
      return "compile";
    case ErrorKind::launch:
      return "launch";
    case ErrorKind::device_limit:
      return "device_limit";
    case ErrorKind::no_device:
      return "no_device";
    case ErrorKind::mismatch:
      return "mismatch";
    case ErrorKind::io:
      return "io";
    case ErrorKind::internal:
      return "internal";
  }
  return "internal";
}

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::bad_input:
    case ErrorKind::unsupported:
      return 2;
    case ErrorKind::no_device:
      return 3;
    default:
      return 1;
  }
}

}  // namespace tunefuzz
