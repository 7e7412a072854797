#include "tuner/campaign/confirm_stage.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>

#include "fuzz/triage.hpp"
#include "runtime/dispatch/results_reader.hpp"
#include "tuner/common/error.hpp"

namespace tunefuzz {

bool fuzz_is_screened(const Config& config) {
  const int64_t screen = config.budgets.fuzz_screen_cases;
  return screen > 0 && screen < config.budgets.fuzz_cases;
}

uint64_t confirmation_seed(uint64_t campaign_seed) { return campaign_seed ^ 0x9e3779b97f4a7c15ull; }

void check_winners(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed,
                   const WinnerCheck& confirm, const WinnerCheck& sanitize) {
  std::set<std::string> sanitized;  // winners that passed every tool
  std::vector<std::string> tools;
  for (bool again = true; again;) {
    std::set<std::string> before;  // the winners both checks were given
    for (const ProblemTiming& t : timings)
      if (const TimedEntry* w = t.winner()) before.insert(w->id);
    std::vector<ProblemTiming> sanitized_timings = timings;
    std::vector<FuzzedCandidate> sanitized_fuzzed = fuzzed;
    std::future<void> sanitizing;
    if (sanitize)
      sanitizing = std::async(std::launch::async, [&] { sanitize(sanitized_timings, sanitized_fuzzed); });
    if (confirm) confirm(timings, fuzzed);
    if (sanitizing.valid()) sanitizing.get();
    for (size_t i = 0; sanitize && i < timings.size(); ++i) {
      const ProblemTiming& checked = sanitized_timings[i];
      std::map<std::string, const TimedEntry*> verdicts;
      for (const TimedEntry& e : checked.entries) verdicts[e.id] = &e;
      for (TimedEntry& e : timings[i].entries) {
        const auto v = verdicts.find(e.id);
        if (e.status != "timed" || v == verdicts.end() || v->second->status != "sanitizer") continue;
        e.status = v->second->status;
        e.message = v->second->message;
      }
      if (const TimedEntry* w = checked.winner()) {
        sanitized.insert(w->id);
        tools = checked.sanitizers;
      }
    }
    std::map<std::string, const FuzzedCandidate*> by_id;
    for (const FuzzedCandidate& f : fuzzed) by_id[f.candidate.id()] = &f;
    again = false;
    for (ProblemTiming& t : timings) {
      const TimedEntry* w = t.winner();
      if (!w) continue;
      const auto f = by_id.find(w->id);
      const bool confirmed = !confirm || (f != by_id.end() && f->second->confirmed);
      const bool sane = !sanitize || sanitized.count(w->id);
      // A winner both checks were given that is still unjudged would be given to them forever.
      if ((!confirmed || !sane) && before.count(w->id))
        throw Error(ErrorKind::internal, "the winner " + w->id + " was left unjudged by the " +
                                             (confirmed ? "sanitizers" : "confirmation"));
      again = again || !confirmed || !sane;
      if (sanitize && sane) t.sanitizers = tools;
    }
  }
}

void TwinPrefetch::add(const Candidate& candidate) noexcept {
  try {
    const std::lock_guard lock(mutex_);
    if (!asked_.insert(candidate.id()).second) return;
    running_.push_back(std::async(std::launch::async, [this, candidate] {
      // At the lowest priority: the cores the time stage's checks leave idle, not those they want (whether
      // the twins slow the time stage is not settled: results/campaign-h200-5fbbf21/).
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
      slots_.acquire();
      try {
        compile_({candidate});
      } catch (const std::exception&) {
        // the confirmation compiles it again and says why it failed
      }
      slots_.release();
    }));
  } catch (const std::exception&) {
    // no thread to be had: the confirmation compiles the twin itself
  }
}

std::vector<std::string> table_winners(const std::filesystem::path& table) {
  std::vector<std::string> ids;
  std::error_code error;
  if (!std::filesystem::is_regular_file(table, error)) return ids;
  try {
    for (const TableRow& row : read_results_table(table).rows)
      if (row.winner) ids.push_back(row.winner->id);
  } catch (const Error&) {
    ids.clear();
  }
  return ids;
}

void TwinPrefetch::wait() {
  std::vector<std::future<void>> running;
  {
    const std::lock_guard lock(mutex_);
    running.swap(running_);
  }
  for (auto& f : running) f.wait();
}

namespace {

// The winners no confirmation has judged yet, each once.
std::vector<std::string> unconfirmed_winners(const std::vector<ProblemTiming>& timings,
                                             const std::map<std::string, FuzzedCandidate*>& fuzzed) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const ProblemTiming& t : timings) {
    const TimedEntry* w = t.winner();
    if (!w || !seen.insert(w->id).second) continue;
    const auto f = fuzzed.find(w->id);
    if (f == fuzzed.end()) throw Error(ErrorKind::internal, "the winner " + w->id + " is not among the fuzzed candidates");
    if (!f->second->confirmed) out.push_back(w->id);
  }
  return out;
}

