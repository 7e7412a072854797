#include "tuner/campaign/fuzz_campaign.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "fuzz/domain.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/verdict_keys.hpp"
#include "tuner/common/error.hpp"
#include "tuner/common/version.hpp"
#include "tuner/table/results_table.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double FuzzRunReport::seconds() const {
  double total = 0;
  for (const FuzzCall& call : calls) total += call.seconds;
  return total;
}

double FuzzRunReport::compile_seconds() const {
  double total = 0;
  for (const FuzzCall& call : calls) total += call.compile_seconds;
  return total;
}

std::string FuzzRunReport::empty_work() const {
  if (cases >= cases_per_round) return "";
  return "fuzzed " + std::to_string(cases) + " cases, fewer than one round (" + std::to_string(cases_per_round) +
         ": " + std::to_string(candidates) + " candidates x their cases); the budget ran out first";
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

// What decides the campaign's rounds and verdicts: a journal resumes only under the same.
YAML::Node run_event(const FuzzRunSettings& s, const DeviceInfo& device) {
  YAML::Node event;
  event["event"] = "fuzz_run";
  event["config_sha256"] = s.config_sha256;
  event["seed"] = s.seed;
  event["cases"] = s.cases;
  event["huge_weight"] = s.huge_weight;
  event["sanitizer"] = joined(s.sanitizer);
  event["card"] = device.name;
  event["driver"] = device.driver_version;
  return event;
}

// The calls an earlier process made, from their journal lines: a call ended by itself says how long it
// fuzzed; a killed one counts until its last verdict (the jobs it was running are lost, and run again).
std::vector<FuzzCall> earlier_calls(const Journal& journal) {
  std::vector<FuzzCall> calls;
  for (const YAML::Node& e : journal.events()) {
    const std::string kind = e["event"].Scalar();
    if (kind == "fuzz_call") calls.push_back({0, e["compile_seconds"].as<double>(), false});
    if (calls.empty()) continue;
    if (kind == "fuzzed" && e["call_seconds"])
      calls.back().seconds = std::max(calls.back().seconds, e["call_seconds"].as<double>());
    if (kind == "fuzz_call_end") calls.back() = {e["seconds"].as<double>(), calls.back().compile_seconds, true};
  }
  return calls;
}

FuzzOptions round_options(const FuzzRunSettings& s, const DeviceInfo& device, int64_t round, Journal& journal,
                          Clock::time_point started, Clock::time_point deadline) {
  FuzzOptions options{s.work_directory, s.cases, s.seed + static_cast<uint64_t>(round), s.workers, s.timeout_s,
                      s.huge_weight};
  options.sanitizer = s.sanitizer;
  options.gpus = s.gpus;
  options.journal = &journal;
  options.retry_quarantined = s.retry_quarantined;
  options.no_job_after = deadline;
  options.call_started = started;
  options.store = {nullptr, device.name, device.driver_version};  // no store: the keys name card and driver
  return options;
}

// Whether an earlier call finished a step of this round (then it is played again even once the budget is
// spent, so a resumed campaign reports the rounds it did).
bool journal_holds(const Journal& journal, const std::vector<CompiledCandidate>& round, const FuzzOptions& options) {
  return std::any_of(round.begin(), round.end(), [&](const CompiledCandidate& c) {
    return journal.fuzzed(c.candidate.id(), fuzz_verdict_digest(c, options)).has_value();
  });
}

// Adds one round's verdicts to the report; returns the candidates for the next round.
std::vector<CompiledCandidate> fold_round(FuzzRunReport& report, std::map<std::string, FuzzedCandidate>& totals,
                                          const std::vector<CompiledCandidate>& round,
                                          const std::vector<FuzzedCandidate>& results) {
  std::vector<CompiledCandidate> next;
  report.last_round_not_started = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const FuzzedCandidate& r = results[i];
    report.cases += r.cases_run;
    report.last_round_not_started += r.not_started;
    FuzzedCandidate& total = totals[r.candidate.id()];
    total.candidate = r.candidate;
    total.cases_run += r.cases_run;
    total.perturbed_cases_run += r.perturbed_cases_run;
    if (r.plain_seconds > 0) {
      report.timed_plain_cases += r.plain_cases_run;
      report.plain_job_seconds += r.plain_seconds;
    }
    if (r.perturbed_seconds > 0) {
      report.timed_perturbed_cases += r.perturbed_cases_run;
      report.perturbed_job_seconds += r.perturbed_seconds;
    }
    if (r.plain_seconds > 0)
      add_phase_seconds(report.phase_seconds, r.phase_seconds);
    for (const auto& [tag, count] : r.coverage) {
      total.coverage[tag] += count;
      if (!fuzz::is_domain_tag(tag)) report.coverage[tag] += count;
    }
    if (r.failure)
      report.failed.push_back(r);
    else if (r.quarantined)
      report.quarantined.push_back(r.candidate.id());
    else
      next.push_back(round[i]);
  }
  return next;
}

}  // namespace

