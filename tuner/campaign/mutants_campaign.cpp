#include "tuner/campaign/mutants_campaign.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>

#include "tuner/campaign/case_space.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/sanitize_stage.hpp"
#include "tuner/campaign/session.hpp"
#include "tuner/table/results_table.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

namespace {

// Whether two files hold the same bytes (two compiled images).
bool same_bytes(const fs::path& a, const fs::path& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  return std::equal(std::istreambuf_iterator<char>(fa), std::istreambuf_iterator<char>(),
                    std::istreambuf_iterator<char>(fb), std::istreambuf_iterator<char>());
}

// A survivor's sanitizer replays: fuzz::sanitizer_cases of the candidate's own case space under `tool`.
std::optional<SanitizerFinding> replay_finding(const CompiledCandidate& compiled, const std::string& tool,
                                               const fs::path& work, const std::string& name,
                                               int64_t sm_count) {
  return sanitizer_finding(compiled.candidate, compiled.image, tool,
                           fuzz::sanitizer_cases(case_space_for(compiled.candidate, sm_count)), work, name);
}

/// The verdict on a mutant that was fuzzed: by its first failure, else by the sanitizer's replays (unless
/// `replay` is null: no sanitizer, or the control fails it too).
MutantVerdict judged(const std::string& name, const CompiledCandidate& c, const FuzzedCandidate& f,
                     const std::function<std::optional<SanitizerFinding>()>& replay, const std::string& tool) {
  MutantVerdict v;
  v.mutant = name;
  if (f.quarantined) {
    v.outcome = MutantOutcome::inconclusive;
    v.message =
        "quarantined: it was being fuzzed each time the last two runs of its journal died (run without "
        "--resume to fuzz it again)";
    return v;
  }
  if (f.failure && f.failure->failure_class != fuzz::FailureClass::timeout) {
    const FuzzFailure& failure = *f.failure;
    const OutputTile tile = stated_tile(*c.candidate.kernel_template, c.candidate.point);
    v.outcome = MutantOutcome::killed_by_cases;
    v.perturbed = failure.perturb;
    // A failure on the perturbed twin came after the plain cases had all passed.
    v.cases = failure.perturb ? f.cases_run - f.perturbed_cases_run + failure.cases_until_failure
                              : failure.cases_until_failure;
    v.failure_class = std::string(fuzz::to_string(failure.failure_class)) +
                      (failure.subtype.empty() ? "" : "/" + failure.subtype);
    v.shrunk_case = failure.shrunk_case;
    v.within_two_tiles = failure.shrunk_case.m <= 2 * tile.rows && failure.shrunk_case.n <= 2 * tile.cols &&
                         failure.shrunk_case.k <= 2 * c.candidate.point["BK"];
    v.shrink_steps = failure.shrink_steps;
    v.message = failure.message.substr(0, 300);
    v.reproducer = f.reproducer;
    return v;
  }
  // The outputs never exposed it, or time ran out in host work (a huge case) before they could.
  if (const auto finding = replay ? replay() : std::nullopt) {
    v.outcome = MutantOutcome::killed_by_sanitizer;
    v.cases = f.cases_run;
    v.failure_class = "sanitizer/" + tool;
    v.shrunk_case = finding->record;
    v.message = finding->message.substr(0, 300);
  } else if (!f.failure) {
    v.outcome = MutantOutcome::survived;
    v.cases = f.cases_run;
  } else {
    v.outcome = MutantOutcome::inconclusive;
    v.message = f.failure->message.substr(0, 300);
  }
  return v;
}

}  // namespace

const char* to_string(MutantOutcome outcome) {
  switch (outcome) {
    case MutantOutcome::killed_by_cases:
      return "killed_by_cases";
    case MutantOutcome::killed_by_sanitizer:
      return "killed_by_sanitizer";
    case MutantOutcome::survived:
      return "survived";
    case MutantOutcome::inconclusive:
      return "inconclusive";
    case MutantOutcome::not_fuzzed:
      return "not_fuzzed";
    case MutantOutcome::same_code:
      return "same_code";
  }
  return "?";
}

int MutantsReport::survivors() const {
  return static_cast<int>(
      std::count_if(mutants.begin(), mutants.end(), [](const MutantVerdict& v) { return !v.killed(); }));
}

