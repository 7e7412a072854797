#include "tuner/campaign/tune_campaign.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "runtime/backend/compiler.hpp"
#include "tuner/campaign/case_space.hpp"
#include "tuner/campaign/confirm_stage.hpp"
#include "tuner/campaign/domain_coverage.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/sanitize_stage.hpp"
#include "tuner/store/verdict_store.hpp"
#include "tuner/table/results_table.hpp"

namespace tunefuzz {

namespace {

/// The table's provenance: the command, the config, the compiler, and the source hash of every template the
/// config searches.
Provenance provenance_of(const Prepared& prepared, const TuneSettings& s) {
  Provenance provenance = make_provenance(s.command_line, prepared.config.file.string(), prepared.compiler);
  for (const TemplateSearch& search : prepared.config.templates) {
    const KernelTemplate& t = find_template(search.name);
    provenance.template_hashes[t.name] = KernelSource::load(template_directory(), t.source_file).hash();
  }
  return provenance;
}

}  // namespace

TuneReport tune_campaign(const Prepared& prepared, const std::vector<ProblemCandidates>& coverage,
                         const DeviceInfo& device, const TuneSettings& s) {
  const Config& config = prepared.config;
  const auto& compiled = prepared.compiled;
  Journal journal = s.resume ? Journal::resume(journal_path(s.output), s.config_sha256)
                             : Journal::create(journal_path(s.output), s.config_sha256);
  if (s.resume) std::fprintf(stderr, "resuming from %s\n", journal.path().c_str());
  const StoreUse store_use{s.store, device.name, device.driver_version};

  FuzzOptions fuzz_options{s.work_directory, config.budgets.fuzz_cases, config.seed,
                           static_cast<int>(config.budgets.fuzz_workers), config.budgets.candidate_timeout_s};
  fuzz_options.journal = &journal;
  fuzz_options.retry_quarantined = s.retry_quarantined;
  fuzz_options.store = store_use;
  fuzz_options.gpus = s.gpus;
  // Fuzz budget by stage: with a screen, every candidate gets the screen's cases now and each winner the full
  // budget after timing (confirm_winners); without one, every candidate gets the full budget now.
  const bool staged = fuzz_is_screened(config);
  if (staged) fuzz_options.cases = config.budgets.fuzz_screen_cases;
  TuneReport report;
  report.fuzzed = fuzz_stage(compiled, fuzz_options);

  TimeOptions time_options{s.work_directory,
                           config.budgets.timing_warmup,
                           config.budgets.timing_repeats,
                           config.budgets.timing_screen_repeats,
                           config.budgets.timing_finalists,
                           config.seed,
                           std::max(600.0, config.budgets.candidate_timeout_s)};
  time_options.strategy = s.strategy.value_or(config.budgets.strategy);
  time_options.limits = config.gpu.limits;
  time_options.journal = &journal;
  time_options.retry_quarantined = s.retry_quarantined;
  time_options.store = store_use;
  time_options.gpus = s.gpus;
  time_options.workers_per_gpu = s.time_workers.value_or(static_cast<int>(config.budgets.time_workers));
  // A screened campaign compiles each winner's twin as soon as its problem is decided, while the others are
  // timed: the confirmation then takes them from the kernel cache.
  std::map<std::string, const Candidate*> candidates_by_id;
  for (const CompiledCandidate& c : compiled) candidates_by_id[c.candidate.id()] = &c.candidate;
  TwinPrefetch twin_prefetch([&](const std::vector<Candidate>& winners) {
    return compile_candidates(config, winners, 1, Twins::perturbed, nullptr, true);
  });
  if (staged) {
    time_options.on_timed = [&](const ProblemTiming& t) {
      const TimedEntry* w = t.winner();
      const auto c = w ? candidates_by_id.find(w->id) : candidates_by_id.end();
      if (c != candidates_by_id.end()) twin_prefetch.add(*c->second);
    };
    // The winners of the table this campaign is to replace (a run again after a template changed, say) are
    // likely to win again: their twins compile from the time stage's start, instead of after the last
    // problems are decided (3-9 s of a code-change step at 4ee0d5f, results/campaign-h200-4ee0d5f/).
    for (const std::string& id : table_winners(s.output)) {
      const auto c = candidates_by_id.find(id);
      if (c != candidates_by_id.end()) twin_prefetch.add(*c->second);
    }
  }
  report.timings = time_stage(config.problems, report.fuzzed, time_options);

  FuzzOptions full = fuzz_options;
  full.cases = config.budgets.fuzz_cases;
  full.seed = confirmation_seed(config.seed);
  full.work_directory = s.work_directory / "confirm";
  SanitizeOptions sanitize_options;
  sanitize_options.work_directory = s.work_directory / "sanitize";
  sanitize_options.workers = static_cast<int>(config.budgets.fuzz_workers);
  sanitize_options.gpus = s.gpus;
  sanitize_options.store = store_use;
  sanitize_options.cases_for = [sm_count = device.limits.sm_count](const Candidate& c) {
    return fuzz::sanitizer_cases(case_space_for(c, sm_count));
  };
  // Before a winner enters the table: its full fuzz budget (with a screen) and the sanitizers, at the same
  // time (the sanitizers need only the winner's own image, the confirmation its twin too). Either may demote
  // it; the next winner must pass both, so the two run again until every winner passed both.
  WinnerCheck confirm, sanitize;
  if (staged)
    confirm = [&](std::vector<ProblemTiming>& t, std::vector<FuzzedCandidate>& f) {
      confirm_winners(t, f, compiled, full, [&](const std::vector<Candidate>& winners) {
        return compile_candidates(config, winners, s.jobs, Twins::perturbed);
      });
    };
  if (s.sanitize)
    sanitize = [&](std::vector<ProblemTiming>& t, std::vector<FuzzedCandidate>& f) {
      sanitize_winners(t, f, sanitize_options);
    };
  check_winners(report.timings, report.fuzzed, confirm, sanitize);
  write_reproducers(report.fuzzed, s.work_directory / "reproducers", template_directory(), device, config.gpu.arch);

  // Only problems with a winner become rows; each without one fails the campaign, named with its reason.
  std::vector<ProblemTiming> won;
  for (size_t i = 0; i < report.timings.size(); ++i) {
    if (report.timings[i].winner())
      won.push_back(report.timings[i]);
    else
      report.no_winner.push_back(why_no_winner(report.timings[i], coverage.at(i), compiled, report.fuzzed));
  }
  write_yaml(s.output,
             results_table(device, provenance_of(prepared, s), won, report.fuzzed, config.budgets.fuzz_cases));
  report.summary = stage_summary(prepared.space, compiled, &report.fuzzed, &report.timings);
  write_yaml(stage_summary_path(s.output), report.summary);
  std::vector<CandidateCoverage> fuzzed_coverage;
  for (const FuzzedCandidate& f : report.fuzzed)
    if (f.passed) fuzzed_coverage.push_back({f.candidate, f.coverage});
  report.domain_coverage = domain_coverage_summary(fuzzed_coverage, device.limits.sm_count);
  return report;
}

}  // namespace tunefuzz
