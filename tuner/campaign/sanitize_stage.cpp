#include "tuner/campaign/sanitize_stage.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "tuner/campaign/gpus.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/store/verdict_store.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

const std::vector<std::string>& shipping_sanitizers() {
  static const std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
  return tools;
}

namespace {

// One worker process under compute-sanitizer's `tool` replaying `sets` (at `gpu`). Instrumented kernels run
// many times slower: a generous kernel deadline, still far below the job's.
WorkerOutcome replay_under(const std::string& tool, const std::vector<CaseSet>& sets,
                           const fs::path& work_directory, const std::string& job_name, cluster::Place gpu) {
  size_t cases = 0;
  for (const CaseSet& set : sets) cases += set.records.size();
  const CaseJob job{sets, 1, work_directory / (job_name + ".progress")};
  fs::remove(job.progress);
  const WorkerOutcome outcome =
      cluster::run_job(to_yaml(job), work_directory, job_name, 600.0 * static_cast<double>(cases),
                       sanitizer_wrapper(tool), 120, gpu);
  if (outcome.end == WorkerOutcome::End::failed_to_start)
    throw Error(ErrorKind::unsupported, "cannot run compute-sanitizer: " + outcome.stderr_tail);
  return outcome;
}

}  // namespace

std::optional<SanitizerFinding> sanitizer_finding(const Candidate& candidate, const fs::path& image,
                                                  const std::string& tool,
                                                  const std::vector<fuzz::CaseRecord>& cases,
                                                  const fs::path& work_directory, const std::string& name,
                                                  cluster::Place gpu) {
  const auto replay = [&](const std::vector<fuzz::CaseRecord>& records, const std::string& job_name) {
    return replay_under(tool, {{candidate.id(), image, records}}, work_directory, job_name, gpu);
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
std::vector<std::string> unchecked_winners(
    const std::vector<ProblemTiming>& timings,
    const std::map<std::string, std::optional<SanitizerFinding>>& verdicts) {
  std::vector<std::string> out;
  for (const ProblemTiming& t : timings)
    if (const TimedEntry* w = t.winner();
        w && !verdicts.count(w->id) && std::find(out.begin(), out.end(), w->id) == out.end())
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
    // Every (candidate, tool) pair is one job, and a candidate's verdict is its first finding in tool order.
    struct Job {
      size_t candidate, tool;
      const FuzzedCandidate* fuzzed = nullptr;
      std::vector<fuzz::CaseRecord> cases;
      VerdictKey key;  ///< with a store
    };
    std::vector<Job> jobs;
    for (size_t c = 0; c < todo.size(); ++c) {
      const auto found = by_id.find(todo[c]);
      if (found == by_id.end())
        throw Error(ErrorKind::internal, "the winner " + todo[c] + " is not among the fuzzed candidates");
      const std::vector<fuzz::CaseRecord> cases = options.cases_for(found->second->candidate);
      for (size_t t = 0; t < options.tools.size(); ++t) {
        Job job{c, t, found->second, cases, {}};
        if (options.store.store)
          job.key = sanitizer_key(found->second->candidate, found->second->image,
                                  sanitizer_wrapper(options.tools[t]), cases, options.store);
        jobs.push_back(std::move(job));
      }
    }
    // The jobs of one tool go in batches, one process each replaying its winners one after another: every
    // process costs a CUDA context and a sanitizer session, which this host creates one at a time (about
    // 0.24 s each on the H200 machines, results/fuzz-gpus-h200x4), while a batch's replays run in turn.
    // ⌈√n⌉ batches of n winners balance the two. A batch that is not clean is replayed winner by winner
    // (sanitizer_finding), which names the winner and the case.
    std::vector<std::vector<size_t>> batches;
    for (size_t t = 0; t < options.tools.size(); ++t) {
      std::vector<size_t> of_tool;
      for (size_t j = 0; j < jobs.size(); ++j)
        if (jobs[j].tool == t) of_tool.push_back(j);
      const auto count = static_cast<size_t>(std::ceil(std::sqrt(static_cast<double>(of_tool.size()))));
      for (size_t b = 0; b < count; ++b) {
        std::vector<size_t> batch(
            of_tool.begin() + static_cast<std::ptrdiff_t>(of_tool.size() * b / count),
            of_tool.begin() + static_cast<std::ptrdiff_t>(of_tool.size() * (b + 1) / count));
        if (!batch.empty()) batches.push_back(std::move(batch));
      }
    }
    std::vector<std::optional<SanitizerFinding>> findings(jobs.size());
    Progress progress("sanitize", static_cast<int64_t>(jobs.size()));
    std::atomic<size_t> next{0};
    std::atomic<int64_t> from_store{0};
    const VerdictStore* const store = options.store.store;
    std::mutex error_mutex;
    std::optional<Error> error;
    const auto work = [&](cluster::Place gpu) {
      for (size_t b = next++; b < batches.size(); b = next++) {
        std::vector<size_t> batch = batches[b];
        try {
          // Another campaign replaying the same pairs waits for these locks; taken in key order, so two
          // campaigns never hold one each of the other's.
          std::list<VerdictStore::KeyLock> held;
          std::vector<size_t> todo_here;
          if (store) {
            std::sort(batch.begin(), batch.end(),
                      [&](size_t x, size_t y) { return jobs[x].key < jobs[y].key; });
            for (size_t j : batch) {
              held.emplace_back(*store, VerdictKind::sanitizer, jobs[j].key);
              bool stored = false;
              if (const auto v = store->load(VerdictKind::sanitizer, jobs[j].key, print_damage))
                findings[j] = from_verdict(*v, options.tools[jobs[j].tool], stored);
              if (stored) {
                ++from_store;
                progress.advance(todo[jobs[j].candidate] + " " + options.tools[jobs[j].tool] +
                                 ": from the store");
              } else {
                todo_here.push_back(j);
              }
            }
          } else {
            todo_here = batch;
          }
          if (todo_here.empty()) continue;
          const std::string& tool = options.tools[jobs[todo_here.front()].tool];
          bool clean = false;
          if (todo_here.size() > 1) {
            std::vector<CaseSet> sets;
            for (size_t j : todo_here)
              sets.push_back({jobs[j].fuzzed->candidate.id(), jobs[j].fuzzed->image, jobs[j].cases});
            const WorkerOutcome all = replay_under(
                tool, sets, options.work_directory,
                tool + "-batch-" + std::to_string(verdicts.size()) + "-" + std::to_string(b), gpu);
            clean = all.end == WorkerOutcome::End::finished && case_result_from_yaml(all.result).passed;
          }
          for (size_t j : todo_here) {
            if (!clean)
              findings[j] =
                  sanitizer_finding(jobs[j].fuzzed->candidate, jobs[j].fuzzed->image, tool, jobs[j].cases,
                                    options.work_directory,
                                    tool + "-" + std::to_string(verdicts.size() + jobs[j].candidate), gpu);
            if (store && !(findings[j] && findings[j]->hung))
              store->store(VerdictKind::sanitizer, jobs[j].key, to_verdict(findings[j]));
            progress.advance(todo[jobs[j].candidate] + " " + tool +
                             (findings[j] ? ": " + findings[j]->message.substr(0, 80) : ": clean"));
          }
        } catch (const Error& e) {
          std::lock_guard lock(error_mutex);
          if (!error) error = e;
        }
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
        e.message = "compute-sanitizer --tool " + v->second->tool + " on " +
                    fuzz::to_string(v->second->record) + ": " + v->second->message;
        ++demoted;
      }
    }
    progress.finish(
        std::to_string(todo.size()) + " winners checked under " + std::to_string(options.tools.size()) +
        " tools; " + std::to_string(demoted) + " entries demoted" +
        (from_store ? "; " + std::to_string(from_store.load()) + " verdicts from the verdict store"
                    : std::string()));
  }
  for (ProblemTiming& t : timings)
    if (t.winner()) t.sanitizers = options.tools;
}

}  // namespace tunefuzz
