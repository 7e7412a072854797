#include "tuner/campaign/sanitize_stage.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/campaign/gpus.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/store/verdict_store.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

const std::vector<std::string>& shipping_sanitizers() {
  static const std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
  return tools;
}

std::optional<SanitizerFinding> sanitizer_finding(const Candidate& candidate, const fs::path& image,
                                                  const std::string& tool,
                                                  const std::vector<fuzz::CaseRecord>& cases,
                                                  const fs::path& work_directory, const std::string& name,
                                                  cluster::Place gpu) {
  const std::vector<std::string> wrapper = sanitizer_wrapper(tool);
  // Instrumented kernels run many times slower: a generous kernel deadline, still far below the job's.
  const auto replay = [&](const std::vector<fuzz::CaseRecord>& records, const std::string& job_name) {
    const CaseJob job{candidate.id(), image, records, 1, work_directory / (job_name + ".progress")};
    fs::remove(job.progress);
    const WorkerOutcome outcome =
        cluster::run_job(to_yaml(job), work_directory, job_name, 600.0 * static_cast<double>(records.size()),
                         wrapper, 120, gpu);
    if (outcome.end == WorkerOutcome::End::failed_to_start)
      throw Error(ErrorKind::unsupported, "cannot run compute-sanitizer: " + outcome.stderr_tail);
    return outcome;
  };
  const auto finding = [&](const WorkerOutcome& outcome, const fuzz::CaseRecord& record) {
    // The tool's finding first: the console shows only the start of the message.
    const std::string report = sanitizer_report(outcome.stderr_tail);
    const std::string worker = "worker " + outcome.describe();
    return SanitizerFinding{tool, record, report.empty() ? worker : report + " (" + worker + ")",
                            outcome.end == WorkerOutcome::End::hung};
  };
  // All cases in one instrumented process first: the host creates one CUDA context (and one sanitizer
  // session) at a time, so processes, not kernels, are what this stage waits for. Only when that one is not
  // clean does each case get its own process, to name the case the finding belongs to; a hang is the case
  // its progress names (a report comes at the process's end, after every case, so it names none).
  if (cases.size() > 1) {
    const WorkerOutcome all = replay(cases, name + "-all");
    if (all.end == WorkerOutcome::End::finished && case_result_from_yaml(all.result).passed)
      return std::nullopt;
    if (all.end == WorkerOutcome::End::hung)
      if (const auto record = fuzz::parse_case_line(all.last_progress)) return finding(all, *record);
  }
  for (size_t index = 0; index < cases.size(); ++index) {
    const WorkerOutcome outcome = replay({cases[index]}, name + "-" + std::to_string(index));
    if (outcome.end == WorkerOutcome::End::finished) {
      const CaseResult result = case_result_from_yaml(outcome.result);
      if (result.passed || result.refused) continue;
      return SanitizerFinding{tool, cases[index],
                              result.failure_class + (result.subtype.empty() ? "" : "/") + result.subtype +
                                  ": " + result.message.substr(0, 200)};
    }
    return finding(outcome, cases[index]);
  }
  return std::nullopt;
}

