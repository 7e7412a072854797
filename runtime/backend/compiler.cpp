#include "runtime/backend/compiler.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "tuner/common/hash.hpp"

namespace tunefuzz {

namespace {
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read template file " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

KernelSource KernelSource::load(const std::filesystem::path& directory, const std::string& file) {
  KernelSource source;
  source.file_name = file;
  source.text = read_file(directory / file);
  // The headers the source includes with quotes, and theirs, found beside it: what the compiler sees, and no
  // more, so a header only one template uses does not change the hash (and the tables) of the others.
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::map<std::string, std::string> headers;
  std::vector<std::string> pending = {source.text};
  while (!pending.empty()) {
    const std::string text = std::move(pending.back());
    pending.pop_back();
    std::istringstream lines(text);
    std::string line;
    std::smatch m;
    while (std::getline(lines, line))
      if (std::regex_search(line, m, include) && !headers.count(m[1].str())) {
        const std::filesystem::path path = directory / m[1].str();
        if (!std::filesystem::is_regular_file(path)) continue;  // left for the compiler to report
        pending.push_back(headers[m[1].str()] = read_file(path));
      }
  }
  for (auto& [name, text] : headers) source.headers.emplace_back(name, std::move(text));
  return source;
}

std::string KernelSource::hash() const {
  Hasher h;
  h.field(file_name).field(text);
  for (const auto& [name, header] : headers) h.field(name).field(header);
  return h.hex();
}

std::map<std::string, KernelResources> parse_ptxas_resources(const std::string& log) {
  static const std::regex function(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, KernelResources> out;
  std::string current;
  std::istringstream lines(log);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, function)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, frame)) {
      out[current].stack_frame_bytes = std::stoll(m[1]);
      out[current].spill_store_bytes = std::stoll(m[2]);
      out[current].spill_load_bytes = std::stoll(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      out[current].registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) out[current].static_shared_bytes = std::stoll(m[1]);
      current.clear();  // "Used ..." closes a function's report
    }
  }
  return out;
}

std::string request_key(const char* key_format, const std::string& version,
                        const std::vector<std::string>& options, const CompileRequest& request) {
  Hasher h;
  h.field(key_format).field(version).field(request.arch);
  for (const auto& option : options) h.field(option);
  h.field(request.source->file_name).field(request.source->text);
  for (const auto& [name, text] : request.source->headers) h.field(name).field(text);
  for (const Define& d : request.defines) h.field(d.name).field(std::to_string(d.value));
  return h.hex();
}

std::vector<std::string> define_options(const std::vector<Define>& defines) {
  static const std::regex identifier("[A-Z_][A-Z0-9_]*");
  std::vector<std::string> options;
  for (const Define& d : defines) {
    if (!std::regex_match(d.name, identifier))
      throw Error(ErrorKind::internal, "refusing define with name '" + d.name + "'");
    options.push_back("-D" + d.name + "=" + std::to_string(d.value));
  }
  return options;
}

std::string without_nuls(std::string log) {
  std::erase(log, '\0');
  return log;
}

}  // namespace tunefuzz
