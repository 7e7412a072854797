// The one error type of tunefuzz: every library function that fails throws tunefuzz::Error, carrying a
// kind (what went wrong), where (a file:line:field of a config, when the input is to blame) and a detail
// (a compiler log, a driver message). Executables map the kind to an exit code; nothing in a library exits.
// Part of the runtime's public API (installed as <tunefuzz/error.hpp>, C++17).
#pragma once

#include <stdexcept>
#include <string>

namespace tunefuzz {

enum class ErrorKind {
  bad_input,     ///< a config, table or reproducer that is malformed (exit code 2)
  unsupported,   ///< a request the tool or template refuses cleanly (exit code 2)
  compile,       ///< a kernel failed to compile
  launch,        ///< a kernel or library call failed on the device
  device_limit,  ///< a resource limit of the device was exceeded
  no_device,     ///< no GPU or driver could be used
  mismatch,      ///< a result disagreed with its reference
  io,            ///< a file could not be read or written
  internal,      ///< a broken invariant of tunefuzz itself
};

/// Where in an input file a problem sits. `line` and `column` are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;  ///< dotted path of the offending field, e.g. `problems[2].m`

  /// `file:line:column: field` with the unknown parts left out.
  std::string str() const;
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, SourceLocation where = {}, std::string detail = {});

  ErrorKind kind() const { return kind_; }
  const SourceLocation& where() const { return where_; }
  /// Extra text too long for the message: a compiler log, a worker's stderr.
  const std::string& detail() const { return detail_; }
  /// The message without the location prefix.
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_;
  SourceLocation where_;
  std::string message_;
  std::string detail_;
};

/// Stable lowercase name of a kind (`bad_input`, ...), used in logs and tables.
const char* to_string(ErrorKind kind);

/// The exit code an executable returns for an error of this kind: 2 for bad input or a refused
/// request, 3 when no GPU could be used, 1 otherwise.
int exit_code_for(ErrorKind kind);

}  // namespace tunefuzz
