// The time job: one round of measurements of one problem, as a strategy asked for it (TimeJob): cuBLAS and
// the copy floor when the round wants the baseline, then the screens, the verified full timings and the
// re-timing in turns, all on the same inputs in one process. It measures what it is asked and decides
// nothing: which candidates go on, and who wins, is the coordinator's strategy's (tuner/strategy).
#include <chrono>
#include <map>
#include <memory>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/device/fuzzing.hpp"
#include "tuner/device/gpu_turn.hpp"
#include "tuner/device/jobs.hpp"
#include "tuner/device/progress_log.hpp"
#include "tuner/device/time_bench.hpp"

namespace tunefuzz::device {

namespace {

struct Loaded {
  Candidate candidate;
  std::unique_ptr<GemmRunner> runner;
};

// Every candidate the round names, loaded from its image; a perturbed image is refused (it is never timed).
// Modules are device memory: loaded in a turn.
std::map<std::string, Loaded> load_named(const TimeJob& job) {
  const GpuTurn turn;
  std::map<std::string, Loaded> out;
  for (const TimeJob::Entry& e : job.candidates) {
    const Candidate candidate = parse_candidate_id(e.candidate);
    if (candidate.perturb != 0)
      throw Error(ErrorKind::bad_input, "a schedule-perturbed image is fuzzed, never timed: " + e.candidate);
    out[e.candidate] = {candidate, load_candidate(candidate, read_whole_file(e.image))};
  }
  return out;
}

const Loaded& named(const std::map<std::string, Loaded>& loaded, const std::string& id) {
  const auto it = loaded.find(id);
  if (it == loaded.end())
    throw Error(ErrorKind::bad_input, "the time job names " + id + " but gives no image of it");
  return it->second;
}

// The entry of `id` in the result, made when the round first names it.
TimedEntry& entry_of(TimeResult& result, std::map<std::string, size_t>& index, const std::string& id) {
  const auto [it, added] = index.emplace(id, result.entries.size());
  if (added) {
    result.entries.emplace_back();
    result.entries.back().id = id;
  }
  return result.entries[it->second];
}

struct Round {
  const TimeJob& job;
  TimeBench& bench;
  ProgressLog& progress;
  const std::map<std::string, Loaded>& loaded;
  TimeResult& result;
  PhaseClock& clock;
  std::map<std::string, size_t> index;
  const std::function<void(const TimeResult&)>& write_partial;

  std::chrono::steady_clock::time_point reported = std::chrono::steady_clock::now();

  // The partial result so far (what a worker that dies leaves for the next one), at most twice a second:
  // the whole result is written each time, and a round of 150 screens wrote it 150 times. What a dead worker
  // measured after the last write is measured again.
  void report(const char* back_to) {
    const auto now = std::chrono::steady_clock::now();
    if (now - reported < std::chrono::milliseconds(500)) return;
    clock.to("report");
    write_partial(result);
    reported = std::chrono::steady_clock::now();
    clock.to(back_to);
  }

  // What every check of the problem reuses (phases `projections`: the inputs'; `integers`: the integer
  // operands for exact checks and theirs), then cuBLAS checked (`baseline`), timed (`baseline_time`), and the
  // copy floor (`floor`). With a stored check the job names (baseline_check) cuBLAS is timed only.
  void baseline(const CublasRunner& cublas) {
    result.baseline_version = cublas.version();
    result.baseline.id = "cublas";
    const TypePair types{job.problem.input, job.problem.output};
    const fuzz::ArithmeticModel model{Precision::fp32, types.output, bench.shape().k};
    if (auto why = cublas.refusal(bench.shape())) {
      result.baseline.status = "refused";
      result.baseline.message = *why;
    } else if (job.baseline_check && job.baseline_check->cublas_version == cublas.version()) {
      // Checked by this cuBLAS on these inputs before (the verdict store): timed only. The projections and
      // integer operands are made when the first candidate is verified.
      result.baseline.message = job.baseline_check->message;
      result.baseline.worst_error_ratio = job.baseline_check->worst_error_ratio;
      result.baseline.exact_verified = job.baseline_check->exact_verified;
      clock.to("baseline_time");
      progress.write("time cublas");
      bench.time(cublas, result.baseline);
    } else {
      clock.to("projections");
      progress.write("projections");
      bench.prepare_projections();
      clock.to("integers");
      progress.write("integer operands");
      bench.prepare_integers(model);
      clock.to("baseline");
      progress.write("verify cublas");
      result.baseline_checked = true;
      if (bench.verify(cublas, model, 0, 0, result.baseline, TimeBench::OnMismatch::time_anyway)) {
        clock.to("baseline_time");
        bench.time(cublas, result.baseline);
      }
    }
    clock.to("floor");
    progress.write("copy floor");
    result.traffic = bench.copy_floor(job.warmup, job.repeats);
    report("floor");
  }

