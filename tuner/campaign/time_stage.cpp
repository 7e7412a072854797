// Times the fuzz survivors on each problem they support, against cuBLAS in the same worker processes, with
// the campaign's search strategy (tuner/campaign/time_search.hpp runs its rounds); a problem's timing is
// taken from the journal on resume, or from the verdict store when an earlier campaign made it. With
// `--gpus`, one problem per GPU at a time, each wholly on its GPU (a dead worker's rest on the same GPU), the
// longest first.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "tuner/campaign/gpus.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/campaign/time_search.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/strategy/search.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

// Who wins is the strategies' rule (tuner/strategy/search.hpp), applied to what was measured.
const TimedEntry* ProblemTiming::winner() const { return choose_winner(entries); }

double ProblemTiming::ratio_vs_baseline() const {
  const TimedEntry* w = winner();
  if (!w || baseline.status != "timed") return 0;
  if (baseline.interleaved_median_ms > 0 && w->interleaved_median_ms > 0)
    return baseline.interleaved_median_ms / w->interleaved_median_ms;
  return baseline.median_ms / w->median_ms;
}

std::filesystem::path gpu_turns_file(const std::filesystem::path& work, int rank, int gpu) {
  return work / ("gpu-turns-" + std::to_string(rank) + (gpu < 0 ? std::string() : "-" + std::to_string(gpu)));
}

namespace {

// The candidate a dead timing worker of problem `index` was on: the last line of its newest progress file
// ("screen ID" or "verify ID"); empty when it was on cuBLAS, the copy floor, the turns or nothing known.
std::string interrupted_candidate(const std::filesystem::path& work, size_t index) {
  std::filesystem::path newest;
  int newest_attempt = -1;
  const std::string prefix = "time-" + std::to_string(index) + "-";
  for (const auto& entry : std::filesystem::directory_iterator(work)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || entry.path().extension() != ".progress") continue;
    const int attempt = std::atoi(name.substr(prefix.size()).c_str());
    if (attempt > newest_attempt) {
      newest_attempt = attempt;
      newest = entry.path();
    }
  }
  if (newest.empty()) return {};
  std::ifstream in(newest);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const size_t space = last.find(' ');
  const std::string verb = last.substr(0, space);
  const std::string id = space == std::string::npos ? "" : last.substr(space + 1);
  return (verb == "screen" || verb == "verify") && id != "cublas" ? id : "";
}

YAML::Node timed_event(const ProblemTiming& t) {
  YAML::Node event;
  event["event"] = "timed";
  event["problem"] = t.problem.name;
  event["timing"] =
      to_yaml(TimeResult{t.baseline_version, t.baseline, t.entries, t.traffic, t.phase_seconds});
  event["strategy"] = to_string(t.strategy);
  event["evaluations"] = t.evaluations;
  event["rounds"] = t.rounds;
  for (const std::string& id : t.quarantined) event["quarantined"].push_back(id);
  if (t.gpu) event["gpu"] = to_yaml(*t.gpu);
  return event;
}

// The strategy a journalled timing was searched with (journals written before strategies: exhaustive).
StrategyKind strategy_of(const YAML::Node& event) {
  if (!event["strategy"]) return StrategyKind::exhaustive;
  return parse_strategy(event["strategy"].Scalar()).value_or(StrategyKind::exhaustive);
}

ProblemTiming from_journal(const Problem& problem, const YAML::Node& event) {
  ProblemTiming t;
  t.problem = problem;
  const TimeResult result = time_result_from_yaml(event["timing"]);
  t.baseline_version = result.baseline_version;
  t.baseline = result.baseline;
  t.entries = result.entries;
  t.traffic = result.traffic;
  t.phase_seconds = result.phase_seconds;
  for (const auto& id : event["quarantined"]) t.quarantined.push_back(id.as<std::string>());
  t.strategy = strategy_of(event);
  t.evaluations = event["evaluations"] ? event["evaluations"].as<int64_t>() : 0;
  t.rounds = event["rounds"] ? event["rounds"].as<int64_t>() : 0;
  if (const YAML::Node gpu = event["gpu"])
    t.gpu = gpu_from_yaml(gpu);
  return t;
}

