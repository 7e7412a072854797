// tune: the tuning campaign's command line.
//   tune space CONFIG [--template T] [--explain P]  enumerate and prune the spaces (P: 'BM=128,BN=256')
//   tune compile CONFIG [--jobs N]                   compile every kept candidate (NVRTC or hiprtc; no GPU)
//   tune run [CONFIG] [--output PATH] [--resume]     compile, fuzz, time against cuBLAS, write the table
//            [--strategy exhaustive|halving|model]  (how each problem's candidates are searched)
//            [--time-workers N]                     (problems timed at once on each GPU, in turns)
//   tune check TABLE [--record-digests]              exit 1 when a table is stale for this tree and machine
//   tune replay CONFIG JOURNAL [--strategy S]        search strategies replayed on a campaign's recorded
//   timings tune show | export | merge | report TABLE...      read, convert, combine and chart results tables
// --json on space, compile, run and show prints one JSON document on standard output.
// Exit codes: 0 success, 1 failure, 2 bad input (config errors name file:line:field), 3 no usable GPU.
#include <CLI/CLI.hpp>

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "runtime/backend/compiler.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "runtime/dispatch/results_reader.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/campaign/problem_coverage.hpp"
#include "tuner/campaign/session.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/campaign/tune_campaign.hpp"
#include "tuner/cli/replay_command.hpp"
#include "tuner/cli/table_commands.hpp"
#include "tuner/cli/tune_main.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/common/version.hpp"
#include "tuner/table/json.hpp"
#include "tuner/table/results_table.hpp"
#include "tuner/table/staleness.hpp"
#include "tuner/worker/worker_client.hpp"