  // Whether the candidate declines the problem (its entry then says why).
  bool refuses(const Loaded& l, TimedEntry& entry) const {
    const auto why = l.runner->refusal(bench.shape());
    if (!why) return false;
    entry.status = "refused";
    entry.message = *why;
    return true;
  }

  void screen(const std::string& id) {
    clock.to("screen");
    const Loaded& l = named(loaded, id);
    TimedEntry& entry = entry_of(result, index, id);
    if (!refuses(l, entry)) {
      progress.write("screen " + id);
      bench.screen(*l.runner, job.screen_repeats, entry);
    }
    report("screen");
  }

  void time(const std::string& id) {
    clock.to("verify");
    const Loaded& l = named(loaded, id);
    TimedEntry& entry = entry_of(result, index, id);
    if (!refuses(l, entry)) {
      progress.write("verify " + id);
      const OutputTile tile = stated_tile(*l.candidate.kernel_template, l.candidate.point);
      if (bench.verify(*l.runner, arithmetic_model(l.candidate, job.problem.output, bench.shape().k),
                       tile.rows, tile.cols, entry)) {
        clock.to("time");
        bench.time(*l.runner, entry);
      }
    }
    report("time");
  }

  // The round's screens in turns (TimeJob::screen_in_turns): each candidate that accepts the problem is
  // warmed up by one launch, waited for, one after another (a launch that fails is that candidate's entry;
  // one that kills the worker is blamed on it by the progress line), then all of them take screen_repeats
  // turns, launch by launch. The card's drift under its power cap, seconds at a time, then hits every
  // candidate of the round alike, where screens one after another each met it at a different moment.
  void screens_in_turns() {
    std::vector<const GemmRunner*> runners;
    std::vector<TimedEntry> warmed;  // the entries of `runners`, without a status until screened
    for (const std::string& id : job.screen) {
      clock.to("screen");
      const Loaded& l = named(loaded, id);
      // Only an entry with a status goes into the partial result: a candidate warmed up but not yet screened
      // has none, so a worker that dies in the turns leaves it to be screened again.
      TimedEntry entry;
      entry.id = id;
      bool warm = false;
      if (!refuses(l, entry)) {
        progress.write("screen " + id);
        warm = bench.warm_up(*l.runner, entry);
      }
      if (warm) {
        runners.push_back(l.runner.get());
        warmed.push_back(entry);
      } else {
        entry_of(result, index, id) = entry;
      }
      report("screen");
    }
    if (runners.empty()) return;
    clock.to("screen");
    progress.write("screens in turns");
    std::vector<TimedEntry*> entries;
    for (TimedEntry& e : warmed) entries.push_back(&e);
    bench.screen_in_turns(runners, job.screen_repeats, entries);
    for (const TimedEntry& e : warmed) entry_of(result, index, e.id) = e;
    report("screen");
  }