// Demotes every timed entry of `id` (status `fuzz`, `why` as the message); returns how many.
int64_t demote(std::vector<ProblemTiming>& timings, const std::string& id, const std::string& why) {
  int64_t demoted = 0;
  for (ProblemTiming& t : timings)
    for (TimedEntry& e : t.entries) {
      if (e.id != id || e.status != "timed") continue;
      e.status = "fuzz";
      e.message = why;
      ++demoted;
    }
  return demoted;
}

}  // namespace

int64_t confirm_winners(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed,
                        const std::vector<CompiledCandidate>& compiled, const FuzzOptions& full,
                        const TwinCompiler& twins) {
  std::map<std::string, FuzzedCandidate*> by_id;
  for (FuzzedCandidate& f : fuzzed) by_id[f.candidate.id()] = &f;
  std::map<std::string, const CompiledCandidate*> images;
  for (const CompiledCandidate& c : compiled) images[c.candidate.id()] = &c;
  int64_t demoted = 0;
  for (std::vector<std::string> todo = unconfirmed_winners(timings, by_id); !todo.empty();
       todo = unconfirmed_winners(timings, by_id)) {
    std::vector<CompiledCandidate> round;
    std::vector<Candidate> twinless;
    for (const std::string& id : todo) {
      const CompiledCandidate& c = *images.at(id);
      if (twins && c.perturbed_image.empty()) twinless.push_back(c.candidate);
      else round.push_back(c);
    }
    if (!twinless.empty())
      for (const CompiledCandidate& c : twins(twinless)) {
        FuzzedCandidate& f = *by_id.at(c.candidate.id());
        if (c.status == CompileStatus::compiled && !c.perturbed_image.empty()) {
          round.push_back(c);
          continue;
        }
        f.confirmed = true;
        f.passed = false;
        demoted += demote(timings, c.candidate.id(),
                          "its schedule-perturbed twin, needed for its full fuzz budget, did not compile: " +
                              c.message.substr(0, 300));
      }
    for (const FuzzedCandidate& v : fuzz_stage(round, full)) {
      FuzzedCandidate& f = *by_id.at(v.candidate.id());
      f.confirmed = true;
      f.screen_cases = f.cases_run;
      f.confirmation_seed = v.seed;
      f.cases_run += v.cases_run;
      f.perturbed_cases_run += v.perturbed_cases_run;
      for (const auto& [tag, count] : v.coverage) f.coverage[tag] += count;
      if (v.passed) continue;
      // Failed (or not judged: quarantined by an earlier kill): out, as a candidate failing its screen is.
      f.passed = false;
      f.quarantined = v.quarantined;
      f.failure = v.failure;
      f.failed_image = v.failed_image;
      f.seed = v.seed;
      f.worker_log = v.worker_log;
      demoted += demote(timings, v.candidate.id(),
                        "failed its full fuzz budget: " +
                            (v.failure ? std::string(fuzz::to_string(v.failure->failure_class)) + ": " +
                                             v.failure->message
                                       : std::string(v.quarantined ? "quarantined" : "not fuzzed")));
    }
  }
  return demoted;
}

}  // namespace tunefuzz