namespace {

using namespace tunefuzz;
namespace fs = std::filesystem;

struct Options {
  std::string config;
  std::string explain;
  std::string template_name;
  std::string output;
  std::string work_directory;
  int jobs = 0;
  bool resume = false;
  bool no_sanitize = false;  ///< run: skip replaying the winners under compute-sanitizer
  bool retry_quarantined = false;
  bool no_store = false;  ///< run: neither take verdicts from the verdict store nor file new ones
  std::string gpus;       ///< run: `--gpus all|0,2,3` (empty: the GPU this process sees, as always)
  std::string table;
  bool require_gpu = false;
  bool record_digests = false;
  bool json = false;
  bool embed_kernels = false;  ///< export --format cmake: the winners' images compiled ahead of time
  std::vector<std::string> tables;
  std::vector<std::string> strategies;  ///< replay: the strategies to replay (default: all)
  std::string strategy;                 ///< run: the search strategy (default: the config's budgets.strategy)
  int time_workers = 0;                 ///< run: problems timed at once per GPU (0: the config's)
  std::string journal;
  std::string format, prefer, problem, x, y;
  std::string command_line;
};

// --json: the same facts as the text output, as one JSON document on standard output.
void print_json(const YAML::Node& node) {
  std::fputs(to_json(node).c_str(), stdout);
}

YAML::Node space_node(const SpaceStage& stage) {
  YAML::Node out;
  for (const SpaceReport& r : stage.reports) {
    YAML::Node t;
    t["template"] = r.kernel_template->name;
    t["enumerated"] = r.enumerated;
    YAML::Node pruned(YAML::NodeType::Map);
    for (const PruneCount& p : r.pruned)
      if (p.count) pruned[p.constraint] = p.count;
    t["pruned"] = pruned;
    t["kept"] = static_cast<int64_t>(r.kept.size());
    for (const Point& point : r.kept) t["points"].push_back(point.str());
    out["templates"].push_back(t);
  }
  out["candidates"] = static_cast<int64_t>(stage.candidates.size());
  return out;
}

void print_space(const SpaceReport& r) {
  std::printf("template %s: %s\n", r.kernel_template->name.c_str(), r.kernel_template->summary.c_str());
  std::printf("  enumerated %lld\n", static_cast<long long>(r.enumerated));
  for (const PruneCount& p : r.pruned)
    if (p.count)
      std::printf("  pruned %6lld  %-22s %s\n", static_cast<long long>(p.count), p.constraint.c_str(),
                  p.reason.c_str());
  std::printf("  kept       %lld\n", static_cast<long long>(r.kept.size()));
}

// Whether `t` declares every parameter an assignment `NAME=VALUE,...` names.
bool declares_all(const KernelTemplate& t, const std::string& assignment) {
  for (size_t start = 0; start <= assignment.size();) {
    const size_t end = std::min(assignment.find(',', start), assignment.size());
    const std::string part = assignment.substr(start, end - start);
    if (!t.parameter(part.substr(0, part.find('=')))) return false;
    start = end + 1;
  }
  return true;
}

int command_space(const Options& o) {
  Config config = load_config(o.config);
  if (!o.template_name.empty()) {  // only the searches of one template
    find_template(o.template_name);
    std::erase_if(config.templates, [&](const TemplateSearch& s) { return s.name != o.template_name; });
    if (config.templates.empty())
      throw Error(ErrorKind::bad_input, o.config + " searches no template '" + o.template_name + "'");
  }
  if (!o.explain.empty()) {
    YAML::Node explained;
    int explanations = 0;
    for (const TemplateSearch& search : config.templates) {
      const KernelTemplate& t = find_template(search.name, search.where);
      // Templates name their parameters differently (gemm_mma's WM, gemm_simt's TM): a point is explained in
      // the searches whose template declares every parameter it names.
      if (!declares_all(t, o.explain)) continue;
      ++explanations;
      const Space space(t, search, config.gpu.limits);
      const Explanation e = space.explain(o.explain);
      if (o.json) {
        YAML::Node n;
        n["template"] = t.name;
        n["point"] = e.point.str();
        n["kept"] = e.kept();
        n["threads"] = e.threads;
        n["shared_memory_bytes"] = e.shared_memory_bytes;
        for (const auto& [constraint, holds] : e.verdicts) n["constraints"][constraint->name] = holds;
        for (const auto& name : e.not_in_space) n["not_in_space"].push_back(name);
        explained["explanations"].push_back(n);
        continue;
      }
      std::printf("%s %s on %s: %s\n", t.name.c_str(), e.point.str().c_str(), config.gpu.name.c_str(),
                  e.kept() ? "KEPT" : "PRUNED");
      std::printf("  threads per CTA %lld, shared memory %lld bytes (limit %lld)\n",
                  static_cast<long long>(e.threads), static_cast<long long>(e.shared_memory_bytes),
                  static_cast<long long>(config.gpu.limits.shared_memory_per_block_optin));
      for (const auto& [constraint, holds] : e.verdicts)
        std::printf("  %s %-22s %s\n", holds ? "ok  " : "FAIL", constraint->name.c_str(),
                    constraint->reason.c_str());
      if (!e.in_config_space) {
        std::string names;
        for (const auto& n : e.not_in_space) names += " " + n;
        std::printf("  note: the config's space does not list the value of:%s\n", names.c_str());
      }
    }
    if (explanations == 0)
      throw Error(ErrorKind::bad_input, "--explain '" + o.explain + "': no template that " + o.config +
                                            " searches has every parameter it names (NAME=INTEGER,...)");
    if (o.json) print_json(explained);
    return 0;
  }
  const SpaceStage stage = space_stage(config);
  const std::vector<ProblemCandidates> coverage = candidates_per_problem(config, stage);
  const std::vector<std::string> uncovered = uncovered_problem_lines(coverage);
  if (o.json) {
    YAML::Node out = space_node(stage);
    for (const ProblemCandidates& entry : coverage) {
      YAML::Node n;
      n["problem"] = entry.problem.name;
      n["candidates"] = entry.candidates;
      for (const Suggestion& s : entry.suggestions) {
        YAML::Node suggestion;
        suggestion["template"] = s.kernel_template->name;
        suggestion["changes"] = s.changes;
        suggestion["point"] = s.point.str();
        n["would_be_served_by"].push_back(suggestion);
      }
      out["problems"].push_back(n);
    }
    print_json(out);
  } else {
    for (const SpaceReport& r : stage.reports) print_space(r);
    std::printf("candidates (kept points x element types of the problems): %zu\n", stage.candidates.size());
    std::printf("candidates per problem:\n");
    for (const ProblemCandidates& entry : coverage)
      std::printf("  %-24s %-32s %lld\n", entry.problem.name.c_str(), describe_problem(entry.problem).c_str(),
                  static_cast<long long>(entry.candidates));
  }
  // With --template the counts are that template's alone: a problem others serve is no failure then.
  if (!o.template_name.empty()) return 0;
  for (const std::string& line : uncovered) std::fprintf(stderr, "tune: %s\n", line.c_str());
  return uncovered.empty() ? 0 : 1;
}

int command_compile(const Options& o) {
  const Prepared prepared = prepare(o.config, o.jobs, Twins::none);
  if (o.json) {
    YAML::Node out = stage_summary(prepared.space, prepared.compiled, nullptr, nullptr);
    for (const CompiledCandidate& c : prepared.compiled) {
      YAML::Node n;
      n["id"] = c.candidate.id();
      n["status"] = to_string(c.status);
      n["registers"] = c.resources.registers;
      n["blocks_per_sm"] = c.occupancy.blocks_per_sm;
      n["from_cache"] = c.from_cache;
      out["candidates_compiled"].push_back(n);
    }
    print_json(out);
    return 0;
  }
  for (const CompiledCandidate& c : prepared.compiled)
    if (c.status != CompileStatus::compiled)
      std::printf("%-15s %s: %s\n", to_string(c.status), c.candidate.id().c_str(),
                  c.message.substr(0, c.message.find('\n')).c_str());
  std::printf(
      "%s", format_stage_summary(stage_summary(prepared.space, prepared.compiled, nullptr, nullptr)).c_str());
  return 0;
}

void print_table(const std::vector<ProblemTiming>& timings) {
  std::printf("\n%-24s %-16s %10s %10s %8s  %s\n", "problem", "shape", "TFLOP/s", "cuBLAS", "ratio",
              "winner");
  for (const ProblemTiming& t : timings) {
    const TimedEntry* w = t.winner();
    const std::string shape =
        std::to_string(t.problem.m) + "x" + std::to_string(t.problem.n) + "x" + std::to_string(t.problem.k);
    const double ratio = t.ratio_vs_baseline();
    char ratio_text[32] = "-";  // no winner, or no baseline (the vendor library refused the problem)
    if (ratio > 0) std::snprintf(ratio_text, sizeof ratio_text, "%.3f", ratio);
    std::printf("%-24s %-16s %10.1f %10.1f %8s  %s\n", t.problem.name.c_str(), shape.c_str(),
                w ? w->tflops : 0.0, t.baseline.tflops, ratio_text, w ? w->id.c_str() : "(none)");
  }
}

// The config's `output`, relative to the folder of the config file (not the working directory).
fs::path output_of(const Config& config) {
  if (config.output.is_absolute() || config.file.empty()) return config.output;
  return config.file.parent_path() / config.output;
}

int command_run(Options o) {
  std::string work = o.work_directory;
  const GpuChoice gpu_choice = o.gpus.empty() ? GpuChoice{} : parse_gpu_choice(o.gpus);
  if (o.config.empty()) {
    const ScratchDirectory scratch;
    const ProbeOutcome probe = probe_device(scratch.path);
    if (!probe.device)
      throw Error(ErrorKind::no_device, "no config given and no GPU to pick one for: " + probe.reason);
    const auto found = find_config_for(*probe.device);
    if (!found)
      throw Error(ErrorKind::bad_input,
                  "no shipped config names the card '" + probe.device->name + "' (looked in configs/ and " +
                      shipped_config_directory().string() + "); pass one: tune run CONFIG");
    o.config = found->string();
    std::fprintf(stderr, "detected %s: using %s\n", probe.device->name.c_str(), o.config.c_str());
  }
  // The table goes to -o, else the config's output; the workers' files to --work-dir, else TABLE.work.
  const auto output_for = [&](const Config& c) {
    return o.output.empty() ? output_of(c) : fs::path(o.output);
  };
  const auto work_for = [&](const fs::path& table) {
    return work.empty() ? fs::path(table.string() + ".work") : fs::path(work);
  };
  // While the candidates compile, the GPU is probed and the fuzz stage's serving workers start (session.hpp).
  std::optional<EarlyDevices> early;
  if (cluster::rank() == 0) {
    const Config config = load_config(o.config);  // an error here is prepare's first too
    early.emplace(config, gpu_choice, work_for(output_for(config)));
  }
  // A screened campaign compiles twins for its winners alone, at their confirmation (confirm_stage.hpp).
  const Prepared prepared = prepare(o.config, o.jobs, Twins::unless_screened);
  if (cluster::rank() > 0) return serve_rank(gpu_choice);  // rank 0 runs the campaign, on every rank's GPUs
  const Config& config = prepared.config;
  const SpaceStage& stage = prepared.space;
  const auto& compiled = prepared.compiled;
  const fs::path output = output_for(config);
  for (const fs::path& file : {output, stage_summary_path(output), journal_path(output)})
    require_writable_target(file, "campaign's output");
  const fs::path work_directory = work_for(output);
  if (o.output.empty())
    std::fprintf(stderr, "the table goes to %s (the config's output, relative to %s)\n", output.c_str(),
                 config.file.parent_path().empty() ? "." : config.file.parent_path().c_str());
  // A problem no candidate accepts cannot get a winner: said now, and the campaign fails at its end.
  const std::vector<ProblemCandidates> coverage = candidates_per_problem(config, stage);
  for (const std::string& line : uncovered_problem_lines(coverage))
    std::fprintf(stderr, "tune: warning: %s\n", line.c_str());

  // Nothing is created before there is a GPU to produce something: the probe runs in a scratch folder.
  DeviceInfo device;
  std::vector<Gpu> gpus;  // --gpus: the pools' GPUs; empty: the one this process sees
  try {
    device = early->get(gpus);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::no_device) throw;
    if (o.json) {
      YAML::Node out;
      out["status"] = "no_gpu";
      out["reason"] = e.message();
      out["stages"] = stage_summary(stage, compiled, nullptr, nullptr);
      print_json(out);
      return 3;
    }
    std::printf("%s", format_stage_summary(stage_summary(stage, compiled, nullptr, nullptr)).c_str());
    std::fprintf(
        stderr,
        "\nstopped after compilation: %s.\n"
        "Fuzzing, timing against cuBLAS and the results table need a CUDA GPU; nothing was written to %s.\n",
        e.message().c_str(), output.c_str());
    return 3;
  }

