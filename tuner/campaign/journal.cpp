#include "tuner/campaign/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "tuner/common/error.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"
#include "tuner/worker/protocol.hpp"

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
  // Lines appended after a cut-short one would join it: it goes (its step did not finish).
  if (journal.whole_lines_bytes_ < fs::file_size(path)) fs::resize_file(path, journal.whole_lines_bytes_);
  if (!journal.ends_with_newline_) std::ofstream(path, std::ios::app) << '\n';
  if (journal.previous_.empty() || journal.previous_.front()["event"].Scalar() != "campaign" ||
      !journal.previous_.front()["config_sha256"])
    throw Error(ErrorKind::bad_input,
                "the journal holds no campaign line (it is empty, or was not written by tune run); run "
                "without --resume to start over",
                {path.string(), 1, 0, ""});
  // A changed config (a problem added, a template's space widened) resumes too: its steps are what the
  // stages look up by candidate and problem, and a timing is reused only for the same candidates.
  if (journal.previous_.front()["config_sha256"].Scalar() != config_sha256) {
    YAML::Node start;
    start["event"] = "campaign";
    start["config_sha256"] = config_sha256;
    journal.record(start);
  }
  return journal;
}

Journal Journal::read_recorded(const fs::path& path) {
  Journal journal(path);
  journal.read();
  return journal;
}

namespace {

/// Checks one event as the stages will read it, so that resuming never meets a wrong type later; throws
/// Error{bad_input} naming the field.
void check_event(const YAML::Node& event) {
  const auto fail = [](const std::string& field, const std::string& why) {
    throw Error(ErrorKind::bad_input, why, {"", 0, 0, field});
  };
  if (!event.IsMap()) fail("", "expected a map with an 'event' key");
  if (!event["event"] || !event["event"].IsScalar()) fail("event", "expected the event's kind");
  for (const char* key : {"id", "problem", "config_sha256"})
    if (event[key] && !event[key].IsScalar()) fail(key, "expected a string");
  const std::string kind = event["event"].Scalar();
  for (const char* list : {"candidates", "quarantined"}) {
    if (!event[list]) continue;
    if (!event[list].IsSequence()) fail(list, "expected a list of candidate ids");
    for (const YAML::Node& item : event[list])
      if (!item.IsScalar()) fail(list, "expected a list of candidate ids");
  }
  const auto number = [&](const char* key, bool required) {
    if (!event[key]) {
      if (required) fail(key, "missing");
      return;
    }
    double value = -1;
    if (!event[key].IsScalar() || !YAML::convert<double>::decode(event[key], value) || !(value >= 0) ||
        value > 1e12)
      fail(key, "expected a number of at least 0");
  };
  if (event["key"] && !event["key"].IsScalar()) fail("key", "expected a string");
  number("call_seconds", false);
  if (kind == "fuzz_call") {
    number("call", true);
    number("compile_seconds", true);
  }
  if (kind == "fuzz_call_end") {
    number("call", true);
    number("seconds", true);
  }
  try {
    if (kind == "fuzzed") {
      if (!event["id"]) fail("id", "missing");
      event["seed"].as<uint64_t>();
      fuzz_result_from_yaml(event["result"]);
    }
    if (kind == "timed") {
      if (!event["problem"]) fail("problem", "missing");
      time_result_from_yaml(event["timing"]);
    }
  } catch (const YAML::Exception& e) {
    fail(kind == "fuzzed" ? "result" : "timing", "wrong type: " + e.msg);
  } catch (const Error& e) {
    const std::string inner = e.where().field;
    fail((kind == "fuzzed" ? "result" : "timing") + (inner.empty() ? "" : "." + inner), e.message());
  }
}

}  // namespace

void Journal::read() {
  const std::string text = read_input_file(path_, "journal", kTableByteLimit);
  whole_lines_bytes_ = text.size();
  ends_with_newline_ = text.empty() || text.back() == '\n';
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    const size_t newline = text.find('\n', start);
    const bool last = newline == std::string::npos;
    const std::string content = text.substr(start, last ? std::string::npos : newline - start);
    start = last ? text.size() : newline + 1;
    if (content.empty()) continue;
    try {
      YAML::Node event = load_yaml_text(content, path_.string(), kDocumentNodeLimit);
      check_event(event);
      if (event["event"].Scalar() == "fuzzed")
        fuzzed_[event["id"].Scalar()][event["key"] ? event["key"].Scalar() : ""] = previous_.size();
      previous_.push_back(event);
      lines_.push_back(line);
    } catch (const Error& e) {
      // A kill leaves at most one cut-short line, the last, without its newline: that step did not finish.
      if (last) {
        whole_lines_bytes_ = start - content.size();
        ends_with_newline_ = true;
        break;
      }
      const std::string field = e.where().field;
      throw Error(ErrorKind::bad_input, "damaged journal line: " + e.message(),
                  {path_.string(), line, e.where().line > 1 ? 0 : e.where().column, field});
    }
  }
}

