// Times every fuzz survivor on each problem it supports, against cuBLAS in the same worker process: a short
// screening round for all, then the fastest few verified against the inputs and timed in full. If the worker
// dies mid-problem, the candidate it was on is recorded as crashed (or hung) and the rest of the problem is
// timed in a fresh worker.
#include <algorithm>
#include <set>

#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

const TimedEntry* ProblemTiming::winner() const {
  const TimedEntry* best = nullptr;
  for (const TimedEntry& e : entries)
    if (e.status == "timed" && (!best || e.median_ms < best->median_ms)) best = &e;
  return best;
}

namespace {

GemmShape shape_of(const Problem& p) {
  GemmShape s;
  s.m = p.m;
  s.n = p.n;
  s.k = p.k;
  s.lda = p.layout.a == Order::row ? p.k : p.m;
  s.ldb = p.layout.b == Order::row ? p.n : p.k;
  s.ldc = p.n;
  s.layout = p.layout;
  return s;
}

ProblemTiming time_problem(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
                           const TimeOptions& options, size_t index) {
  ProblemTiming timing;
  timing.problem = problem;
  std::vector<const FuzzedCandidate*> remaining = candidates;
  bool baseline_done = false;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    TimeJob job;
    job.problem = problem;
    for (const FuzzedCandidate* c : remaining) job.candidates.push_back({c->candidate.id(), c->image});
    job.warmup = options.warmup;
    job.repeats = options.repeats;
    job.screen_repeats = options.screen_repeats;
    job.finalists = options.finalists;
    job.seed = options.seed;
    const std::string name = "time-" + std::to_string(index) + "-" + std::to_string(attempt);
    job.progress = options.work_directory / (name + ".progress");
    std::filesystem::remove(job.progress);
    const WorkerOutcome outcome = run_worker(to_yaml(job), options.work_directory, name, options.timeout_s);
    std::set<std::string> reported;
    if (outcome.result && outcome.result["baseline"]) {
      const TimeResult partial = time_result_from_yaml(outcome.result);
      if (!baseline_done) {
        timing.baseline = partial.baseline;
        timing.baseline_version = partial.baseline_version;
        baseline_done = true;
      }
      for (const TimedEntry& e : partial.entries) {
        timing.entries.push_back(e);
        reported.insert(e.id);
      }
    }
    if (outcome.end == WorkerOutcome::End::finished) return timing;
    // Blame the implementation named in the last progress line ("verify ID" / "time ID").
    const std::string& last = outcome.last_progress;
    const std::string blamed = last.substr(std::min(last.size(), last.find(' ') + 1));
    if (!baseline_done || blamed == "cublas" || blamed.empty()) {
      timing.baseline.id = "cublas";
      timing.baseline.status = "failed";
      timing.baseline.message = "worker " + outcome.describe() +
                                (outcome.result && outcome.result["error"]
                                     ? ": " + outcome.result["error"]["message"].as<std::string>()
                                     : std::string());
      return timing;
    }
    TimedEntry crashed;
    crashed.id = blamed;
    crashed.status = outcome.end == WorkerOutcome::End::hung ? "hung" : "crashed";
    crashed.message = "worker " + outcome.describe();
    timing.entries.push_back(crashed);
    reported.insert(blamed);
    std::erase_if(remaining, [&](const FuzzedCandidate* c) { return reported.count(c->candidate.id()) > 0; });
    if (remaining.empty()) return timing;
  }
  return timing;
}

}  // namespace

std::vector<ProblemTiming> time_stage(const std::vector<Problem>& problems,
                                      const std::vector<FuzzedCandidate>& fuzzed,
                                      const TimeOptions& options) {
  std::filesystem::create_directories(options.work_directory);
  std::vector<ProblemTiming> out;
  Progress progress("time", static_cast<int64_t>(problems.size()));
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& problem = problems[i];
    const GemmShape shape = shape_of(problem);
    std::vector<const FuzzedCandidate*> eligible;
    for (const FuzzedCandidate& f : fuzzed) {
      const Candidate& c = f.candidate;
      if (!f.passed || c.types != TypePair{problem.input, problem.output}) continue;
      if (c.kernel_template->refusal(c.point, shape)) continue;
      eligible.push_back(&f);
    }
    out.push_back(time_problem(problem, eligible, options, i));
    const TimedEntry* w = out.back().winner();
    char note[256];
    std::snprintf(note, sizeof note, "%s: %zu candidates, best %.1f TFLOP/s vs cuBLAS %.1f",
                  problem.name.c_str(), eligible.size(), w ? w->tflops : 0.0, out.back().baseline.tflops);
    progress.advance(note);
  }
  progress.finish("done");
  return out;
}

}  // namespace tunefuzz