  // Every step goes to a journal beside the table; --resume takes the finished ones from it. The verdict
  // store holds what every earlier campaign decided: only what changed is fuzzed and timed again.
  const VerdictStore store(VerdictStore::default_directory());
  if (!o.no_store) std::fprintf(stderr, "verdict store: %s\n", store.directory().c_str());
  TuneSettings settings;
  settings.output = output;
  settings.work_directory = work_directory;
  settings.command_line = o.command_line;
  settings.config_sha256 = sha256_hex(read_whole_file(o.config));
  settings.resume = o.resume;
  settings.retry_quarantined = o.retry_quarantined;
  if (!o.strategy.empty()) settings.strategy = *parse_strategy(o.strategy);
  if (o.time_workers > 0) settings.time_workers = o.time_workers;
  settings.sanitize = !o.no_sanitize;
  settings.store = o.no_store ? nullptr : &store;
  settings.jobs = o.jobs;
  settings.gpus = gpus;
  const TuneReport report = tune_campaign(prepared, coverage, device, settings);
  const std::vector<std::string>& no_winner = report.no_winner;
  const YAML::Node& summary = report.summary;
  const std::string& domain = report.domain_coverage;
  if (o.json) {
    YAML::Node out;
    out["status"] = no_winner.empty() ? "done" : "failed";
    out["table"] = read_yaml(output);
    out["stages"] = summary;
    for (const std::string& line : no_winner) out["problems_without_winner"].push_back(line);
    out["domain_coverage"] = domain;
    print_json(out);
  } else {
    print_table(report.timings);
    std::printf("\n%s", format_stage_summary(summary).c_str());
    std::printf("fuzz     %s\n", domain.c_str());
    std::printf("wrote %s and %s\n", output.c_str(), stage_summary_path(output).c_str());
  }
  for (const std::string& line : no_winner) std::fprintf(stderr, "tune: %s\n", line.c_str());
  if (!no_winner.empty())
    std::fprintf(stderr, "tune: %zu of %zu problems have no winner and no row in %s\n", no_winner.size(),
                 report.timings.size(), output.c_str());
  return no_winner.empty() ? 0 : 1;
}

