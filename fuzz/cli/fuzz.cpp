// fuzz: fuzz campaigns over a config's candidates, replays of failures, and proof that the fuzzer works.
//   fuzz run CONFIG [--budget 10m] [--rounds N]       fuzz every compiled candidate in rounds until the
//                [--resume]                           fuzzing budget is spent (or N rounds are done);
//                                                     --resume carries on a killed or stopped campaign
//   fuzz replay FILE [--sanitize TOOL]                run a reproducer's case again (optionally under
//                                                     compute-sanitizer)
//   fuzz mutants CONFIG [--template T] [--cases N]    fuzz each injected bug of a template; replay survivors
//                [--resume]                           under compute-sanitizer; report which were caught;
//                                                     --resume carries on a killed run from its journal
// Exit codes: 0 nothing failed (replay: the case passes), 1 failures found (replay: reproduced; run: also no
// candidate left to fuzz, or fewer cases than one round), 2 bad input, 3 no usable GPU.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <regex>

#include "fuzz/cli/fuzz_main.hpp"
#include "runtime/backend/compiler_for.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/domain_coverage.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/campaign/fuzz_campaign.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/mutants_campaign.hpp"
#include "tuner/campaign/reproducer.hpp"
#include "tuner/campaign/session.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/common/version.hpp"
#include "tuner/table/json.hpp"
#include "tuner/table/results_table.hpp"
#include "tuner/worker/worker_client.hpp"

namespace {

using namespace tunefuzz;
namespace fs = std::filesystem;

struct Options {
  std::string config;
  std::string file;
  std::string budget = "10m";
  std::string work_directory;
  std::string sanitize;
  std::string output;
  uint64_t seed = 0;
  bool seed_given = false;
  int64_t cases = 0;
  int64_t rounds = 0;  ///< run: stop after this many rounds (0: as many as the budget allows)
  int jobs = 0;
  bool huge = false;
  double timeout_s = 0;       ///< mutants: the watchdog per mutant (0: at least 600 s, for the huge cases)
  std::string template_name;  ///< mutants: the template whose bugs to inject (default: the config's first)
  std::vector<std::string> mutant_names;  ///< mutants: only these of the template's bugs (empty: all)
  bool json = false;
  bool resume = false;             ///< run: carry on the campaign in the report's journal
  bool retry_quarantined = false;  ///< run: with --resume, fuzz candidates that were running at two kills
  std::string gpus;                ///< run: `--gpus all|0,2,3` (empty: the GPU this process sees)
  std::string command_line;
};

double parse_budget(const std::string& text) {
  static const std::regex format(R"((\d+(?:\.\d+)?)\s*([smh]?))");
  std::smatch m;
  if (!std::regex_match(text, m, format))
    throw Error(ErrorKind::bad_input, "--budget '" + text + "': expected a duration like 90s, 10m or 1h");
  const double value = std::stod(m[1]);
  const double seconds = m[2] == "h" ? value * 3600 : m[2] == "m" ? value * 60 : value;
  if (!(seconds >= 1 && seconds <= 30 * 86400))
    throw Error(ErrorKind::bad_input, "--budget '" + text + "': must be between 1s and 30 days");
  return seconds;
}

// --seed: a decimal unsigned 64-bit integer (CLI11 alone would wrap -1 and saturate 2^64).
const CLI::Validator kSeedText(
    [](std::string& text) -> std::string {
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || error != std::errc() || end != text.data() + text.size())
        return "expected an unsigned 64-bit integer (0 to 18446744073709551615), got '" + text + "'";
      return {};
    },
    "UINT64");

// The folder for worker files; made by the caller once there is a GPU to write them (a run without one
// leaves nothing behind).
fs::path work_directory_for(const Options& o, const std::string& fallback) {
  return o.work_directory.empty() ? fs::path(fallback) : fs::path(o.work_directory);
}

