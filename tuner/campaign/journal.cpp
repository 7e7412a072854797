#include "tuner/campaign/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include "tuner/common/error.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

fs::path journal_path(const fs::path& table) {
  fs::path out = table;
  out.replace_extension(".journal");
  return out;
}

Journal Journal::create(const fs::path& path, const std::string& config_sha256) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::trunc).flush();
  Journal journal(path);
  YAML::Node start;
  start["event"] = "campaign";
  start["config_sha256"] = config_sha256;
  journal.record(start);
  return journal;
}

Journal Journal::resume(const fs::path& path, const std::string& config_sha256) {
  if (!fs::exists(path))
    throw Error(ErrorKind::bad_input, "nothing to resume: no journal at " + path.string() +
                                          " (run without --resume to start the campaign)");
  Journal journal(path);
  journal.read();
  if (journal.previous_.empty() || !journal.previous_.front()["config_sha256"] ||
      journal.previous_.front()["config_sha256"].as<std::string>() != config_sha256)
    throw Error(ErrorKind::bad_input,
                "the journal " + path.string() +
                    " was written for a different config; run without --resume to start over");
  return journal;
}

void Journal::read() {
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      YAML::Node event = YAML::Load(line);
      if (event.IsMap() && event["event"]) previous_.push_back(event);
    } catch (const YAML::Exception&) {
      // the last line of a campaign killed while writing it: that step did not finish
    }
  }
}

void Journal::record(const YAML::Node& event) {
  YAML::Emitter out;
  out.SetStringFormat(YAML::DoubleQuoted);  // one line whatever the text holds
  out.SetDoublePrecision(17);
  out << YAML::Flow << event;
  const std::string line = std::string(out.c_str()) + "\n";
  std::lock_guard lock(*mutex_);
  // One write(2) per line on an O_APPEND descriptor: a kill leaves whole lines or one cut-short last line.
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) throw Error(ErrorKind::io, "cannot append to the journal " + path_.string());
  const ssize_t written = ::write(fd, line.data(), line.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    throw Error(ErrorKind::io, "short write to the journal " + path_.string());
}

namespace {
template <class Pick>
std::optional<YAML::Node> last_event(const std::vector<YAML::Node>& events, const char* kind, Pick matches) {
  std::optional<YAML::Node> found;
  for (const YAML::Node& e : events)
    if (e["event"].as<std::string>() == kind && matches(e)) found = e;
  return found;
}

std::set<std::string> started_not_finished(const std::vector<YAML::Node>& events, const char* started,
                                           const char* finished, const char* key) {
  std::set<std::string> open;
  for (const YAML::Node& e : events) {
    const std::string kind = e["event"].as<std::string>();
    if (!e[key]) continue;
    if (kind == started) open.insert(e[key].as<std::string>());
    if (kind == finished) open.erase(e[key].as<std::string>());
  }
  return open;
}
}  // namespace

std::optional<YAML::Node> Journal::fuzzed(const std::string& id) const {
  return last_event(previous_, "fuzzed",
                    [&](const YAML::Node& e) { return e["id"].as<std::string>() == id; });
}

std::optional<YAML::Node> Journal::timed(const std::string& problem) const {
  return last_event(previous_, "timed",
                    [&](const YAML::Node& e) { return e["problem"].as<std::string>() == problem; });
}

std::set<std::string> Journal::interrupted_fuzz() const {
  return started_not_finished(previous_, "fuzz_started", "fuzzed", "id");
}

std::set<std::string> Journal::interrupted_time() const {
  return started_not_finished(previous_, "time_started", "timed", "problem");
}

std::set<std::string> Journal::quarantined() const {
  std::set<std::string> out;
  for (const YAML::Node& e : previous_)
    if (e["event"].as<std::string>() == "quarantined" && e["id"]) out.insert(e["id"].as<std::string>());
  return out;
}

}  // namespace tunefuzz
