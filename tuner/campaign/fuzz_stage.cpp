// Fuzzes each compiled candidate in its own worker process, several at once on each GPU (`--gpus`: a pool
// per GPU, each worker shown only its own). A worker that crashes or hangs fails its candidate (class crash
// or hang, with the case it was running) and the campaign goes on with the next.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/campaign/gpus.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

int64_t perturbed_cases(int64_t cases) { return cases >= 3 ? cases / 3 : 0; }

int64_t sanitized_cases(int64_t cases) { return std::max<int64_t>(1, cases / 10); }

uint64_t candidate_seed(uint64_t campaign_seed, const std::string& candidate_id) {
  const std::string digest = sha256_hex(std::to_string(campaign_seed) + "/" + candidate_id);
  return std::stoull(digest.substr(0, 12), nullptr, 16);
}

int worker_host_threads(unsigned hardware, int workers, size_t pools) {
  if (const char* set = std::getenv("TUNEFUZZ_HOST_THREADS"); set && *set) return std::max(0, std::atoi(set));
  const unsigned sharers = static_cast<unsigned>(std::max(1, workers)) * static_cast<unsigned>(std::max<size_t>(1, pools));
  return static_cast<int>(std::clamp(hardware / sharers, 1u, 16u));
}

namespace {

// One fuzz job in a worker: `cases` cases of `candidate` (its own image, or its perturbed twin's).
FuzzedCandidate fuzz_job(const Candidate& candidate, const std::filesystem::path& image, int64_t cases,
                         uint64_t seed, const FuzzOptions& options, const std::string& name, cluster::Place gpu,
                         const std::vector<std::string>& wrapper = {}) {
  FuzzedCandidate out;
  out.candidate = candidate;
  out.image = image;
  out.seed = seed;
  FuzzJob job;
  job.candidate = candidate.id();
  job.image = image;
  job.cases = cases;
  job.seed = seed;
  job.huge_weight = options.huge_weight;
  job.progress = options.work_directory / (name + ".progress");
  // The pools on the job's node share its cores (this node's count stands for every node's).
  const size_t pools = static_cast<size_t>(std::count_if(options.gpus.begin(), options.gpus.end(),
                                                         [&](const Gpu& g) { return g.rank == gpu.rank; }));
  job.host_threads = worker_host_threads(std::thread::hardware_concurrency(), options.workers, pools);
  std::filesystem::remove(job.progress);
  // Under a sanitizer kernels run tens of times slower: more time for the job and for each kernel.
  const double slowdown = wrapper.empty() ? 1 : 10;
  // Unsanitized jobs go to the pool thread's serving worker (no process, driver and context per job).
  const WorkerOutcome outcome = cluster::run_job(to_yaml(job), options.work_directory, name, slowdown * options.timeout_s,
                                           wrapper, slowdown * options.kernel_deadline_s, gpu, wrapper.empty());
  if (outcome.end == WorkerOutcome::End::finished || (outcome.result && outcome.result["passed"])) {
    const FuzzResult result = fuzz_result_from_yaml(outcome.result);
    out.passed = result.passed && outcome.end == WorkerOutcome::End::finished;
    out.cases_run = result.cases_run;
    out.coverage = result.coverage;
    out.failure = result.failure;
    out.phase_seconds = result.phase_seconds;
    // Killed after a failure was on record (while shrinking): the failure stands, shrunk as far as it got.
    if (out.failure && outcome.end == WorkerOutcome::End::hung)
      out.failure->message += " (shrinking cut short: worker " + outcome.describe() + ")";
    if (out.passed || out.failure) return out;
  }
  // The worker did not report a verdict: the watchdog or the exit status says what happened. Killed with
  // no kernel running (its progress names host work: making or judging a case, shrinking), the job ran out
  // of time rather than the kernel hanging.
  FuzzFailure failure;
  const std::string report = wrapper.empty() ? std::string() : sanitizer_report(outcome.stderr_tail);
  failure.failure_class =
      !report.empty() ? fuzz::FailureClass::sanitizer
      : outcome.end == WorkerOutcome::End::hung
          ? (outcome.killed_in_kernel() ? fuzz::FailureClass::hang : fuzz::FailureClass::timeout)
      : outcome.end == WorkerOutcome::End::error ? fuzz::FailureClass::launch_error
                                                 : fuzz::FailureClass::crash;
  failure.message = (report.empty() ? "" : wrapper[2] + ": " + report + " (") + "worker " + outcome.describe() +
                    (report.empty() ? "" : ")");
  if (outcome.result && outcome.result["error"])
    failure.message += ": " + outcome.result["error"]["message"].as<std::string>();
  if (auto record = fuzz::parse_case_line(outcome.last_progress))
    failure.first_case = failure.shrunk_case = *record;
  out.failure = failure;
  out.worker_log = outcome.stderr_tail;
  return out;
}

// Folds a later job's verdict into the candidate's: its cases and coverage (also under `tag`), and its
// failure, which becomes the candidate's.
void fold(FuzzedCandidate& out, const FuzzedCandidate& job, const std::string& tag) {
  out.cases_run += job.cases_run;
  for (const auto& [name, count] : job.coverage) out.coverage[name] += count;
  add_phase_seconds(out.phase_seconds, job.phase_seconds);
  out.coverage[tag] += job.cases_run;
  out.passed = job.passed;
  out.failure = job.failure;
  out.worker_log = job.worker_log;
}

// A candidate's cases: most on its own image, a third on its schedule-perturbed twin (when it has one),
// which may lose a race the plain image wins, and with `fuzz run --sanitize` a sample under
// compute-sanitizer; each job runs only if the ones before passed. A failure on the twin is the candidate's
// failure, marked with the twin's seed so its reproducer rebuilds the perturbed image.
FuzzedCandidate fuzz_one(const CompiledCandidate& compiled, const FuzzOptions& options, size_t index,
                         cluster::Place gpu) {
  const int64_t perturbed = compiled.perturbed_image.empty() ? 0 : perturbed_cases(options.cases);
  const uint64_t seed = candidate_seed(options.seed, compiled.candidate.id());
  const std::string name = "fuzz-" + std::to_string(index);
  const auto seconds_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto started = std::chrono::steady_clock::now();
  FuzzedCandidate out =
      fuzz_job(compiled.candidate, compiled.image, options.cases - perturbed, seed, options, name, gpu);
  out.plain_cases_run = out.cases_run;
  out.plain_seconds = seconds_since(started);
  if (out.passed && perturbed > 0) {
    Candidate twin = compiled.candidate;
    twin.perturb = compiled.perturb;
    started = std::chrono::steady_clock::now();
    const FuzzedCandidate shaken =
        fuzz_job(twin, compiled.perturbed_image, perturbed, seed ^ 0x5bd1e995u, options, name + "-perturbed", gpu);
    out.perturbed_seconds = seconds_since(started);
    fold(out, shaken, "perturbed");
    out.perturbed_cases_run = shaken.cases_run;
    if (out.failure) {
      out.failure->perturb = twin.perturb;
      out.failed_image = compiled.perturbed_image;
    }
  }
  if (out.passed && !options.sanitizer.empty())
    fold(out,
         fuzz_job(compiled.candidate, compiled.image, sanitized_cases(options.cases), seed ^ 0x27d4eb2fu, options,
                  name + "-sanitized", gpu, options.sanitizer),
         "sanitized");
  return out;
}

// The verdict a journal holds for a candidate, as the stage would have produced it.
FuzzedCandidate from_journal(const CompiledCandidate& compiled, const YAML::Node& event) {
  FuzzedCandidate out;
  out.candidate = compiled.candidate;
  out.image = compiled.image;
  out.seed = event["seed"].as<uint64_t>();
  const FuzzResult result = fuzz_result_from_yaml(event["result"]);
  out.passed = result.passed;
  out.cases_run = result.cases_run;
  out.coverage = result.coverage;
  out.failure = result.failure;
  out.phase_seconds = result.phase_seconds;
  if (const YAML::Node perturbed = event["perturbed_cases"]) out.perturbed_cases_run = perturbed.as<int64_t>();
  if (const YAML::Node n = event["plain_cases"]) out.plain_cases_run = n.as<int64_t>();
  if (const YAML::Node s = event["plain_seconds"]) out.plain_seconds = s.as<double>();
  if (const YAML::Node s = event["perturbed_seconds"]) out.perturbed_seconds = s.as<double>();
  // The reproducer of a failure on the twin reads the twin's PTX.
  if (out.failure && out.failure->perturb != 0) out.failed_image = compiled.perturbed_image;
  return out;
}

YAML::Node fuzzed_event(const FuzzedCandidate& f, const std::string& key) {
  YAML::Node event;
  event["event"] = "fuzzed";
  event["id"] = f.candidate.id();
  event["key"] = key;
  event["seed"] = f.seed;
  event["perturbed_cases"] = f.perturbed_cases_run;
  event["plain_cases"] = f.plain_cases_run;
  event["plain_seconds"] = std::round(f.plain_seconds * 1000) / 1000;
  event["perturbed_seconds"] = std::round(f.perturbed_seconds * 1000) / 1000;
  FuzzResult result;
  result.passed = f.passed;
  result.cases_run = f.cases_run;
  result.coverage = f.coverage;
  result.failure = f.failure;
  result.phase_seconds = f.phase_seconds;
  event["result"] = to_yaml(result);
  return event;
}

// The journal's line for a verdict: stamped with the seconds since the call began fuzzing, when it counts.
YAML::Node journalled(const FuzzedCandidate& f, const std::string& key, const FuzzOptions& options) {
  YAML::Node event = fuzzed_event(f, key);
  if (options.call_started)
    event["call_seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *options.call_started).count();
  return event;
}

// A verdict worth keeping across campaigns: a pass, or a failure that says something about the kernel (a
// job that ran out of time in host work says nothing).
bool storable(const FuzzedCandidate& f) {
  if (f.quarantined || f.not_started) return false;
  return f.passed || (f.failure && f.failure->failure_class != fuzz::FailureClass::timeout);
}

// The store's verdict for a candidate, if it has one.
std::optional<FuzzedCandidate> from_store(const CompiledCandidate& compiled, const FuzzOptions& options) {
  const StoreUse& use = options.store;
  if (!use.store) return std::nullopt;
  const auto verdict = use.store->load(VerdictKind::fuzz, fuzz_verdict_key(compiled, options), print_damage);
  if (!verdict) return std::nullopt;
  FuzzedCandidate out = from_journal(compiled, *verdict);
  out.from_store = true;
  return out;
}

// Fuzzes one candidate, unless the store has its verdict (another campaign may have filed it while this one
// waited for the key); a new verdict is filed.
FuzzedCandidate fuzz_through_store(const CompiledCandidate& compiled, const FuzzOptions& options, size_t index,
                                   cluster::Place gpu) {
  const StoreUse& use = options.store;
  if (!use.store) return fuzz_one(compiled, options, index, gpu);
  const VerdictKey key = fuzz_verdict_key(compiled, options);
  const VerdictStore::KeyLock lock(*use.store, VerdictKind::fuzz, key);
  if (auto stored = from_store(compiled, options)) return *stored;
  FuzzedCandidate out = fuzz_one(compiled, options, index, gpu);
  if (storable(out)) use.store->store(VerdictKind::fuzz, key, fuzzed_event(out, verdict_digest(VerdictKind::fuzz, key)));
  return out;
}

YAML::Node id_event(const char* kind, const std::string& id) {
  YAML::Node event;
  event["event"] = kind;
  event["id"] = id;
  return event;
}

}  // namespace

std::vector<FuzzedCandidate> fuzz_stage(const std::vector<CompiledCandidate>& compiled,
                                        const FuzzOptions& options) {
  std::vector<const CompiledCandidate*> todo;
  for (const auto& c : compiled)
    if (c.status == CompileStatus::compiled) todo.push_back(&c);
  std::filesystem::create_directories(options.work_directory);
  std::vector<FuzzedCandidate> out(todo.size());

  // On resume: finished candidates come from the journal; one that was running when the campaign died runs
  // again (a kill from outside proves nothing against it), unless the campaign died while it ran twice in a
  // row (or it was quarantined before): then it is quarantined, unless asked to retry it.
  Journal* journal = options.journal;
  std::vector<size_t> run;
  const std::map<std::string, int> interrupted =
      journal ? journal->interrupted_fuzz() : std::map<std::string, int>{};
  const std::set<std::string> quarantined = journal ? journal->quarantined() : std::set<std::string>{};
  int64_t from_the_journal = 0;
  // A step is journalled under its verdict's key: in `fuzz run` a candidate has one verdict per round (seed).
  std::vector<std::string> keys(todo.size());
  if (journal)
    for (size_t i = 0; i < todo.size(); ++i) keys[i] = fuzz_verdict_digest(*todo[i], options);
  for (size_t i = 0; i < todo.size(); ++i) {
    const std::string id = todo[i]->candidate.id();
    if (journal) {
      if (const auto event = journal->fuzzed(id, keys[i])) {
        out[i] = from_journal(*todo[i], *event);
        ++from_the_journal;
        continue;
      }
      const auto died = interrupted.find(id);
      const bool died_twice = died != interrupted.end() && died->second >= 2;
      if (!options.retry_quarantined && (died_twice || quarantined.count(id)) && !from_store(*todo[i], options)) {
        out[i].candidate = todo[i]->candidate;
        out[i].image = todo[i]->image;
        out[i].quarantined = true;
        if (!quarantined.count(id)) {
          YAML::Node event = id_event("quarantined", id);
          event["stage"] = "fuzz";
          journal->record(event);
        }
        continue;
      }
    }
    if (auto stored = from_store(*todo[i], options)) {
      out[i] = *stored;
      if (journal) journal->record(journalled(out[i], keys[i], options));
      continue;
    }
    run.push_back(i);
  }

  Progress progress("fuzz", static_cast<int64_t>(run.size()));
  std::atomic<size_t> next{0};
  // What a pool thread throws (a journal or verdict store that cannot be written, an unreadable image) ends
  // the stage with that error instead of the process: the other threads finish the jobs they run and start no
  // more, and it is rethrown here.
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  const auto one = [&](size_t i, cluster::Place gpu) {
    if (options.no_job_after && std::chrono::steady_clock::now() >= *options.no_job_after) {
      out[i].candidate = todo[i]->candidate;
      out[i].image = todo[i]->image;
      out[i].not_started = true;
      progress.advance(todo[i]->candidate.id() + ": not started (out of time)");
      return;
    }
    if (journal) journal->record(id_event("fuzz_started", todo[i]->candidate.id()));
    out[i] = fuzz_through_store(*todo[i], options, i, gpu);
    if (journal) journal->record(journalled(out[i], keys[i], options));
    progress.advance(
        todo[i]->candidate.id() +
        (out[i].passed ? ": passed" : std::string(": ") + fuzz::to_string(out[i].failure->failure_class)));
  };
  // One pool of options.workers threads per GPU (threads take turns over the GPUs, so a short queue is
  // spread over all of them), every thread taking the next candidate from the one queue.
  const auto work = [&](cluster::Place gpu) {
    for (size_t r = next++; r < run.size() && !failed; r = next++) {
      try {
        one(run[r], gpu);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t gpus = options.gpus.size();
  for (size_t t = 0; t < static_cast<size_t>(std::max(1, options.workers)) * std::max<size_t>(1, gpus); ++t)
    pool.emplace_back(work, gpus ? place_of(options.gpus[t % gpus]) : cluster::Place{});
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  int64_t passed = 0, held = 0, not_started = 0, stored = 0;
  for (const auto& f : out) {
    passed += f.passed;
    held += f.quarantined;
    not_started += f.not_started;
    stored += f.from_store;
  }
  progress.finish(std::to_string(passed) + " passed, " +
                  std::to_string(out.size() - passed - held - not_started) + " failed" +
                  (held ? ", " + std::to_string(held) + " quarantined" : std::string()) +
                  (not_started ? ", " + std::to_string(not_started) + " not started" : std::string()) +
                  (stored ? "; " + std::to_string(stored) + " taken from the verdict store" : std::string()) +
                  (from_the_journal ? "; " + std::to_string(from_the_journal) + " taken from the journal"
                                    : std::string()));
  return out;
}

}  // namespace tunefuzz