void print_failures(const std::vector<FuzzedCandidate>& failed, FILE* text) {
  if (failed.empty()) return;
  std::fprintf(text, "\n%-20s %-16s %s\n", "class", "subtype", "candidate / shrunk case / reproducer");
  for (const FuzzedCandidate& f : failed) {
    std::fprintf(text, "%-20s %-16s %s\n", fuzz::to_string(f.failure->failure_class),
                 f.failure->subtype.c_str(), f.candidate.id().c_str());
    std::fprintf(text, "%-37s %s\n", "", fuzz::to_string(f.failure->shrunk_case).c_str());
    if (!f.reproducer.empty()) std::fprintf(text, "%-37s %s\n", "", f.reproducer.c_str());
  }
}

// Says why a candidate is missing from the campaign: each compile-stage prune with its reason (spills with
// their bytes, occupancy, a slow path, a compile error's first line), and the space stage's prunes when it
// kept nothing. Returns why nothing is left to fuzz, or "" when something is.
std::string explain_removed(const Prepared& prepared, FILE* text) {
  int64_t kept = 0;
  for (const CompiledCandidate& c : prepared.compiled) {
    if (c.status == CompileStatus::compiled) {
      ++kept;
      continue;
    }
    std::fprintf(text, "pruned at compile: %-15s %s: %s\n", to_string(c.status), c.candidate.id().c_str(),
                 c.message.substr(0, c.message.find('\n')).c_str());
  }
  if (kept > 0) return "";
  if (!prepared.compiled.empty())
    return "compilation pruned all " + std::to_string(prepared.compiled.size()) +
           " candidates (each with its reason above)";
  std::string why = "the space stage made no candidate:";
  for (const SpaceReport& r : prepared.space.reports) {
    why += " " + r.kernel_template->name + " kept " + std::to_string(r.kept.size()) + " of " +
           std::to_string(r.enumerated) + " points";
    for (const PruneCount& p : r.pruned)
      if (p.count) why += " (" + std::to_string(p.count) + " pruned by " + p.constraint + ")";
  }
  return why + "; or no template computes the element types of the config's problems";
}

// The run's header: what it fuzzes, with which seed and budget.
void print_header(const Options& o, const FuzzRunSettings& s, FILE* text) {
  std::fprintf(text, "fuzz campaign: %s, seed %llu, budget %s", o.config.c_str(),
               static_cast<unsigned long long>(s.seed), o.budget.c_str());
  if (s.rounds > 0) std::fprintf(text, " or %lld rounds", static_cast<long long>(s.rounds));
  std::fprintf(text,
               " of fuzzing over every call (compiling took %.0f s), %lld cases per candidate and round\n",
               s.compile_seconds, static_cast<long long>(s.cases));
}

void print_report(const FuzzRunReport& r, const std::string& domain, FILE* text) {
  std::fprintf(text, "\n%lld rounds, %lld cases in %.0f s of fuzzing over %zu call%s; seed %llu\n",
               static_cast<long long>(r.rounds), static_cast<long long>(r.cases), r.seconds(), r.calls.size(),
               r.calls.size() == 1 ? "" : "s", static_cast<unsigned long long>(r.seed));
  if (r.last_round_not_started > 0)
    std::fprintf(text, "the budget ran out during the last round: %lld candidates not fuzzed in it\n",
                 static_cast<long long>(r.last_round_not_started));
  if (r.plain_job_seconds > 0 && r.perturbed_job_seconds > 0)
    std::fprintf(text, "cases per second of one worker: %.2f on plain images, %.2f on perturbed twins\n",
                 static_cast<double>(r.timed_plain_cases) / r.plain_job_seconds,
                 static_cast<double>(r.timed_perturbed_cases) / r.perturbed_job_seconds);
  std::fprintf(text, "coverage (cases per tag):\n");
  for (const auto& [tag, count] : r.coverage)
    std::fprintf(text, "  %-18s %lld\n", tag.c_str(), static_cast<long long>(count));
  std::fprintf(text, "%s\n", domain.c_str());
  if (!r.empty_work().empty()) std::fprintf(text, "empty work: %s\n", r.empty_work().c_str());
  for (const std::string& id : r.quarantined)
    std::fprintf(text, "quarantined (running at two kills in a row; --retry-quarantined fuzzes it): %s\n",
                 id.c_str());
  std::map<std::string, int64_t> by_class;
  for (const FuzzedCandidate& f : r.failed) ++by_class[fuzz::to_string(f.failure->failure_class)];
  std::fprintf(text, "failures: %zu", r.failed.size());
  for (const auto& [name, count] : by_class)
    std::fprintf(text, ", %lld %s", static_cast<long long>(count), name.c_str());
  std::fprintf(text, "\n");
  print_failures(r.failed, text);
}