// A table is stale when the code of its winners, the tool, the card or the driver it was measured with have
// changed. A template whose source changed counts only when the tree compiles one of its winners to other
// code than the table recorded (tuner/table/staleness.hpp).
int command_check(const Options& o) {
  const KernelCache cache(KernelCache::default_directory());
  ResultsTable table = read_results_table(o.table);
  if (o.record_digests) {
    const DigestBackfill found = missing_code_digests(table, template_directory(), cache);
    if (!found.digests.empty()) {
      write_file_atomically(o.table,
                            with_code_digests(read_input_file(o.table, "results table", kTableByteLimit),
                                              found.digests, o.table));
      table = read_results_table(o.table);
    }
    std::printf("recorded the code digests of %zu winners in %s\n", found.digests.size(), o.table.c_str());
    for (const std::string& why : found.skipped) std::printf("  not recorded: %s\n", why.c_str());
  }
  std::vector<std::string> stale, unchanged_code;
  for (const TemplateChange& c : template_changes(table, template_directory(), cache)) {
    const std::string what = "template " + c.name + " changed (table " + c.table_hash.substr(0, 12) +
                             ", tree " + c.tree_hash.substr(0, 12) + ")";
    if (!c.stale()) {
      unchanged_code.push_back(what + (c.winners
                                           ? ", but the tree compiles its " + std::to_string(c.winners) +
                                                 " winners to the code the table timed"
                                           : "; no winner of the table is of it"));
      continue;
    }
    std::string line =
        what + ": " + std::to_string(c.changed.size()) + " of its " + std::to_string(c.winners) + " winners";
    for (const std::string& why : c.changed) line += "\n      " + why;
    stale.push_back(line);
  }
  for (const std::string& line : unchanged_code) std::printf("%s\n", line.c_str());
  if (table.tool_version != tool_version())
    stale.push_back("tool version " + table.tool_version + " in the table, " + tool_version() + " here");
  std::optional<ScratchDirectory> scratch;
  if (o.work_directory.empty()) scratch.emplace();
  const ProbeOutcome probe = probe_device(scratch ? scratch->path : fs::path(o.work_directory));
  if (probe.device) {
    if (probe.device->name != table.gpu_name)
      stale.push_back("card '" + table.gpu_name + "' in the table, '" + probe.device->name + "' here");
    if (probe.device->driver_version != table.driver)
      stale.push_back("driver " + table.driver + " in the table, " + probe.device->driver_version + " here");
  } else if (o.require_gpu) {
    throw Error(ErrorKind::no_device, "cannot compare card and driver: no usable GPU: " + probe.reason);
  } else {
    std::printf("card and driver not compared: no usable GPU (%s)\n", probe.reason.c_str());
  }
  if (stale.empty()) {
    std::printf("%s is current: %s, tool version%s match\n", o.table.c_str(),
                unchanged_code.empty() ? "templates" : "the winners' code",
                probe.device ? ", card and driver" : "");
    return 0;
  }
  std::printf("%s is stale:\n", o.table.c_str());
  for (const std::string& why : stale) std::printf("  %s\n", why.c_str());
  return 1;
}

}  // namespace

