// The campaign journal: one line per finished (or started) step, appended beside the results table
// (<output>.journal), so a campaign killed at any moment can resume without redoing finished work. A line
// is a flow-style YAML map with an `event` key; a line cut short by the kill is ignored on reading.
//
//   {event: campaign, config_sha256: ...}          first line: which config the journal belongs to (again
//                                                  on resuming with a changed config)
//   {event: fuzz_started, id: ...}                 a candidate went to a fuzz worker
//   {event: fuzzed, id: ..., key: ..., result: {...}}  its verdict (FuzzResult), seed, and the digest of
//                                                  the verdict's key (tuner/campaign/verdict_keys.hpp)
//   {event: time_started, problem: ...}            a problem went to a timing worker
//   {event: timed, problem: ..., timing: {...}}    its timings (TimeResult)
//   {event: quarantined, id: ..., stage: ...}      a candidate running each time the campaign died, twice
//   {event: time_interrupted, problem: ..., id: ...} the candidate a problem's timing was on when it died
//   {event: fuzz_run, seed: ..., cases: ...}       `fuzz run`: what decides its rounds (fuzz_campaign.hpp)
//   {event: fuzz_call, call: N, compile_seconds: ...} `fuzz run`: a call began fuzzing; its verdicts carry
//                                                  call_seconds, the seconds since
//   {event: fuzz_call_end, call: N, seconds: ...}  `fuzz run`: the call ended by itself after so long
//   {event: mutants_run, base: ..., cases: ..., seed: ...}  `fuzz mutants`: what decides its verdicts
//                                                  (mutants_campaign.hpp); its `fuzzed` lines are the
//                                                  mutants'
//
// A campaign killed from outside says nothing about the candidates it was running: on resume they run again.
// Only a candidate that was running when the campaign died twice in a row is quarantined (it may be what
// takes the campaign down: a kernel that hangs the machine). Every line is checked on reading; a damaged line
// other than a cut-short last one is an error naming the file and line.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace tunefuzz {

class Journal {
 public:
  /// Starts a new journal at `path` (replacing any), for the config whose text hashes to `config_sha256`.
  static Journal create(const std::filesystem::path& path, const std::string& config_sha256);
  /// Reopens an existing journal to resume; throws Error{bad_input} if it is missing, not a regular file,
  /// damaged (a line other than a cut-short last one) or empty. A journal of an earlier version of the config
  /// (a problem added, say) resumes too: a `campaign` line with the new config's hash is appended.
  static Journal resume(const std::filesystem::path& path, const std::string& config_sha256);
  /// Reads an existing journal, every line checked as resume() does, to look at what it recorded (the
  /// replay of recorded timings); it is not appended to.
  static Journal read_recorded(const std::filesystem::path& path);

  /// Appends one event (thread-safe); the line reaches the file before this returns.
  void record(const YAML::Node& event);

  /// The last `fuzzed` event of a candidate, from the journal as it was when reopened. With a `key` (the
  /// digest of the verdict's key), the last one filed under that key, or else under none (a journal written
  /// before verdicts carried their key): a verdict of other cases or another seed is not this step's.
  std::optional<YAML::Node> fuzzed(const std::string& id, const std::string& key = "") const;
  std::optional<YAML::Node> timed(const std::string& problem) const;
  /// Candidates and problems that were started but never finished before the campaign died, with how many
  /// campaigns in a row died while they ran.
  std::map<std::string, int> interrupted_fuzz() const;
  std::map<std::string, int> interrupted_time() const;
  /// The candidates named by `time_interrupted` events of `problem`, oldest first.
  std::vector<std::string> time_interruptions(const std::string& problem) const;
  /// Candidates quarantined by an earlier resume.
  std::set<std::string> quarantined() const;
  /// Every event of the journal as it was when reopened, oldest first.
  const std::vector<YAML::Node>& events() const { return previous_; }
  /// The line of the file event `index` of events() was read from.
  int line_of(size_t index) const { return lines_.at(index); }

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit Journal(std::filesystem::path path) : path_(std::move(path)) {}
  void read();

  std::filesystem::path path_;
  std::vector<YAML::Node> previous_;
  std::vector<int> lines_;  ///< of each event in previous_
  /// `fuzzed` events: candidate id → key digest ("" when the event has none) → index in previous_ (the last).
  std::map<std::string, std::map<std::string, size_t>> fuzzed_;
  uintmax_t whole_lines_bytes_ = 0;  ///< the file's length without a cut-short last line
  bool ends_with_newline_ = true;    ///< of those whole lines
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
};

/// `results/h100.yaml` → `results/h100.journal`.
std::filesystem::path journal_path(const std::filesystem::path& table);

/// For --resume: throws Error{bad_input} unless `journal` holds a line of `run`'s event (`fuzz_run`,
/// `mutants_run`) with each of `run`'s fields equal, naming the journal, the line and the first field that
/// differs; `writer` names the command that writes such lines, for the message.
void require_same_run(const Journal& journal, const YAML::Node& run, const std::string& writer);

/// The journal of a run that `--resume` carries on (`fuzz run`, `fuzz mutants`): with `resume` and a journal
/// at `path`, that one, reopened once require_same_run accepts its `run` line; else a new one whose first
/// lines are the campaign's and `run`.
Journal open_run_journal(const std::filesystem::path& path, const std::string& config_sha256,
                         const YAML::Node& run, const std::string& writer, bool resume);

}  // namespace tunefuzz