int command_run(const Options& o) {
  FuzzRunSettings s;
  s.budget_s = parse_budget(o.budget);
  const GpuChoice gpu_choice = o.gpus.empty() ? GpuChoice{} : parse_gpu_choice(o.gpus);  // checked up front
  if (!o.sanitize.empty()) s.sanitizer = sanitizer_wrapper(o.sanitize);                  // checked up front
  FILE* text = o.json ? stderr : stdout;  // with --json, standard output holds only the JSON report
  // While the candidates compile, the GPU is probed and the fuzz workers start (session.hpp).
  std::optional<EarlyDevices> early;
  if (cluster::rank() == 0)
    early.emplace(load_config(o.config), gpu_choice, work_directory_for(o, "fuzz-work"));
  const auto compile_start = std::chrono::steady_clock::now();
  const Prepared prepared = prepare(o.config, o.jobs, Twins::perturbed);
  s.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  if (cluster::rank() > 0) return serve_rank(gpu_choice);  // rank 0 runs the campaign, on every rank's GPUs
  const Config& config = prepared.config;
  // Nothing left to fuzz is a failure, said before the probe's answer is used.
  const std::string nothing_to_fuzz = explain_removed(prepared, text);
  if (!nothing_to_fuzz.empty()) {
    std::fprintf(stderr, "fuzz: nothing to fuzz: %s\n", nothing_to_fuzz.c_str());
    if (o.json) {
      YAML::Node report;
      report["format"] = "tunefuzz-fuzz-run/1";
      report["cases"] = 0;
      report["empty_work"] = nothing_to_fuzz;
      std::fputs(to_json(report).c_str(), stdout);
    }
    return 1;
  }
  s.work_directory = work_directory_for(o, "fuzz-work");
  const fs::path output = o.output.empty() ? s.work_directory / "fuzz-run.yaml" : fs::path(o.output);
  s.journal = journal_path(output);
  s.resume = o.resume;
  s.retry_quarantined = o.retry_quarantined;
  s.config_sha256 = sha256_hex(read_whole_file(o.config));
  s.arch = config.gpu.arch;
  s.rounds = o.rounds;
  s.cases = o.cases ? o.cases : config.budgets.fuzz_cases;
  s.seed = o.seed_given ? o.seed : config.seed;
  s.workers = static_cast<int>(config.budgets.fuzz_workers);
  s.timeout_s =
      o.huge ? std::max(600.0, config.budgets.candidate_timeout_s) : config.budgets.candidate_timeout_s;
  s.huge_weight = o.huge ? 1 : 0;
  const DeviceInfo device = early->get(s.gpus);
  print_header(o, s, text);

  const FuzzRunReport r = fuzz_campaign(prepared.compiled, device, s);
  std::vector<CandidateCoverage> covered;
  for (const FuzzedCandidate& f : r.totals) covered.push_back({f.candidate, f.coverage});
  const std::string domain = domain_coverage_summary(covered, device.limits.sm_count);
  print_report(r, domain, text);
  YAML::Node report = to_yaml(r);
  report["command"] = o.command_line;
  report["domain_coverage"] = domain;
  write_yaml(output, report);
  std::fprintf(text, "report: %s\n", output.c_str());
  if (o.json) std::fputs(to_json(report).c_str(), stdout);
  return r.succeeded() ? 0 : 1;
}