// A timing worth keeping across campaigns: no worker died on it (a dead worker may say more about the
// machine than about the candidates).
bool storable(const ProblemTiming& t) {
  if (t.baseline.status == "failed" && t.baseline.message.starts_with("worker ")) return false;
  return std::none_of(t.entries.begin(), t.entries.end(),
                      [](const TimedEntry& e) { return e.status == "crashed" || e.status == "hung"; });
}

}  // namespace

// A rough figure for how long a problem's search takes, to order the problems: each candidate's fixed cost
// (its image loaded, its screen set up: about 50 ms) and ten launches (its flops at a few hundred TFLOP/s),
// and the inputs each round makes, uploads and checks outputs against (about 20 ns an element on 16 cores).
std::vector<size_t> time_order(const std::vector<Problem>& problems, const std::vector<size_t>& candidates,
                               size_t slots) {
  std::vector<size_t> order(problems.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (slots < 2) return order;
  std::vector<double> cost(problems.size());
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
    cost[i] = static_cast<double>(candidates[i]) * (0.05 + 10 * 2 * m * n * k / 4e14) +
              (m * k + k * n + m * n) * 2e-8;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  return order;
}

std::vector<ProblemTiming> time_stage(const std::vector<Problem>& problems,
                                      const std::vector<FuzzedCandidate>& fuzzed,
                                      const TimeOptions& options) {
  std::filesystem::create_directories(options.work_directory);
  Journal* journal = options.journal;
  std::set<std::string> quarantined = journal ? journal->quarantined() : std::set<std::string>{};
  const std::map<std::string, int> interrupted =
      journal ? journal->interrupted_time() : std::map<std::string, int>{};
  // First, in problem order, what each problem may time: a candidate quarantined on resume is left out of
  // the problems from its own on, as when the problems are timed one after the other.
  struct Plan {
    std::vector<const FuzzedCandidate*> eligible;
    std::vector<std::string> eligible_ids, left_out;
  };
  std::vector<Plan> plans(problems.size());
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& problem = problems[i];
    if (journal && interrupted.count(problem.name)) {
      // The campaign died timing this problem: it is timed again. The candidate it was on is noted, and
      // quarantined when the campaign had died on it the time before as well.
      const std::string culprit = interrupted_candidate(options.work_directory, i);
      const std::vector<std::string> before = journal->time_interruptions(problem.name);
      const bool again = !culprit.empty() && !before.empty() && before.back() == culprit;
      if (!culprit.empty()) {
        YAML::Node noted;
        noted["event"] = "time_interrupted";
        noted["problem"] = problem.name;
        noted["id"] = culprit;
        journal->record(noted);
      }
      if (again && !options.retry_quarantined && quarantined.insert(culprit).second) {
        YAML::Node event;
        event["event"] = "quarantined";
        event["id"] = culprit;
        event["stage"] = "time";
        event["problem"] = problem.name;
        journal->record(event);
      }
    }
    const GemmShape shape = shape_of(problem);
    Plan& plan = plans[i];
    for (const FuzzedCandidate& f : fuzzed) {
      const Candidate& c = f.candidate;
      if (!f.passed || c.types != TypePair{problem.input, problem.output}) continue;
      if (c.kernel_template->refusal(c.point, shape)) continue;
      if (!options.retry_quarantined && quarantined.count(c.id())) {
        plan.left_out.push_back(c.id());
        continue;
      }
      plan.eligible.push_back(&f);
      plan.eligible_ids.push_back(c.id());
    }
  }

  std::vector<ProblemTiming> out(problems.size());
  Progress progress("time", static_cast<int64_t>(problems.size()));
  const auto time_one = [&](size_t i, const Gpu* gpu) {
    const Problem& problem = problems[i];
    const Plan& plan = plans[i];
    // A timing in the journal is reused only if it covered the same candidates with the same strategy.
    if (journal) {
      const auto event = journal->timed(problem.name);
      if (event && strategy_of(*event) == options.strategy &&
          (*event)["candidates"].as<std::vector<std::string>>(std::vector<std::string>{}) == plan.eligible_ids) {
        out[i] = from_journal(problem, *event);
        progress.advance(problem.name + ": from the journal");
        return;
      }
    }
    // The store's timing of the same candidates, if an earlier campaign (or one running beside this one, which
    // holds the key meanwhile) made it.
    const VerdictStore* store = options.store.store;
    const VerdictKey key = store ? timing_key(problem, plan.eligible, options) : VerdictKey{};
    std::optional<VerdictStore::KeyLock> lock;
    if (store) {
      lock.emplace(*store, VerdictKind::timing, key);
      auto stored = store->load(VerdictKind::timing, key, print_damage);
      if (stored) {
        (*stored)["problem"] = problem.name;  // the store knows the problem by what it computes
        out[i] = from_journal(problem, *stored);
        out[i].quarantined = plan.left_out;
        out[i].from_store = true;
        if (journal) journal->record(*stored);
        progress.advance(problem.name + ": from the verdict store");
        return;
      }
    }
    for (const auto& entry : std::filesystem::directory_iterator(options.work_directory))
      if (entry.path().filename().string().starts_with("time-" + std::to_string(i) + "-"))
        std::filesystem::remove(entry.path());
    if (journal) {
      YAML::Node started;
      started["event"] = "time_started";
      started["problem"] = problem.name;
      journal->record(started);
    }
    out[i] = search_problem(problem, plan.eligible, options, i, gpu);
    out[i].quarantined = plan.left_out;
    YAML::Node event = timed_event(out[i]);
    for (const std::string& id : plan.eligible_ids) event["candidates"].push_back(id);
    if (journal) journal->record(event);
    if (store && storable(out[i])) {
      YAML::Node verdict = YAML::Clone(event);
      verdict.remove("quarantined");  // this campaign's, not the timing's
      verdict.remove("gpu");          // this host's numbering, not the timing's
      verdict["timing"].remove("phase_seconds");  // where this campaign's time went
      store->store(VerdictKind::timing, key, verdict);
    }
    const TimedEntry* w = out[i].winner();
    char note[320];
    std::snprintf(note, sizeof note, "%s: %zu candidates, best %.1f TFLOP/s vs cuBLAS %.1f%s", problem.name.c_str(),
                  plan.eligible.size(), w ? w->tflops : 0.0, out[i].baseline.tflops,
                  gpu ? (" on " + (gpu->rank ? "rank " + std::to_string(gpu->rank) + " " : std::string()) +
                         (gpu->index < 0 ? std::string("its GPU") : "GPU " + std::to_string(gpu->index)))
                            .c_str()
                      : "");
    progress.advance(note);
  };
  // `workers_per_gpu` threads per GPU, each taking the next problem in time_order: a problem's candidates and
  // its cuBLAS baseline are timed in one worker on one GPU, never split; the workers of one GPU take turns.
  std::vector<size_t> candidates;
  for (const Plan& plan : plans) candidates.push_back(plan.eligible.size());
  const size_t per_gpu = static_cast<size_t>(std::max(1, options.workers_per_gpu));
  const std::vector<size_t> order =
      time_order(problems, candidates, std::max<size_t>(1, options.gpus.size()) * per_gpu);
  std::atomic<size_t> next{0};
  const auto work = [&](const Gpu* gpu) {
    for (size_t n = next++; n < order.size(); n = next++) {
      time_one(order[n], gpu);
      if (options.on_timed) options.on_timed(out[order[n]]);
    }
  };
  if (options.gpus.empty() && per_gpu == 1) {
    work(nullptr);
  } else {
    // An error on a pool thread (a journal or store that cannot be written, a worker that cannot start) would
    // end the process through std::terminate: the first is kept, the other threads take no new problem, and
    // it is rethrown here once they are done, for the campaign to report.
    std::mutex failure_mutex;
    std::exception_ptr failure;
    const auto guarded = [&](const Gpu* gpu) {
      try {
        work(gpu);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = order.size();
      }
    };
    std::vector<std::thread> pool;
    for (size_t w = 0; w < per_gpu; ++w) {
      if (options.gpus.empty()) pool.emplace_back(guarded, nullptr);
      for (const Gpu& gpu : options.gpus) pool.emplace_back(guarded, &gpu);
    }
    for (auto& thread : pool) thread.join();
    if (failure) std::rethrow_exception(failure);
  }
  progress.finish("done");
  return out;
}

}  // namespace tunefuzz
