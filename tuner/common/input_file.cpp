#include "tuner/common/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tuner/common/error.hpp"

namespace tunefuzz {

namespace {

/// "a directory", "a named pipe (fifo)", ... for a file type that is not a regular file.
std::string describe_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe (fifo)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string megabytes(int64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

/// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_input_file(const std::filesystem::path& path, const std::string& what, int64_t byte_limit) {
  const std::string name = "the " + what + " '" + path.string() + "'";
  // O_NONBLOCK: opening a fifo with no writer returns at once instead of waiting for one.
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) {
    const int saved = errno;
    throw Error(ErrorKind::io, "cannot read " + name + ": " + std::strerror(saved));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0)
    throw Error(ErrorKind::io, "cannot read " + name + ": " + std::strerror(errno));
  if (!S_ISREG(status.st_mode))
    throw Error(ErrorKind::bad_input,
                "cannot read " + name + ": it is " + describe_type(status.st_mode) + ", not a regular file");
  if (status.st_size > byte_limit)
    throw Error(ErrorKind::bad_input,
                name + " is " + std::to_string(status.st_size) + " bytes, more than the " +
                    megabytes(byte_limit) + " a " + what + " may hold");
  std::string text;
  text.resize(static_cast<size_t>(status.st_size) + 1);
  size_t filled = 0;
  // Read one byte past the size seen, so a file that grows while it is read is caught at the limit too.
  while (true) {
    if (filled == text.size()) {
      if (static_cast<int64_t>(text.size()) > byte_limit)
        throw Error(ErrorKind::bad_input,
                    name + " grew past the " + megabytes(byte_limit) + " a " + what + " may hold");
      text.resize(std::min<size_t>(text.size() * 2, static_cast<size_t>(byte_limit) + 1));
    }
    const ssize_t got = ::read(file.fd, text.data() + filled, text.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(ErrorKind::io, "cannot read " + name + ": " + std::strerror(errno));
    if (got == 0) break;
    filled += static_cast<size_t>(got);
  }
  text.resize(filled);
  return text;
}

void require_writable_target(const std::filesystem::path& path, const std::string& what) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return;  // absent (or unreachable: creating it will say so)
  if (!S_ISREG(status.st_mode))
    throw Error(ErrorKind::bad_input,
                "refusing to write the " + what + " over " + path.string() + ": it is " +
                    describe_type(status.st_mode) + ", not a regular file",
                {path.string(), 0, 0, ""});
}

}  // namespace tunefuzz