int command_replay(const Options& o) {
  const Reproducer r = read_reproducer(o.file);
  const Candidate candidate = parse_candidate_id(r.candidate);
  // Everything the reproducer asks of the compiler is checked before a GPU is looked for.
  compiler_for(GpuSpec{"", r.arch, {}, {o.file, 0, 0, "arch"}, {o.file, 0, 0, "arch"}});
  const fs::path work = work_directory_for(o, "fuzz-work");
  // The reproducer names the arch; the limits are this machine's (a replay has no config of its own).
  const ProbeOutcome probe = probe_device(ScratchDirectory().path);
  if (!probe.device) throw Error(ErrorKind::no_device, "no usable GPU: " + probe.reason);
  const DeviceInfo& device = *probe.device;
  fs::create_directories(work);
  if (device.arch != r.arch)
    throw Error(ErrorKind::bad_input,
                "the reproducer was recorded for " + r.arch + " but this GPU is " + device.arch,
                {o.file, 0, 0, "arch"});
  Config config;
  config.gpu = {device.name, device.arch, device.limits, {}, {}};
  const auto compiled = compile_candidates(config, {candidate}, o.jobs, Twins::none);
  if (compiled.front().status == CompileStatus::compile_failed)
    throw Error(ErrorKind::compile,
                "the reproducer's candidate no longer compiles: " + compiled.front().message);
  const std::vector<std::string> wrapper =
      o.sanitize.empty() ? std::vector<std::string>{} : sanitizer_wrapper(o.sanitize);
  CaseJob job{{{r.candidate, compiled.front().image, {r.failure.shrunk_case}}}, 2, work / "replay.progress"};
  std::printf("replaying %s\n  case %s\n  recorded on %s (driver %s): %s%s%s\n  now on %s (driver %s)%s\n",
              r.candidate.c_str(), fuzz::to_string(r.failure.shrunk_case).c_str(), r.card.c_str(),
              r.driver.c_str(), fuzz::to_string(r.failure.failure_class),
              r.failure.subtype.empty() ? "" : "/", r.failure.subtype.c_str(), device.name.c_str(),
              device.driver_version.c_str(),
              o.sanitize.empty() ? "" : (" under compute-sanitizer --tool " + o.sanitize).c_str());
  const WorkerOutcome outcome =
      run_worker(to_yaml(job), work, "replay", o.sanitize.empty() ? 300 : 1800, wrapper);
  if (!o.sanitize.empty())
    std::printf("\n--- compute-sanitizer / worker output ---\n%s\n", outcome.stderr_tail.c_str());
  if (outcome.end != WorkerOutcome::End::finished) {
    std::printf("result: %s\n", outcome.describe().c_str());
    return 1;
  }
  const CaseResult result = case_result_from_yaml(outcome.result);
  if (result.passed) {
    if (result.refused)
      std::printf("result: refused (the candidate does not take this case; not reproduced): %s\n",
                  result.message.c_str());
    else
      std::printf("result: passed (not reproduced)\n");
    return 0;
  }
  std::printf("result: %s%s%s: %s\n", result.failure_class.c_str(), result.subtype.empty() ? "" : "/",
              result.subtype.c_str(), result.message.c_str());
  return 1;
}

// One mutant's line of the table `fuzz mutants` prints as its verdicts come.
void print_verdict(const MutantVerdict& v) {
  const char* name = v.mutant.c_str();
  switch (v.outcome) {
    case MutantOutcome::same_code:
      std::printf("%-18s %-7s %6s  %s\n", name, "no", "-",
                  "not fuzzed: the unmutated candidate's code at this base point");
      break;
    case MutantOutcome::not_fuzzed:
      std::printf("%-18s %-7s %6s  not fuzzed: %s\n", name, "no", "-", v.message.c_str());
      break;
    case MutantOutcome::inconclusive:
      std::printf("%-18s %-7s %6s  inconclusive (%s)\n", name, "no", "-", v.message.substr(0, 120).c_str());
      break;
    case MutantOutcome::survived:
      std::printf("%-18s %-7s %6lld  survived\n", name, "no", static_cast<long long>(v.cases));
      break;
    case MutantOutcome::killed_by_sanitizer:
      std::printf("%-18s %-7s %6lld  %-22s %s  (%s)\n", name, "yes", static_cast<long long>(v.cases),
                  v.failure_class.c_str(), fuzz::to_string(*v.shrunk_case).c_str(),
                  v.message.substr(0, 120).c_str());
      break;
    case MutantOutcome::killed_by_cases:
      std::printf("%-18s %-7s %6lld  %-22s %s%s%s\n", name, v.perturbed ? "yes (p)" : "yes",
                  static_cast<long long>(v.cases), v.failure_class.c_str(),
                  fuzz::to_string(*v.shrunk_case).c_str(),
                  v.within_two_tiles ? "" : "  (more than two tiles)",
                  v.perturbed ? "  (p: on the perturbed twin)" : "");
      break;
  }
}