namespace {

// `node` with every map and sequence in flow style: a node read from a block-style file (a verdict store
// entry) keeps its style, which the emitter's Flow does not override, and would take several lines.
YAML::Node in_flow(const YAML::Node& node) {
  YAML::Node copy = YAML::Clone(node);
  const auto flow = [](auto& self, YAML::Node n) -> void {
    if (!n.IsMap() && !n.IsSequence()) return;
    n.SetStyle(YAML::EmitterStyle::Flow);
    for (auto it = n.begin(); it != n.end(); ++it) self(self, n.IsMap() ? it->second : *it);
  };
  flow(flow, copy);
  return copy;
}

}  // namespace

void Journal::record(const YAML::Node& event) {
  YAML::Emitter out;
  out.SetStringFormat(YAML::DoubleQuoted);  // one line whatever the text holds
  out.SetDoublePrecision(17);
  out << YAML::Flow << in_flow(event);
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

// For each key started but not finished: how many times in a row it was started without finishing, i.e.
// how many campaigns died while it ran.
std::map<std::string, int> started_not_finished(const std::vector<YAML::Node>& events, const char* started,
                                                const char* finished, const char* key) {
  std::map<std::string, int> open;
  for (const YAML::Node& e : events) {
    const std::string kind = e["event"].as<std::string>();
    if (!e[key]) continue;
    if (kind == started) ++open[e[key].as<std::string>()];
    if (kind == finished) open.erase(e[key].as<std::string>());
  }
  return open;
}
}  // namespace

std::optional<YAML::Node> Journal::fuzzed(const std::string& id, const std::string& key) const {
  const auto by_key = fuzzed_.find(id);
  if (by_key == fuzzed_.end()) return std::nullopt;
  if (key.empty()) {
    size_t last = 0;
    for (const auto& [digest, index] : by_key->second) last = std::max(last, index);
    return previous_[last];
  }
  for (const std::string& digest : {key, std::string()})
    if (const auto it = by_key->second.find(digest); it != by_key->second.end()) return previous_[it->second];
  return std::nullopt;
}

std::optional<YAML::Node> Journal::timed(const std::string& problem) const {
  return last_event(previous_, "timed",
                    [&](const YAML::Node& e) { return e["problem"].as<std::string>() == problem; });
}

std::map<std::string, int> Journal::interrupted_fuzz() const {
  return started_not_finished(previous_, "fuzz_started", "fuzzed", "id");
}

std::map<std::string, int> Journal::interrupted_time() const {
  return started_not_finished(previous_, "time_started", "timed", "problem");
}

std::set<std::string> Journal::quarantined() const {
  std::set<std::string> out;
  for (const YAML::Node& e : previous_)
    if (e["event"].as<std::string>() == "quarantined" && e["id"]) out.insert(e["id"].as<std::string>());
  return out;
}

std::vector<std::string> Journal::time_interruptions(const std::string& problem) const {
  std::vector<std::string> out;
  for (const YAML::Node& e : previous_)
    if (e["event"].as<std::string>() == "time_interrupted" && e["problem"] && e["id"] &&
        e["problem"].as<std::string>() == problem)
      out.push_back(e["id"].as<std::string>());
  return out;
}

void require_same_run(const Journal& journal, const YAML::Node& run, const std::string& writer) {
  const std::string kind = run["event"].Scalar();
  const auto& events = journal.events();
  const auto found = std::find_if(events.begin(), events.end(),
                                  [&](const YAML::Node& e) { return e["event"].Scalar() == kind; });
  if (found == events.end())
    throw Error(ErrorKind::bad_input,
                "--resume: the journal holds no " + kind + " line (it was not written by " + writer +
                    "); run without --resume to start over",
                {journal.path().string(), 0, 0, kind});
  const int line = journal.line_of(static_cast<size_t>(found - events.begin()));
  for (const auto& field : run) {
    const std::string name = field.first.Scalar();
    const YAML::Node recorded = (*found)[name];
    const std::string was = recorded && recorded.IsScalar() ? recorded.Scalar() : "(none)";
    if (was != field.second.Scalar())
      throw Error(ErrorKind::bad_input,
                  "--resume: the journal's campaign was run with " + name + " '" + was +
                      "', this one with '" + field.second.Scalar() +
                      "'; carry it on with the same, or run without --resume to start over",
                  {journal.path().string(), line, 0, name});
  }
}

Journal open_run_journal(const fs::path& path, const std::string& config_sha256, const YAML::Node& run,
                         const std::string& writer, bool resume) {
  if (resume && fs::exists(path)) {
    require_same_run(Journal::read_recorded(path), run, writer);
    std::fprintf(stderr, "resuming from %s\n", path.c_str());
    return Journal::resume(path, config_sha256);
  }
  if (resume) std::fprintf(stderr, "nothing to resume at %s: starting afresh\n", path.c_str());
  Journal journal = Journal::create(path, config_sha256);
  journal.record(run);
  return journal;
}

}  // namespace tunefuzz
