#include "runtime/backend/kernel_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>
#include <cerrno>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tuner/common/hash.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& data) {
  static std::atomic<unsigned> counter{0};
  // A rename would put a regular file in place of a device (`-o /dev/full`), fifo or directory.
  require_writable_target(path, "output");
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path temporary =
      path.string() + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) throw Error(ErrorKind::io, "cannot write " + temporary.string());
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary);
    throw Error(ErrorKind::io,
                "cannot move " + temporary.string() + " to " + path.string() + ": " + error.message());
  }
}

std::string read_whole_file(const fs::path& path) {
  return read_input_file(path, "file", kImageByteLimit);
}

namespace {

// The metadata's last line: a checksum of everything before it, so an edited register or spill count is
// caught as damage like an edited image.
constexpr const char* kMetadataChecksum = "# metadata_sha256: ";

YAML::Node load_metadata(const fs::path& path) {
  const std::string text = read_input_file(path, "cache metadata", kDocumentByteLimit);
  const size_t last = text.rfind(kMetadataChecksum);
  const std::string body = last == std::string::npos ? "" : text.substr(0, last);
  const std::string stated = last == std::string::npos ? "" : text.substr(last + std::strlen(kMetadataChecksum));
  if (last == std::string::npos || stated != sha256_hex(body) + "\n")
    throw Error(ErrorKind::bad_input, "metadata checksum");
  return load_yaml_text(body, path.string(), kDocumentNodeLimit);
}

}  // namespace

KernelCache::KernelCache(fs::path directory) : directory_(std::move(directory)) {}