  // The candidates (and cuBLAS) take turns, launch by launch, so the card's drift hits them alike.
  void interleave(const CublasRunner& cublas) {
    std::vector<const GemmRunner*> runners;
    for (const std::string& id : job.interleave) runners.push_back(named(loaded, id).runner.get());
    if (job.interleave_baseline) runners.push_back(&cublas);
    if (runners.size() < 2) return;
    clock.to("interleave");
    progress.write("interleave");
    const std::vector<TimingStats> stats = bench.interleave(runners, job.repeats);
    for (size_t i = 0; i < job.interleave.size(); ++i) {
      TimedEntry& entry = entry_of(result, index, job.interleave[i]);
      if (entry.status.empty()) entry.status = "timed";  // timed in full by an earlier round
      entry.interleaved_median_ms = stats[i].median_ms;
      entry.interleaved_spread = stats[i].spread();
    }
    if (job.interleave_baseline) {
      result.baseline.id = "cublas";
      result.baseline.interleaved_median_ms = stats.back().median_ms;
      result.baseline.interleaved_spread = stats.back().spread();
    }
    report("interleave");
  }
};

// What a worker keeps from one time job to the next when both time the same problem with the same seed,
// warm-up and repeats (a strategy's rounds go to the thread's serving worker one after another): the inputs
// in host and device memory, their projections for the checks, the stream and cuBLAS's handle. One problem
// at a time: freed when another problem's round comes or the worker goes on to another kind of job
// (release_timing_setup), never at the process's end, so nothing is torn down after the driver.
struct TimingSetup {
  std::string key;
  Context context;  // holds the primary context while the buffers live
  Stream stream;
  std::unique_ptr<TimeBench> bench;
  std::unique_ptr<CublasRunner> cublas;
};

std::string timing_setup_key(const TimeJob& job) {
  TimeJob key;
  key.problem = job.problem;
  key.seed = job.seed;
  key.warmup = job.warmup;
  key.repeats = job.repeats;
  key.baseline = false;
  return YAML::Dump(to_yaml(key));
}

TimingSetup* kept = nullptr;  // the setup of the problem timed last

}  // namespace

void release_timing_setup() {
  const GpuTurn turn;  // its device memory goes back to the driver, which clears it
  delete kept;
  kept = nullptr;
}

TimeResult run_time_job(const TimeJob& job, const std::function<void(const TimeResult&)>& write_partial) {
  TimeResult result;
  PhaseClock clock(&result.phase_seconds, "context");
  // With other time workers on the GPU, device work waits for its turn (gpu_turn.hpp), charged to `gpu_wait`;
  // a turn ends when the device has done what it queued.
  struct Turns {
    explicit Turns(const TimeJob& job, PhaseClock& clock) {
      use_gpu_turns(job.gpu_turns, &clock, [] { cuCtxSynchronize(); });  // an error shows at the next call
    }
    ~Turns() {
      try {
        use_gpu_turns({});
      } catch (const Error&) {  // only during a turn, which has ended here
      }
    }
  } turns(job, clock);
  const std::string key = timing_setup_key(job);
  if (!kept || kept->key != key) {
    release_timing_setup();  // another problem's: its buffers go before the new ones are made
    auto setup = std::make_unique<TimingSetup>();
    setup->key = key;
    const DeviceInfo device = query_device();
    clock.to("inputs");
    setup->bench = std::make_unique<TimeBench>(job, device.l2_bytes, setup->stream.get());
    clock.to("cublas");
    {
      const GpuTurn turn;
      setup->cublas = std::make_unique<CublasRunner>(TypePair{job.problem.input, job.problem.output},
                                                     job.problem.beta, setup->stream.get());
    }
    kept = setup.release();
  }
  TimeBench& bench = *kept->bench;
  // This round's clock, taken back at its end however it ends: the bench is kept for the problem's next
  // round.
  struct Clocked {
    TimeBench& bench;
    ~Clocked() { bench.set_clock(nullptr); }
  } clocked{bench};
  bench.set_clock(&clock);
  const CublasRunner& cublas = *kept->cublas;
  ProgressLog progress(job.progress);
  clock.to("load");
  std::map<std::string, Loaded> loaded = load_named(job);
  Round round{job, bench, progress, loaded, result, clock, {}, write_partial};
  if (job.baseline) round.baseline(cublas);
  if (job.screen_in_turns)
    round.screens_in_turns();
  else
    for (const std::string& id : job.screen) round.screen(id);
  for (const std::string& id : job.time) round.time(id);
  if (!job.interleave.empty()) round.interleave(cublas);
  clock.to("load");
  {
    const GpuTurn turn;  // the modules unloaded
    loaded.clear();
  }
  clock.to(nullptr);
  return result;
}

}  // namespace tunefuzz::device
