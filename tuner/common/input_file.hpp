// The one door through which the tool reads a file a user can hand it (configs, tables, journals,
// reproducers, cache entries): a regular file of bounded size, opened without blocking, so a directory, a
// fifo, a device or an endless file is refused with a message naming the file instead of hanging or eating
// memory. Also the one door to write an output: never over something that is not a regular file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tunefuzz {

/// Size limits of what the tool reads: small documents (configs, reproducers, cache metadata, worker
/// messages) and large ones (results tables, collections, journals, stage summaries).
inline constexpr int64_t kDocumentByteLimit = int64_t{4} << 20;
inline constexpr int64_t kTableByteLimit = int64_t{64} << 20;
/// Compiled images, their PTX and compiler logs.
inline constexpr int64_t kImageByteLimit = int64_t{512} << 20;

/// The bytes of `path`, which must be a regular file of at most `byte_limit` bytes. `what` names it in
/// errors ("config", "results table"). A missing or unreadable file is Error{io}; a directory, fifo,
/// socket or device, or a file over the limit, is Error{bad_input} (exit code 2).
std::string read_input_file(const std::filesystem::path& path, const std::string& what, int64_t byte_limit);

/// Throws Error{bad_input} when `path` exists and is not a regular file (following symbolic links): an
/// output may be created or replaced, never a device, fifo or directory put in its place.
void require_writable_target(const std::filesystem::path& path, const std::string& what);

}  // namespace tunefuzz