fs::path KernelCache::default_directory() {
  if (const char* dir = std::getenv("TUNEFUZZ_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "tunefuzz";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "tunefuzz";
  return fs::temp_directory_path() / "tunefuzz-cache";
}

fs::path KernelCache::image_path(const std::string& key) const {
  return directory_ / (key + ".cubin");
}

FileLock::FileLock(const fs::path& path, const std::string& what) {
  fs::create_directories(path.parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorKind::io, "cannot open the " + what + " " + path.string());
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) {
      ::close(fd_);
      throw Error(ErrorKind::io, "cannot lock " + path.string());
    }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

KernelCache::KeyLock::KeyLock(const KernelCache& cache, const std::string& key)
    : lock_(cache.directory() / (key + ".lock"), "cache lock") {}

std::optional<CompiledKernel> KernelCache::load(
    const std::string& key, const std::function<void(const std::string&)>& on_damage) const {
  const fs::path meta_path = directory_ / (key + ".yaml");
  if (!fs::exists(meta_path)) return std::nullopt;
  const auto damaged = [&](const std::string& why) -> std::optional<CompiledKernel> {
    if (on_damage) on_damage("cache entry " + key.substr(0, 16) + "… is damaged (" + why + "); recompiling");
    return std::nullopt;
  };
  try {
    const YAML::Node meta = load_metadata(meta_path);
    CompiledKernel kernel;
    kernel.key = meta["key"].as<std::string>();
    if (kernel.key != key) return damaged("it names another key");
    kernel.image = read_whole_file(image_path(key));
    kernel.ptx = read_whole_file(directory_ / (key + ".ptx"));
    if (sha256_hex(kernel.image) != meta["image_sha256"].as<std::string>()) return damaged("image checksum");
    if (sha256_hex(kernel.ptx) != meta["ptx_sha256"].as<std::string>()) return damaged("PTX checksum");
    kernel.log = read_whole_file(directory_ / (key + ".log"));
    if (sha256_hex(kernel.log) != meta["log_sha256"].as<std::string>()) return damaged("log checksum");
    kernel.compile_seconds = meta["compile_seconds"].as<double>();
    for (const auto& entry : meta["resources"]) {
      KernelResources r;
      r.registers = entry.second["registers"].as<int>();
      r.stack_frame_bytes = entry.second["stack_frame_bytes"].as<int64_t>();
      r.spill_store_bytes = entry.second["spill_store_bytes"].as<int64_t>();
      r.spill_load_bytes = entry.second["spill_load_bytes"].as<int64_t>();
      r.static_shared_bytes = entry.second["static_shared_bytes"].as<int64_t>();
      // AMD-only figures, absent from entries written before the hiprtc backend (NVIDIA reports neither).
      r.scalar_registers = entry.second["scalar_registers"].as<int>(0);
      r.spilled_registers = entry.second["spilled_registers"].as<int64_t>(0);
      kernel.resources[entry.first.as<std::string>()] = r;
    }
    kernel.from_cache = true;
    return kernel;
  } catch (const YAML::Exception& e) {
    return damaged(std::string("metadata: ") + e.what());
  } catch (const Error& e) {
    return damaged(e.message());
  }
}

bool KernelCache::contains(const std::string& key) const {
  std::error_code error;
  return fs::exists(directory_ / (key + ".yaml"), error);
}

std::optional<double> KernelCache::compile_seconds_of(const std::string& shape) const {
  std::ifstream in(directory_ / "compile-seconds" / shape);
  double seconds = 0;
  if (in >> seconds && std::isfinite(seconds) && seconds >= 0) return seconds;
  return std::nullopt;  // none recorded, or not a number: no hint
}

void KernelCache::record_compile_seconds(const std::string& shape, double seconds) const {
  try {
    fs::create_directories(directory_ / "compile-seconds");
    write_file_atomically(directory_ / "compile-seconds" / shape, std::to_string(seconds) + "\n");
  } catch (const std::exception&) {
    // a hint that cannot be written is a hint missing next time, nothing more
  }
}

void KernelCache::store(const CompiledKernel& kernel) const {
  // Something else where an entry's file belongs (a directory put in place of the image) is cleared, so a
  // damaged entry is repaired instead of being recompiled on every run.
  for (const char* extension : {".cubin", ".ptx", ".log", ".yaml"}) {
    const fs::path file = directory_ / (kernel.key + extension);
    std::error_code error;
    if (fs::exists(fs::symlink_status(file, error)) && !fs::is_regular_file(fs::symlink_status(file, error)))
      fs::remove_all(file, error);
  }
  write_file_atomically(image_path(kernel.key), kernel.image);
  write_file_atomically(directory_ / (kernel.key + ".ptx"), kernel.ptx);
  write_file_atomically(directory_ / (kernel.key + ".log"), kernel.log);
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "key" << YAML::Value << kernel.key;
  out << YAML::Key << "image_sha256" << YAML::Value << sha256_hex(kernel.image);
  out << YAML::Key << "ptx_sha256" << YAML::Value << sha256_hex(kernel.ptx);
  out << YAML::Key << "log_sha256" << YAML::Value << sha256_hex(kernel.log);
  out << YAML::Key << "compile_seconds" << YAML::Value << kernel.compile_seconds;
  out << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, r] : kernel.resources) {
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "registers" << YAML::Value << r.registers;
    out << YAML::Key << "stack_frame_bytes" << YAML::Value << r.stack_frame_bytes;
    out << YAML::Key << "spill_store_bytes" << YAML::Value << r.spill_store_bytes;
    out << YAML::Key << "spill_load_bytes" << YAML::Value << r.spill_load_bytes;
    out << YAML::Key << "static_shared_bytes" << YAML::Value << r.static_shared_bytes;
    out << YAML::Key << "scalar_registers" << YAML::Value << r.scalar_registers;
    out << YAML::Key << "spilled_registers" << YAML::Value << r.spilled_registers;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
  const std::string body = std::string(out.c_str()) + "\n";
  write_file_atomically(directory_ / (kernel.key + ".yaml"),
                        body + std::string(kMetadataChecksum) + sha256_hex(body) + "\n");
}

}  // namespace tunefuzz