FuzzRunReport fuzz_campaign(const std::vector<CompiledCandidate>& compiled, const DeviceInfo& device,
                            const FuzzRunSettings& s) {
  const YAML::Node run = run_event(s, device);
  Journal journal = open_run_journal(s.journal, s.config_sha256, run, "fuzz run", s.resume);
  FuzzRunReport report;
  report.card = device.name;
  report.driver = device.driver_version;
  report.seed = s.seed;
  report.calls = earlier_calls(journal);
  std::vector<CompiledCandidate> alive;
  for (const CompiledCandidate& c : compiled)
    if (c.status == CompileStatus::compiled) alive.push_back(c);
  report.candidates = static_cast<int64_t>(alive.size());
  report.cases_per_round = report.candidates * s.cases;

  const double spent = report.seconds();
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline =
      started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, s.budget_s - spent)));
  YAML::Node call;
  call["event"] = "fuzz_call";
  call["call"] = report.calls.size() + 1;
  call["compile_seconds"] = s.compile_seconds;
  journal.record(call);

  std::map<std::string, FuzzedCandidate> totals;
  for (int64_t round = 0; !alive.empty() && (s.rounds == 0 || round < s.rounds); ++round) {
    const FuzzOptions options = round_options(s, device, round, journal, started, deadline);
    if (Clock::now() >= deadline && !journal_holds(journal, alive, options)) break;
    std::vector<FuzzedCandidate> results = fuzz_stage(alive, options);
    write_reproducers(results, s.work_directory / "reproducers", template_directory(), device, s.arch);
    alive = fold_round(report, totals, alive, results);
    report.rounds = round + 1;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  YAML::Node end;
  end["event"] = "fuzz_call_end";
  end["call"] = report.calls.size() + 1;
  end["seconds"] = seconds;
  journal.record(end);
  report.calls.push_back({seconds, s.compile_seconds, true});
  for (auto& [id, total] : totals) report.totals.push_back(std::move(total));
  return report;
}

YAML::Node to_yaml(const FuzzRunReport& report) {
  YAML::Node out = report_head("tunefuzz-fuzz-run/1", report.card, report.driver);
  out["seed"] = report.seed;
  out["rounds"] = report.rounds;
  out["last_round_not_started"] = report.last_round_not_started;
  out["cases"] = report.cases;
  out["seconds"] = static_cast<int64_t>(report.seconds());  // fuzzing, every call
  out["compile_seconds"] = static_cast<int64_t>(report.compile_seconds());
  out["calls"] = static_cast<int64_t>(report.calls.size());
  for (const FuzzCall& call : report.calls) {
    YAML::Node n;
    n["seconds"] = std::round(call.seconds * 10) / 10;
    n["compile_seconds"] = std::round(call.compile_seconds * 10) / 10;
    n["ended"] = call.ended ? "by itself" : "killed";
    out["call_seconds"].push_back(n);
  }
  out["candidates"] = report.candidates;
  // Cases per second of one worker, on plain images and on their perturbed twins: what the delays cost.
  const auto rate = [](int64_t cases, double seconds) {
    YAML::Node n;
    n["cases"] = cases;
    n["worker_seconds"] = std::round(seconds * 10) / 10;
    n["cases_per_worker_second"] = seconds > 0 ? std::round(static_cast<double>(cases) / seconds * 100) / 100 : 0.0;
    return n;
  };
  out["throughput"]["plain"] = rate(report.timed_plain_cases, report.plain_job_seconds);
  out["throughput"]["perturbed"] = rate(report.timed_perturbed_cases, report.perturbed_job_seconds);
  // Where those worker seconds went, by phase; the rest of them is the worker process's start and exit.
  double phased = 0;
  for (const auto& [phase, seconds] : report.phase_seconds) {
    out["throughput"]["phase_seconds"][phase] = std::round(seconds * 10) / 10;
    phased += seconds;
  }
  if (!report.phase_seconds.empty())
    out["throughput"]["phase_seconds"]["other"] =
        std::round(std::max(0.0, report.plain_job_seconds + report.perturbed_job_seconds - phased) * 10) / 10;
  YAML::Node tags(YAML::NodeType::Map);
  for (const auto& [tag, count] : report.coverage) tags[tag] = count;
  out["coverage"] = tags;
  if (!report.empty_work().empty()) out["empty_work"] = report.empty_work();
  for (const std::string& id : report.quarantined) out["quarantined"].push_back(id);
  out["failures"] = YAML::Node(YAML::NodeType::Sequence);
  for (const FuzzedCandidate& f : report.failed) {
    YAML::Node row;
    row["id"] = f.candidate.id();
    row["class"] = fuzz::to_string(f.failure->failure_class);
    row["subtype"] = f.failure->subtype;
    row["shrunk_case"] = to_yaml(f.failure->shrunk_case);
    row["reproducer"] = f.reproducer.string();
    out["failures"].push_back(row);
  }
  return out;
}

}  // namespace tunefuzz
