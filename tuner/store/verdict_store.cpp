#include "tuner/store/verdict_store.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/common/error.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

namespace {

constexpr const char* kChecksum = "# sha256: ";
constexpr const char* kEnd = "# end\n";

YAML::Node key_node(const VerdictKey& key) {
  YAML::Node node(YAML::NodeType::Map);
  for (const auto& [name, value] : key) node[name] = value;
  return node;
}

// The entry's body: its kind, key and verdict, one YAML document.
std::string body_of(VerdictKind kind, const VerdictKey& key, const YAML::Node& verdict) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << to_string(kind);
  out << YAML::Key << "key" << YAML::Value << key_node(key);
  out << YAML::Key << "verdict" << YAML::Value << verdict << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// The body of an entry's text after its checks: the end line, then the checksum over the body.
std::string checked_body(const std::string& text) {
  if (!text.ends_with(kEnd)) throw Error(ErrorKind::bad_input, "no end line (cut short)");
  const std::string head = text.substr(0, text.size() - std::string(kEnd).size());
  const size_t line = head.rfind(kChecksum);
  if (line == std::string::npos) throw Error(ErrorKind::bad_input, "no checksum line");
  const std::string body = head.substr(0, line);
  if (head.substr(line + std::string(kChecksum).size()) != sha256_hex(body) + "\n")
    throw Error(ErrorKind::bad_input, "checksum mismatch");
  return body;
}

}  // namespace

const char* to_string(VerdictKind kind) {
  static const char* const names[] = {"fuzz", "timing", "sanitizer", "screen",
                                      "baseline"};  // the order of VerdictKind
  return names[static_cast<size_t>(kind)];
}

void print_damage(const std::string& why) { std::fprintf(stderr, "%s\n", why.c_str()); }

std::string verdict_digest(VerdictKind kind, const VerdictKey& key) {
  Hasher hasher;
  hasher.field(to_string(kind));
  for (const auto& [name, value] : key) hasher.field(name).field(value);
  return hasher.hex();
}

VerdictStore::VerdictStore(fs::path directory) : directory_(std::move(directory)) {}

fs::path VerdictStore::default_directory() {
  if (const char* dir = std::getenv("TUNEFUZZ_VERDICT_DIR"); dir && *dir) return dir;
  return KernelCache::default_directory() / "verdicts";
}

fs::path VerdictStore::entry_path(VerdictKind kind, const VerdictKey& key) const {
  return directory_ / to_string(kind) / (verdict_digest(kind, key) + ".yaml");
}

std::optional<YAML::Node> VerdictStore::load(VerdictKind kind, const VerdictKey& key,
                                             const std::function<void(const std::string&)>& on_damage) const {
  const fs::path path = entry_path(kind, key);
  std::error_code error;
  if (!fs::exists(fs::symlink_status(path, error))) return std::nullopt;
  try {
    const std::string text = read_input_file(path, "verdict store entry", kTableByteLimit);
    const YAML::Node entry = load_yaml_text(checked_body(text), path.string(), kDocumentNodeLimit);
    if (!entry.IsMap() || !entry["kind"] || entry["kind"].Scalar() != to_string(kind) || !entry["key"] ||
        YAML::Dump(entry["key"]) != YAML::Dump(key_node(key)) || !entry["verdict"])
      throw Error(ErrorKind::bad_input, "it holds another key's verdict");
    return entry["verdict"];
  } catch (const Error& e) {
    if (on_damage) on_damage("verdict store entry " + path.string() + " is damaged (" + e.message() + "); redoing it");
  } catch (const YAML::Exception& e) {
    if (on_damage) on_damage("verdict store entry " + path.string() + " is damaged (" + e.msg + "); redoing it");
  }
  return std::nullopt;
}

void VerdictStore::store(VerdictKind kind, const VerdictKey& key, const YAML::Node& verdict) const {
  const fs::path path = entry_path(kind, key);
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (fs::exists(status) && !fs::is_regular_file(status)) fs::remove_all(path, error);  // repairs the entry
  const std::string body = body_of(kind, key, verdict);
  write_file_atomically(path, body + kChecksum + sha256_hex(body) + "\n" + kEnd);
}

VerdictStore::KeyLock::KeyLock(const VerdictStore& store, VerdictKind kind, const VerdictKey& key)
    : lock_(fs::path(store.entry_path(kind, key)).replace_extension(".lock"), "verdict store lock") {}

}  // namespace tunefuzz