int command_mutants(const Options& o) {
  MutantsSettings s;
  s.template_name = o.template_name;
  s.mutant_names = o.mutant_names;
  s.jobs = o.jobs;
  // What outputs rarely show (a race that needs unlucky timing) compute-sanitizer's tools often do: mutants
  // that survive the fuzz cases are replayed under one, once the unmutated candidate is seen to pass it.
  s.sanitizer_tool = o.sanitize.empty() ? "synccheck" : o.sanitize;
  if (s.sanitizer_tool != "none") sanitizer_wrapper(s.sanitizer_tool);  // checked before anything compiles
  // Compile the config's space only to learn the base point; then the mutants.
  const Config config = load_config(o.config);
  const MutantsPlan plan = plan_mutants(config, space_stage(config), s);
  s.work_directory = work_directory_for(o, "fuzz-work");
  const DeviceInfo device = require_device(config);
  s.cases = o.cases ? o.cases : 200;
  s.seed = o.seed_given ? o.seed : config.seed;
  s.workers = static_cast<int>(config.budgets.fuzz_workers);
  // Huge cases (C beyond 2^31 elements) are what exposes 32-bit offsets; each takes seconds, so allow time.
  s.timeout_s = o.timeout_s > 0 ? o.timeout_s : std::max(600.0, config.budgets.candidate_timeout_s);
  const fs::path output = o.output.empty() ? s.work_directory / "mutants.yaml" : fs::path(o.output);
  s.journal = journal_path(output);  // each verdict as it comes: a killed run keeps them for --resume
  s.resume = o.resume;
  s.config_sha256 = sha256_hex(read_whole_file(o.config));
  bool headed = false;
  const auto head = [&](const MutantsReport& r) {
    if (headed) return;
    headed = true;
    if (!r.sanitizer_control.empty()) std::printf("note: %s\n", r.sanitizer_control.c_str());
    std::printf("\nbase %s, %lld cases per mutant, seed %llu\n%-18s %-7s %6s  %-22s %s\n",
                plan.base.id().c_str(), static_cast<long long>(s.cases),
                static_cast<unsigned long long>(s.seed), "mutant", "killed", "cases", "class", "shrunk case");
  };
  const MutantsReport r =
      run_mutants(plan, config, device, s, [&](const MutantsReport& so_far, const MutantVerdict& v) {
        head(so_far);
        print_verdict(v);
      });
  head(r);
  const YAML::Node report = to_yaml(r, o.command_line, o.config);
  write_yaml(output, report);
  std::printf("%d of %zu mutants survived; report: %s\n", r.survivors(), r.mutants.size(), output.c_str());
  return r.survivors() == 0 ? 0 : 1;
}

}  // namespace