Candidate mutant_base(const Config& config, const SpaceStage& space, const std::string& template_name) {
  for (const SpaceReport& report : space.reports) {
    const KernelTemplate& t = *report.kernel_template;
    if (report.kept.empty() || (!template_name.empty() && t.name != template_name)) continue;
    const Point defaults = t.default_point();
    const Point base = std::find(report.kept.begin(), report.kept.end(), defaults) != report.kept.end()
                           ? defaults
                           : report.kept.front();
    for (const Problem& problem : config.problems) {
      const TypePair types{problem.input, problem.output};
      if (std::find(t.supported_types.begin(), t.supported_types.end(), types) != t.supported_types.end())
        return {&t, base, types};
    }
  }
  throw Error(ErrorKind::bad_input, template_name.empty()
                                        ? std::string("the config's spaces keep no point to inject bugs into")
                                        : "the config keeps no point of template " + template_name +
                                              " for any of its problems' element types");
}

MutantsPlan plan_mutants(const Config& config, const SpaceStage& space, const MutantsSettings& settings) {
  MutantsPlan plan;
  plan.base = mutant_base(config, space, settings.template_name);
  const std::vector<std::string>& names = plan.base.kernel_template->mutants;
  if (names.size() < 2)
    throw Error(ErrorKind::unsupported, "template " + plan.base.kernel_template->name + " declares no injected bugs");
  for (const std::string& wanted : settings.mutant_names)
    if (std::find(names.begin() + 1, names.end(), wanted) == names.end()) {
      std::string known;
      for (size_t code = 1; code < names.size(); ++code) known += (code > 1 ? ", " : "") + names[code];
      throw Error(ErrorKind::bad_input, "--mutant " + wanted + ": template " + plan.base.kernel_template->name +
                                            " declares no such injected bug (it has " + known + ")");
    }
  std::vector<Candidate> candidates = {plan.base};  // the control first: compiled, not fuzzed
  for (size_t code = 1; code < names.size(); ++code) {
    const auto& only = settings.mutant_names;
    if (!only.empty() && std::find(only.begin(), only.end(), names[code]) == only.end()) continue;
    Candidate m = plan.base;
    m.mutant = static_cast<int>(code);
    candidates.push_back(m);
  }
  Config spills_allowed = config;
  spills_allowed.pruning.allow_spills = true;
  plan.mutants = compile_candidates(spills_allowed, candidates, settings.jobs, Twins::perturbed);
  plan.control = plan.mutants.front();
  plan.mutants.erase(plan.mutants.begin());
  for (const CompiledCandidate& c : plan.mutants)
    if (c.status == CompileStatus::compiled && plan.control.status == CompileStatus::compiled &&
        same_bytes(c.image, plan.control.image))
      plan.same_code.insert(c.candidate.mutant);
  return plan;
}

namespace {

// What decides a mutants run's verdicts, as the journal's `mutants_run` line holds it.
YAML::Node run_event(const MutantsPlan& plan, const MutantsSettings& s) {
  YAML::Node event;
  event["event"] = "mutants_run";
  event["base"] = plan.base.id();
  event["cases"] = std::to_string(s.cases);
  event["seed"] = std::to_string(s.seed);
  return event;
}

}  // namespace