namespace {

YAML::Node to_verdict(const std::optional<SanitizerFinding>& finding) {
  YAML::Node v;
  v["clean"] = !finding;
  if (finding) {
    v["case"] = fuzz::to_string(finding->record);
    v["message"] = finding->message;
  }
  return v;
}

/// A stored verdict as sanitizer_finding returns it; nullopt in `valid` when the entry does not read as one.
std::optional<SanitizerFinding> from_verdict(const YAML::Node& v, const std::string& tool, bool& valid) {
  valid = false;
  try {
    if (!v["clean"]) return std::nullopt;
    if (v["clean"].as<bool>()) {
      valid = true;
      return std::nullopt;
    }
    const auto record = fuzz::parse_case_line(v["case"].as<std::string>());
    if (!record || !v["message"]) return std::nullopt;
    valid = true;
    return SanitizerFinding{tool, *record, v["message"].as<std::string>()};
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

// The winners not checked yet, by id.
std::vector<std::string> unchecked_winners(const std::vector<ProblemTiming>& timings,
                                           const std::map<std::string, std::optional<SanitizerFinding>>& verdicts) {
  std::vector<std::string> out;
  for (const ProblemTiming& t : timings)
    if (const TimedEntry* w = t.winner(); w && !verdicts.count(w->id) &&
                                          std::find(out.begin(), out.end(), w->id) == out.end())
      out.push_back(w->id);
  return out;
}

}  // namespace

void sanitize_winners(std::vector<ProblemTiming>& timings, const std::vector<FuzzedCandidate>& fuzzed,
                      const SanitizeOptions& options) {
  std::map<std::string, const FuzzedCandidate*> by_id;
  for (const FuzzedCandidate& f : fuzzed) by_id[f.candidate.id()] = &f;
  fs::create_directories(options.work_directory);
  std::map<std::string, std::optional<SanitizerFinding>> verdicts;  // candidate id → first finding
  for (std::vector<std::string> todo = unchecked_winners(timings, verdicts); !todo.empty();
       todo = unchecked_winners(timings, verdicts)) {
    // Every (candidate, tool) pair is one job; the pool runs them all, and a candidate's verdict is its
    // first finding in tool order.
    struct Job {
      size_t candidate, tool;
    };
    std::vector<Job> jobs;
    for (size_t c = 0; c < todo.size(); ++c)
      for (size_t t = 0; t < options.tools.size(); ++t) jobs.push_back({c, t});
    std::vector<std::optional<SanitizerFinding>> findings(jobs.size());
    Progress progress("sanitize", static_cast<int64_t>(jobs.size()));
    std::atomic<size_t> next{0};
    std::atomic<int64_t> from_store{0};
    const VerdictStore* const store = options.store.store;
    std::mutex error_mutex;
    std::optional<Error> error;
    const auto work = [&](cluster::Place gpu) {
      for (size_t j = next++; j < jobs.size(); j = next++) {
        const std::string& id = todo[jobs[j].candidate];
        const std::string& tool = options.tools[jobs[j].tool];
        try {
          const auto found = by_id.find(id);
          if (found == by_id.end())
            throw Error(ErrorKind::internal, "the winner " + id + " is not among the fuzzed candidates");
          const Candidate& candidate = found->second->candidate;
          const std::vector<fuzz::CaseRecord> cases = options.cases_for(candidate);
          bool stored = false;
          VerdictKey key;
          std::optional<VerdictStore::KeyLock> held;  // another campaign replaying the same pair waits
          if (store) {
            key = sanitizer_key(candidate, found->second->image, sanitizer_wrapper(tool), cases, options.store);
            held.emplace(*store, VerdictKind::sanitizer, key);
            if (const auto v = store->load(VerdictKind::sanitizer, key, print_damage))
              findings[j] = from_verdict(*v, tool, stored);
          }
          if (stored) {
            ++from_store;
          } else {
            findings[j] = sanitizer_finding(candidate, found->second->image, tool, cases, options.work_directory,
                                            tool + "-" + std::to_string(verdicts.size() + jobs[j].candidate),
                                            gpu);
            if (store && !(findings[j] && findings[j]->hung))
              store->store(VerdictKind::sanitizer, key, to_verdict(findings[j]));
          }
        } catch (const Error& e) {
          std::lock_guard lock(error_mutex);
          if (!error) error = e;
        }
        progress.advance(id + " " + tool + (findings[j] ? ": " + findings[j]->message.substr(0, 80) : ": clean"));
      }
    };
    std::vector<std::thread> pool;
    const size_t gpus = options.gpus.size();
    for (size_t t = 0; t < static_cast<size_t>(std::max(1, options.workers)) * std::max<size_t>(1, gpus); ++t)
      pool.emplace_back(work, gpus ? place_of(options.gpus[t % gpus]) : cluster::Place{});
    for (auto& thread : pool) thread.join();
    if (error) throw *error;
    for (size_t j = 0; j < jobs.size(); ++j) {
      std::optional<SanitizerFinding>& verdict = verdicts[todo[jobs[j].candidate]];
      if (!verdict && findings[j]) verdict = findings[j];
    }
    int64_t demoted = 0;
    for (ProblemTiming& t : timings) {
      for (TimedEntry& e : t.entries) {
        const auto v = verdicts.find(e.id);
        if (e.status != "timed" || v == verdicts.end() || !v->second) continue;
        e.status = "sanitizer";
        e.message = "compute-sanitizer --tool " + v->second->tool + " on " + fuzz::to_string(v->second->record) +
                    ": " + v->second->message;
        ++demoted;
      }
    }
    progress.finish(std::to_string(todo.size()) + " winners checked under " +
                    std::to_string(options.tools.size()) + " tools; " + std::to_string(demoted) +
                    " entries demoted" +
                    (from_store ? "; " + std::to_string(from_store.load()) + " verdicts from the verdict store"
                                : std::string()));
  }
  for (ProblemTiming& t : timings)
    if (t.winner()) t.sanitizers = options.tools;
}

}  // namespace tunefuzz
