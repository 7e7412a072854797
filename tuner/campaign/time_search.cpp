// Runs one problem's search: the strategy's rounds go to worker processes as time jobs, their results back to
// the strategy, and the winner is chosen from what was measured (see time_search.hpp).
#include "tuner/campaign/time_search.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "tuner/campaign/gpus.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/store/verdict_store.hpp"
#include "tuner/strategy/search.hpp"
#include "tuner/worker/protocol.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

namespace {

bool named_in(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Whether a round has anything left to measure.
bool empty(const MeasureRound& round) {
  return !round.baseline && round.screen.empty() && round.time.empty() &&
         round.interleave.size() + (round.interleave_baseline ? 1 : 0) < 2;
}

// What a round's workers measured; `failure` when one died outside any candidate (on cuBLAS, the inputs or
// the copy floor): the problem cannot be timed.
struct RoundOutcome {
  TimeResult result;
  std::string failure;
};

// Runs rounds of one problem in the thread's serving worker, a fresh worker for what is left after one dies.
class RoundRunner {
 public:
  RoundRunner(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
              const TimeOptions& options, size_t index, cluster::Place gpu)
      : problem_(problem), options_(options), index_(index), gpu_(gpu) {
    for (const FuzzedCandidate* c : candidates) images_[c->candidate.id()] = c->image;
  }

  /// cuBLAS's check on this problem's inputs from the store, sent with the round that asks for the baseline.
  std::optional<BaselineCheck> baseline_check;

  RoundOutcome run(MeasureRound left) {
    RoundOutcome out;
    bool in_turns = true;  // the screens in turns (TimeJob::screen_in_turns) until a worker dies in them
    while (!empty(left)) {
      const std::string name = "time-" + std::to_string(index_) + "-" + std::to_string(workers_++);
      // The thread's serving worker: its context (and the host's wait to create one) serves every round.
      const auto sent = std::chrono::steady_clock::now();
      const WorkerOutcome worker =
          cluster::run_job(to_yaml(job_for(left, name, in_turns)), options_.work_directory, name,
                           options_.timeout_s, {}, 0, gpu_, true);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
      const double before = phase_total(out.result);
      std::set<std::string> reported = take_partial(worker, left, out.result);
      // The round trip beyond what the worker accounted for: the job's files, a worker's start, the wait.
      out.result.phase_seconds["dispatch"] += std::max(0.0, wall - (phase_total(out.result) - before));
      if (worker.end == WorkerOutcome::End::finished) break;
      // Blame what the last progress line names ("screen ID", "verify ID", "interleave", "verify cublas"),
      // or take the screens again one by one ("screens in turns").
      const std::string& last = worker.last_progress;
      const std::string blamed = last.substr(std::min(last.size(), last.find(' ') + 1));
      if (last == "interleave") {
        left.interleave.clear();  // the turns are dropped: the full timings stand
        left.interleave_baseline = false;
      } else if (last == "screens in turns" && in_turns) {
        // Every screen of the round was running: the rest of the round takes them one after another, which
        // names the candidate if it dies again.
        in_turns = false;
      } else if (named_in(left.screen, blamed) || named_in(left.time, blamed)) {
        TimedEntry crashed;
        crashed.id = blamed;
        crashed.status = worker.end == WorkerOutcome::End::hung ? "hung" : "crashed";
        crashed.message = "worker " + worker.describe();
        out.result.entries.push_back(crashed);
        reported.insert(blamed);
      } else {
        out.failure = "worker " + worker.describe() +
                      (worker.result && worker.result["error"]
                           ? ": " + worker.result["error"]["message"].as<std::string>()
                           : std::string());
        break;
      }
      for (auto* list : {&left.screen, &left.time, &left.interleave})
        std::erase_if(*list, [&](const std::string& id) { return reported.count(id) > 0; });
    }
    return out;
  }

 private:
  static double phase_total(const TimeResult& r) {
    double sum = 0;
    for (const auto& [phase, seconds] : r.phase_seconds) sum += seconds;
    return sum;
  }

  TimeJob job_for(const MeasureRound& round, const std::string& name, bool in_turns) const {
    TimeJob job;
    job.problem = problem_;
    std::set<std::string> named;
    for (const auto* list : {&round.screen, &round.time, &round.interleave})
      for (const std::string& id : *list)
        if (named.insert(id).second) job.candidates.push_back({id, images_.at(id)});
    job.baseline = round.baseline;
    if (round.baseline) job.baseline_check = baseline_check;
    job.screen = round.screen;
    job.screen_in_turns = in_turns;
    job.time = round.time;
    job.interleave = round.interleave;
    job.interleave_baseline = round.interleave_baseline;
    job.warmup = options_.warmup;
    job.repeats = options_.repeats;
    job.screen_repeats = round.screen_repeats > 0 ? round.screen_repeats : options_.screen_repeats;
    job.seed = options_.seed;
    // The node's GPUs time `workers_per_gpu` problems each at once: their workers share its cores (as the
    // fuzz stage's do), and those of one GPU take turns on it.
    const auto here = std::count_if(options_.gpus.begin(), options_.gpus.end(),
                                    [&](const Gpu& g) { return g.rank == gpu_.rank; });
    const int per_gpu = std::max(1, options_.workers_per_gpu);
    job.host_threads = worker_host_threads(std::thread::hardware_concurrency(), per_gpu,
                                           static_cast<size_t>(std::max<int64_t>(1, here)));
    if (per_gpu > 1) job.gpu_turns = gpu_turns_file(options_.work_directory, gpu_.rank, gpu_.gpu);
    job.progress = options_.work_directory / (name + ".progress");
    std::filesystem::remove(job.progress);
    return job;
  }

  // Adds what a worker reported (all of the round, or up to where it died) to `total`; returns the
  // candidates it reported, and marks the baseline done.
  static std::set<std::string> take_partial(const WorkerOutcome& worker, MeasureRound& left, TimeResult& total) {
    std::set<std::string> reported;
    if (!worker.result || !worker.result["entries"]) return reported;
    const TimeResult partial = time_result_from_yaml(worker.result);
    add_phase_seconds(total.phase_seconds, partial.phase_seconds);
    if (left.baseline && !partial.baseline.status.empty()) {
      total.baseline = partial.baseline;
      total.baseline_version = partial.baseline_version;
      total.traffic = partial.traffic;
      total.baseline_checked = partial.baseline_checked;
      left.baseline = false;
    }
    if (partial.baseline.interleaved_median_ms > 0) {
      total.baseline.interleaved_median_ms = partial.baseline.interleaved_median_ms;
      total.baseline.interleaved_spread = partial.baseline.interleaved_spread;
    }
    for (const TimedEntry& e : partial.entries) {
      total.entries.push_back(e);
      reported.insert(e.id);
    }
    return reported;
  }

  const Problem& problem_;
  const TimeOptions& options_;
  size_t index_;
  std::map<std::string, std::filesystem::path> images_;
  int workers_ = 0;
  cluster::Place gpu_;  ///< the rank and GPU every worker is shown alone; gpu -1: what that rank sees
};

// Screens the store holds from earlier campaigns (the same problem, image, warm-up, launches, seed, card and
// driver): a changed template or one more candidate costs only the new screens. They only pick finalists;
// the full timings and the turns with cuBLAS are always measured in this campaign, side by side.
class ScreenStore {
 public:
  ScreenStore(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
              const TimeOptions& options)
      : problem_(problem), options_(options) {
    for (const FuzzedCandidate* c : candidates) by_id_[c->candidate.id()] = c;
  }

  /// Takes the screens of `round` the store holds out of it, and returns them.
  std::vector<TimedEntry> take(MeasureRound& round) const {
    std::vector<TimedEntry> found;
    const VerdictStore* store = options_.store.store;
    if (!store) return found;
    std::erase_if(round.screen, [&](const std::string& id) {
      const auto v = store->load(VerdictKind::screen, key(id, round), print_damage);
      if (!v) return false;
      try {
        TimedEntry e = timed_entry_from_yaml(*v);
        if (e.id != id || e.status != "screened") return false;
        found.push_back(e);
        return true;
      } catch (const std::exception&) {
        return false;
      }
    });
    return found;
  }

  /// Files the screens `result` measured for `round`.
  void file(const MeasureRound& round, const TimeResult& result) const {
    const VerdictStore* store = options_.store.store;
    if (!store) return;
    for (const TimedEntry& e : result.entries)
      if (e.status == "screened" && std::find(round.screen.begin(), round.screen.end(), e.id) != round.screen.end())
        store->store(VerdictKind::screen, key(e.id, round), to_yaml(e));
  }

 private:
  VerdictKey key(const std::string& id, const MeasureRound& round) const {
    const int64_t repeats = round.screen_repeats > 0 ? round.screen_repeats : options_.screen_repeats;
    return screen_key(problem_, *by_id_.at(id), repeats, options_);
  }

  const Problem& problem_;
  const TimeOptions& options_;
  std::map<std::string, const FuzzedCandidate*> by_id_;
};

// cuBLAS's check on the problem's inputs (TimeJob::baseline_check), kept across campaigns: it does not depend
// on our candidates, and it costs as much as verifying a finalist (on 26 problems, 4.7 s of a 29 s time
// stage).
class BaselineStore {
 public:
  BaselineStore(const Problem& problem, const TimeOptions& options)
      : store_(options.store.store), key_(baseline_key(problem, options)) {}

  std::optional<BaselineCheck> load() const {
    if (!store_) return std::nullopt;
    const auto v = store_->load(VerdictKind::baseline, key_, print_damage);
    if (!v) return std::nullopt;
    try {
      return baseline_check_from_yaml(*v);
    } catch (const std::exception&) {
      return std::nullopt;  // not a check this build reads: made again, and filed over it
    }
  }

  /// Files the check a worker made in `result` (a round that asked for the baseline), if it made one.
  void file(const TimeResult& result) const {
    if (!store_ || !result.baseline_checked || result.baseline.status != "timed") return;
    BaselineCheck check;
    check.cublas_version = result.baseline_version;
    check.message = result.baseline.message;
    check.worst_error_ratio = result.baseline.worst_error_ratio;
    check.exact_verified = result.baseline.exact_verified;
    store_->store(VerdictKind::baseline, key_, to_yaml(check));
  }

 private:
  const VerdictStore* store_;
  VerdictKey key_;
};

}  // namespace

ProblemTiming search_problem(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
                             const TimeOptions& options, size_t index, const Gpu* gpu) {
  const SearchSettings settings{options.finalists, options.screen_repeats, options.repeats};
  SearchState state;
  state.problem = problem;
  state.shape = shape_of(problem);
  state.limits = options.limits;
  for (const FuzzedCandidate* c : candidates) state.candidates.push_back({c->candidate, c->candidate.id(), 0});
  ProblemTiming timing;
  timing.problem = problem;
  timing.strategy = options.strategy;
  if (gpu) timing.gpu = *gpu;
  RoundRunner runner(problem, candidates, options, index, gpu ? place_of(*gpu) : cluster::Place{});
  const std::unique_ptr<SearchStrategy> strategy = make_strategy(options.strategy, settings);
  const ScreenStore screens(problem, candidates, options);
  const BaselineStore baselines(problem, options);
  runner.baseline_check = baselines.load();
  while (const std::optional<MeasureRound> round = strategy->next(state)) {
    MeasureRound left = *round;
    const std::vector<TimedEntry> stored = screens.take(left);
    RoundOutcome outcome = runner.run(left);
    add_phase_seconds(timing.phase_seconds, outcome.result.phase_seconds);
    screens.file(left, outcome.result);
    outcome.result.entries.insert(outcome.result.entries.end(), stored.begin(), stored.end());
    if (round->baseline) {
      timing.baseline_version = outcome.result.baseline_version;
      timing.traffic = outcome.result.traffic;
      baselines.file(outcome.result);
    }
    absorb(state, *round, outcome.result, settings);
    // A screen taken from the store was not measured here: it counts neither as an evaluation nor a launch.
    state.evaluations -= static_cast<int64_t>(stored.size());
    state.launches -= static_cast<int64_t>(stored.size()) *
                      (round->screen_repeats > 0 ? round->screen_repeats : settings.screen_repeats);
    if (!outcome.failure.empty()) {
      state.baseline.id = "cublas";
      state.baseline.status = "failed";
      state.baseline.message = outcome.failure;
      break;
    }
  }
  timing.baseline = state.baseline;
  timing.entries = measured_entries(state);
  timing.evaluations = state.evaluations;
  timing.rounds = state.rounds;
  return timing;
}

}  // namespace tunefuzz