int tunefuzz::cli::tune_main(int argc, char** argv) {
  CLI::App app{"tune: find the fastest correct GPU kernel configuration per GPU and problem"};
  app.require_subcommand(1);
  app.set_version_flag("--version", tool_version() + " (commit " + tool_commit() + ")");
  Options o;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App* space = app.add_subcommand("space", "enumerate the search space and prune it statically");
  space->add_option("config", o.config, "campaign config (configs/*.yaml)")->required();
  space->add_option("--explain", o.explain,
                    "say why one point (NAME=VALUE,...; others default) is kept or pruned, in every "
                    "template that has those parameters");
  space->add_option("--template", o.template_name, "only the searches of this template (e.g. gemm_simt)");

  CLI::App* compile = app.add_subcommand(
      "compile", "compile every kept candidate with NVRTC (sm_*) or hiprtc (gfx*); no GPU needed");
  compile->add_option("config", o.config, "campaign config")->required();
  compile->add_option("-j,--jobs", o.jobs, "compiler threads (default: all cores)")
      ->check(CLI::Range(1, 1024));

  CLI::App* run =
      app.add_subcommand("run", "compile, fuzz and time every candidate; write the results table");
  run->add_option("config", o.config, "campaign config (default: the shipped config for the detected GPU)");
  run->add_option("-o,--output", o.output, "results table (default: the config's output)");
  run->add_option("-j,--jobs", o.jobs, "compiler threads (default: all cores)")->check(CLI::Range(1, 1024));
  run->add_option("--work-dir", o.work_directory, "worker jobs and logs (default: OUTPUT.work)");
  run->add_flag(
      "--no-sanitize", o.no_sanitize,
      "write winners without replaying them under compute-sanitizer (rows then say sanitizers: [])");
  run->add_flag("--resume", o.resume,
                "continue a campaign that was killed, from its journal (OUTPUT.journal)");
  run->add_flag("--no-store", o.no_store,
                "neither take fuzz verdicts and timings from the verdict store nor file new ones "
                "(TUNEFUZZ_VERDICT_DIR, default: the kernel cache's folder/verdicts)");
  run->add_option("--strategy", o.strategy,
                  "how each problem's candidates are searched: " + strategy_names() +
                      " (default: the config's budgets.strategy, else exhaustive)")
      ->check([](const std::string& name) {
        return parse_strategy(name) ? std::string()
                                    : "unknown strategy '" + name + "' (expected " + strategy_names() + ")";
      });
  run->add_option("--time-workers", o.time_workers,
                  "problems timed at once on each GPU, their workers taking turns on it (default: the "
                  "config's budgets.time_workers, else 1)")
      ->check(CLI::Range(1, 64));
  run->add_option("--gpus", o.gpus,
                  "all, or GPU indices like 0,2,3: a worker pool per GPU, each problem timed on one "
                  "(default: the GPU the process sees)")
      ->check(CLI::Validator([](std::string& text) { return gpu_choice_error(text); }, "all|0,2,3"));
  run->add_flag("--retry-quarantined", o.retry_quarantined,
                "with --resume: run again the candidates the campaign died on (quarantined by default)");

  for (CLI::App* sub : {space, compile, run})
    sub->add_flag("--json", o.json, "print the result as one JSON document on standard output");

  CLI::App* show = app.add_subcommand("show", "print results tables as aligned columns");
  show->add_option("tables", o.tables, "results tables or collections")->required();
  show->add_flag("--json", o.json, "print the tables as JSON");

  CLI::App* export_ =
      app.add_subcommand("export", "write results tables in a form downstream builds consume");
  export_->add_option("tables", o.tables, "results tables or collections")->required();
  export_->add_option("--format", o.format, "yaml, json, csv, header (C++17) or cmake (installable package)")
      ->required();
  export_->add_option("-o,--output", o.output, "output file (cmake: a directory)")->required();
  export_->add_flag(
      "--embed-kernels", o.embed_kernels,
      "cmake: compile each winner ahead of time for its table's GPU and put the images in the package");

  CLI::App* merge =
      app.add_subcommand("merge", "combine results tables (same card: one table; else a collection)");
  merge->add_option("tables", o.tables, "results tables or collections")->required()->expected(2, -1);
  merge->add_option("-o,--output", o.output, "merged table")->required();
  merge->add_option("--prefer", o.prefer,
                    "first or last: which input wins a conflicting row (default: refuse)");

  CLI::App* report = app.add_subcommand("report", "write a self-contained HTML report of a campaign");
  report->add_option("table", o.table, "results table (its .stages.yaml and .journal are read too)")
      ->required();
  report->add_option("-o,--output", o.output, "report.html")->required();
  report->add_option("--problem", o.problem, "the heatmap's problem (default: the first)");
  report->add_option("--x", o.x, "the heatmap's horizontal parameter (default BM)");
  report->add_option("--y", o.y, "the heatmap's vertical parameter (default BN)");

  CLI::App* check =
      app.add_subcommand("check", "exit 1 if a results table is stale for this tree and machine");
  check->add_option("table", o.table, "results table (results/<gpu>.yaml)")->required();
  check->add_flag("--record-digests", o.record_digests,
                  "first write into the table the code digests of winners that record none, compiled again "
                  "where the tree has the template sources and compiler the table was tuned with");
  check->add_flag("--require-gpu", o.require_gpu,
                  "fail (exit 3) when there is no GPU to compare card and driver");
  check->add_option("--work-dir", o.work_directory,
                    "where the GPU probe writes (default: a temporary folder, removed after)");

  CLI::App* replay = app.add_subcommand(
      "replay", "replay the search strategies on the timings a campaign recorded in its journal (no GPU)");
  replay->add_option("config", o.config, "the campaign's config (its problems and GPU limits)")->required();
  replay->add_option("journal", o.journal, "the campaign's journal (results/<gpu>.journal)")->required();
  replay->add_option("--strategy", o.strategies, "exhaustive, halving or model (repeatable; default: all)");
  replay->add_option("-o,--output", o.output, "also write the report as YAML here");
  replay->add_flag("--json", o.json, "print the report as one JSON document on standard output");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (cluster::size() > 1 && !*run)
      throw Error(ErrorKind::bad_input, "only `tune run` splits its work over MPI ranks; run `tune " +
                                            app.get_subcommands().front()->get_name() + "` without mpirun");
    if (*space) return command_space(o);
    if (*replay) return cli::replay(o.config, o.journal, o.strategies, o.output, o.json, o.command_line);
    if (*compile) return command_compile(o);
    if (*check) return command_check(o);
    if (*show) return cli::show(o.tables, o.json);
    if (*export_) return cli::export_command(o.tables, o.format, o.output, o.embed_kernels);
    if (*merge) return cli::merge(o.tables, o.output, o.prefer);
    if (*report) return cli::report(o.table, o.output, o.problem, o.x, o.y);
    return command_run(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "tune: error: %s\n", e.what());
    if (!e.detail().empty()) std::fprintf(stderr, "%s\n", e.detail().c_str());
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune: internal error: %s\n", e.what());
    return 1;
  }
}