MutantsReport run_mutants(
    const MutantsPlan& plan, const Config& config, const DeviceInfo& device, const MutantsSettings& settings,
    const std::function<void(const MutantsReport& so_far, const MutantVerdict& verdict)>& on_verdict) {
  const std::string& tool = settings.sanitizer_tool;
  const std::vector<std::string> wrapper =
      tool == "none" ? std::vector<std::string>{} : sanitizer_wrapper(tool);
  const fs::path& work = settings.work_directory;
  fs::create_directories(work);
  std::vector<CompiledCandidate> to_fuzz;
  for (const CompiledCandidate& c : plan.mutants)
    if (!plan.same_code.count(c.candidate.mutant)) to_fuzz.push_back(c);
  FuzzOptions options{work, settings.cases, settings.seed, settings.workers, settings.timeout_s, 1};
  std::optional<Journal> journal;
  if (!settings.journal.empty()) {
    if (settings.journal.has_parent_path()) fs::create_directories(settings.journal.parent_path());
    journal.emplace(open_run_journal(settings.journal, settings.config_sha256, run_event(plan, settings),
                                     "fuzz mutants", settings.resume));
    options.journal = &*journal;
  }
  std::vector<FuzzedCandidate> fuzzed = fuzz_stage(to_fuzz, options);
  write_reproducers(fuzzed, work / "reproducers", template_directory(), device, config.gpu.arch);
  const int64_t sm_count = config.gpu.limits.sm_count;

  MutantsReport report;
  report.card = device.name;
  report.driver = device.driver_version;
  report.base = plan.base;
  report.cases = settings.cases;
  report.seed = settings.seed;
  report.sanitizer = wrapper.empty() ? std::string("none") : "compute-sanitizer --tool " + tool;
  bool replays = !wrapper.empty();
  if (replays) {
    if (plan.control.status != CompileStatus::compiled)
      throw Error(ErrorKind::compile, "the unmutated candidate " + plan.control.candidate.id() +
                                          " did not compile: " + plan.control.message.substr(0, 300));
    if (const auto finding = replay_finding(plan.control, tool, work, "sanitize-none", sm_count)) {
      report.sanitizer_control = "the unmutated candidate fails under " + tool + " too, so no mutant is " +
                                 "judged by it: " + fuzz::to_string(finding->record) + ": " + finding->message;
      replays = false;
    }
  }
  const std::vector<std::string>& names = plan.base.kernel_template->mutants;
  for (const CompiledCandidate& c : plan.mutants) {
    const std::string& name = names[static_cast<size_t>(c.candidate.mutant)];
    const auto it = std::find_if(fuzzed.begin(), fuzzed.end(), [&](const FuzzedCandidate& f) {
      return f.candidate.id() == c.candidate.id();
    });
    MutantVerdict v;
    if (plan.same_code.count(c.candidate.mutant)) {
      v.mutant = name;
      v.outcome = MutantOutcome::same_code;
    } else if (c.status != CompileStatus::compiled || it == fuzzed.end()) {
      v.mutant = name;
      v.outcome = MutantOutcome::not_fuzzed;
      v.message = std::string(to_string(c.status)) + " " + c.message.substr(0, 200);
    } else {
      const auto replay = [&]() { return replay_finding(c, tool, work, "sanitize-" + name, sm_count); };
      v = judged(name, c, *it, replays ? std::function<std::optional<SanitizerFinding>()>(replay) : nullptr, tool);
    }
    if (on_verdict) on_verdict(report, v);
    report.mutants.push_back(std::move(v));
  }
  return report;
}

YAML::Node to_yaml(const MutantsReport& r, const std::string& command, const std::string& config) {
  YAML::Node report = report_head("tunefuzz-mutants/1", r.card, r.driver);
  report["command"] = command;
  report["config"] = config;
  report["base_candidate"] = r.base.id();
  report["cases_budget"] = r.cases;
  report["seed"] = r.seed;
  report["sanitizer"] = r.sanitizer;
  if (!r.sanitizer_control.empty()) report["sanitizer_control"] = r.sanitizer_control;
  for (const MutantVerdict& v : r.mutants) {
    YAML::Node row;
    row["mutant"] = v.mutant;
    row["killed"] = v.killed();
    switch (v.outcome) {
      case MutantOutcome::same_code:
        row["note"] = std::string(
            "not fuzzed: compiles to the unmutated candidate's code at this base point (the bug is in code it "
            "does not compile); pick a base point that has it");
        break;
      case MutantOutcome::not_fuzzed:
        row["note"] = "not fuzzed: " + v.message;
        break;
      case MutantOutcome::inconclusive:
        row["note"] = "inconclusive: " + v.message;
        break;
      case MutantOutcome::survived:
        row["cases"] = v.cases;
        break;
      case MutantOutcome::killed_by_sanitizer:
        row["caught_by"] = r.sanitizer;
        row["cases_until_detection"] = v.cases;
        row["class"] = v.failure_class;
        row["shrunk_case"] = to_yaml(*v.shrunk_case);
        row["message"] = v.message;
        break;
      case MutantOutcome::killed_by_cases:
        row["caught_by"] = v.perturbed ? "fuzz cases, schedule-perturbed" : "fuzz cases";
        row["cases_until_detection"] = v.cases;
        row["class"] = v.failure_class;
        row["shrunk_case"] = to_yaml(*v.shrunk_case);
        row["shrunk_within_two_tiles"] = v.within_two_tiles;
        row["shrink_steps"] = v.shrink_steps;
        row["message"] = v.message;
        if (!v.reproducer.empty()) row["reproducer"] = v.reproducer.string();
        break;
    }
    report["mutants"].push_back(row);
  }
  return report;
}

}  // namespace tunefuzz