int tunefuzz::cli::fuzz_main(int argc, char** argv) {
  CLI::App app{"fuzz: fuzz kernel candidates against the oracle, replay failures, validate the fuzzer"};
  app.require_subcommand(1);
  Options o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App* run =
      app.add_subcommand("run", "fuzz every compiled candidate of a config until the budget is spent");
  run->add_option("config", o.config, "campaign config")->required();
  run->add_option("--budget", o.budget,
                  "wall-clock budget of the fuzzing, compiling not counted: 90s, 10m, 1h (default 10m)");
  run->add_option("--rounds", o.rounds,
                  "stop after this many rounds, if the budget lasts (default: no limit)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  run->add_option("--seed", o.seed, "base seed (default: the config's)")
      ->check(kSeedText)
      ->each([&](const std::string&) { o.seed_given = true; });
  run->add_option("--cases", o.cases, "cases per candidate and round (default: the config's fuzz_cases)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  run->add_option("--work-dir", o.work_directory, "worker jobs, logs and reproducers (default: fuzz-work)");
  run->add_option("-j,--jobs", o.jobs, "compiler threads")->check(CLI::Range(1, 1024));
  run->add_option("--gpus", o.gpus,
                  "all, or GPU indices like 0,2,3: a worker pool per GPU, one model only "
                  "(default: the GPU the process sees)")
      ->check(CLI::Validator([](std::string& text) { return gpu_choice_error(text); }, "all|0,2,3"));
  run->add_option("-o,--output", o.output, "report file (default: WORK/fuzz-run.yaml)");
  run->add_flag("--json", o.json, "print the report as one JSON document on standard output");
  run->add_flag("--huge", o.huge,
                "also generate cases whose C offsets cross 2^31 elements (seconds and 8+ GB each)");
  run->add_flag(
      "--resume", o.resume,
      "carry on the campaign whose journal is beside the report (REPORT.journal; starts one when there "
      "is none): finished rounds and verdicts are not redone, and the budget counts every call");
  run->add_flag("--retry-quarantined", o.retry_quarantined,
                "with --resume: fuzz again the candidates that were running at two kills in a row");
  run->add_option("--sanitize", o.sanitize,
                  "also run a tenth as many cases per candidate and round under compute-sanitizer: memcheck, "
                  "racecheck, synccheck or initcheck");

  CLI::App* replay = app.add_subcommand("replay", "run a reproducer's case again");
  replay->add_option("file", o.file, "reproducer file (reproducers/*.yaml)")->required();
  replay
      ->add_option("--sanitize", o.sanitize,
                   "run under compute-sanitizer: memcheck, racecheck, synccheck, initcheck")
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));
  replay->add_option("--work-dir", o.work_directory, "worker files (default: fuzz-work)");

  CLI::App* mutants = app.add_subcommand("mutants", "fuzz each injected bug; report which the fuzzer caught");
  mutants
      ->add_option("config", o.config, "campaign config (its space picks the point bugs are injected into)")
      ->required();
  mutants->add_option("--cases", o.cases, "cases per mutant (default 200)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  mutants->add_option("--template", o.template_name,
                      "the template whose bugs are injected (default: the first the config searches)");
  mutants->add_option("--mutant", o.mutant_names,
                      "only this injected bug (repeatable; default: every bug the template declares)");
  mutants
      ->add_option("--timeout", o.timeout_s,
                   "seconds before a mutant's worker counts as hung (default: 600, or the config's "
                   "candidate_timeout_s if longer: huge cases take seconds each); a kernel that never "
                   "returns is a hang after 30 s regardless")
      ->check(CLI::Range(1.0, 604800.0));
  mutants->add_option("--seed", o.seed, "seed (default: the config's)")
      ->check(kSeedText)
      ->each([&](const std::string&) { o.seed_given = true; });
  mutants->add_option("-o,--output", o.output, "report file (default: WORK/mutants.yaml)");
  mutants->add_option("--work-dir", o.work_directory, "worker files (default: fuzz-work)");
  mutants
      ->add_option("--sanitize", o.sanitize,
                   "compute-sanitizer tool the mutants that survive the fuzz cases are replayed under, "
                   "after the unmutated candidate passes it: synccheck (default), racecheck, memcheck, "
                   "initcheck, or none")
      ->check(CLI::IsMember({"synccheck", "racecheck", "memcheck", "initcheck", "none"}));
  mutants->add_flag("--resume", o.resume,
                    "carry on the run whose journal is beside the report (REPORT.journal; starts one when "
                    "there is none): the mutants it fuzzed are not fuzzed again");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (cluster::size() > 1 && !*run)
      throw Error(ErrorKind::bad_input, "only `fuzz run` splits its work over MPI ranks; run `fuzz " +
                                            app.get_subcommands().front()->get_name() + "` without mpirun");
    if (*run) return command_run(o);
    if (*replay) return command_replay(o);
    return command_mutants(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "fuzz: error: %s\n", e.what());
    if (!e.detail().empty()) std::fprintf(stderr, "%s\n", e.detail().c_str());
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: internal error: %s\n", e.what());
    return 1;
  }
}
