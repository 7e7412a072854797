#include "tuner/table/results_table.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "fuzz/domain.hpp"
#include "runtime/backend/elf_image.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/gpus.hpp"
#include "tuner/common/version.hpp"

namespace tunefuzz {

Provenance make_provenance(const std::string& command, const std::string& config_file,
                           const std::string& compiler) {
  Provenance p;
  p.tool_version = tool_version();
  p.tool_commit = tool_commit();
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  p.date = date;
  p.command = command;
  p.config_file = config_file;
  p.compiler = compiler;
  return p;
}

YAML::Node report_head(const std::string& format, const std::string& card, const std::string& driver) {
  YAML::Node head;
  head["format"] = format;
  head["card"] = card;
  head["driver"] = driver;
  head["tool_commit"] = tool_commit();
  head["date"] = make_provenance("", "", "").date;
  return head;
}

std::filesystem::path stage_summary_path(const std::filesystem::path& table) {
  std::filesystem::path out = table;
  out.replace_extension(".stages.yaml");
  return out;
}

namespace {

double round_to(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

YAML::Node point_node(const Point& point) {
  YAML::Node n;
  for (const auto& [name, value] : point.values()) n[name] = value;
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

}  // namespace

YAML::Node stage_summary(const SpaceStage& space, const std::vector<CompiledCandidate>& compiled,
                         const std::vector<FuzzedCandidate>* fuzzed,
                         const std::vector<ProblemTiming>* timings) {
  YAML::Node s;
  for (const SpaceReport& r : space.reports) {
    YAML::Node t;
    t["template"] = r.kernel_template->name;
    t["enumerated"] = r.enumerated;
    YAML::Node pruned(YAML::NodeType::Map);
    for (const PruneCount& p : r.pruned)
      if (p.count) pruned[p.constraint] = p.count;
    t["pruned"] = pruned;
    t["kept"] = static_cast<int64_t>(r.kept.size());
    s["space"].push_back(t);
  }
  s["candidates"] = static_cast<int64_t>(space.candidates.size());
  YAML::Node compile;
  std::map<std::string, int64_t> by_status;
  int64_t cached = 0;
  double seconds = 0;
  for (const CompiledCandidate& c : compiled) {
    ++by_status[to_string(c.status)];
    cached += c.from_cache;
    seconds += c.seconds;
  }
  for (const char* status : {"compiled", "compile_failed", "spills", "occupancy", "slow_path"})
    compile[status] = by_status[status];
  compile["from_cache"] = cached;
  compile["compile_seconds"] = round_to(seconds, 1);
  for (const CompiledCandidate& c : compiled)
    if (c.status != CompileStatus::compiled) {
      YAML::Node p;
      p["id"] = c.candidate.id();
      p["reason"] = to_string(c.status);
      p["detail"] = c.message.substr(0, 400);
      compile["pruned_candidates"].push_back(p);
    }
  s["compile"] = compile;
  if (fuzzed) {
    YAML::Node fuzz;
    int64_t passed = 0;
    std::map<std::string, int64_t> by_class;
    std::map<std::string, int64_t> coverage;
    int64_t quarantined = 0;
    for (const FuzzedCandidate& f : *fuzzed) {
      passed += f.passed;
      if (f.quarantined) {
        ++quarantined;
        fuzz["quarantined_candidates"].push_back(f.candidate.id());
      }
      for (const auto& [tag, count] : f.coverage)  // domain classes (`n%8=3`): the journal has them
        if (!fuzz::is_domain_tag(tag)) coverage[tag] += count;
      if (!f.failure) continue;
      ++by_class[fuzz::to_string(f.failure->failure_class)];
      YAML::Node failure;
      failure["id"] = f.candidate.id();
      failure["class"] = fuzz::to_string(f.failure->failure_class);
      if (!f.failure->subtype.empty()) failure["subtype"] = f.failure->subtype;
      failure["message"] = f.failure->message.substr(0, 400);
      failure["seed"] = f.seed;
      failure["shrunk_case"] = to_yaml(f.failure->shrunk_case);
      if (!f.failure->reproduce.empty()) failure["reproduce"] = f.failure->reproduce;
      if (!f.reproducer.empty()) failure["reproducer"] = f.reproducer.string();
      fuzz["failures"].push_back(failure);
    }
    fuzz["fuzzed"] = static_cast<int64_t>(fuzzed->size());
    fuzz["passed"] = passed;
    fuzz["quarantined"] = quarantined;
    YAML::Node failed(YAML::NodeType::Map);
    for (const auto& [name, count] : by_class) failed[name] = count;
    fuzz["failed"] = failed;
    YAML::Node cov(YAML::NodeType::Map);
    for (const auto& [tag, count] : coverage) cov[tag] = count;
    fuzz["coverage"] = cov;
    s["fuzz"] = fuzz;
  }
  if (timings) {
    YAML::Node time;
    std::map<std::string, int64_t> by_status;
    for (const ProblemTiming& t : *timings)
      for (const TimedEntry& e : t.entries) {
        ++by_status[e.status];
        if (e.status != "timed") {
          YAML::Node bad;
          bad["problem"] = t.problem.name;
          bad["id"] = e.id;
          bad["status"] = e.status;
          bad["message"] = e.message.substr(0, 400);
          time["not_timed"].push_back(bad);
        }
      }
    time["problems"] = static_cast<int64_t>(timings->size());
    // The strategy the problems were searched with (one: a timing searched by another is never reused) and
    // the candidate measurements it made in all.
    if (!timings->empty()) time["strategy"] = to_string(timings->front().strategy);
    int64_t evaluations = 0;
    for (const ProblemTiming& t : *timings) evaluations += t.evaluations;
    time["evaluations"] = evaluations;
    for (const ProblemTiming& t : *timings)
      for (const std::string& id : t.quarantined) {
        YAML::Node left_out;
        left_out["problem"] = t.problem.name;
        left_out["id"] = id;
        time["quarantined"].push_back(left_out);
      }
    YAML::Node entries(YAML::NodeType::Map);
    for (const auto& [status, count] : by_status) entries[status] = count;
    time["entries"] = entries;
    // Where the searches' time went (the workers' phases and the coordinator's dispatch), over the problems
    // searched by this campaign (or by the calls it resumes), not those the verdict store answered.
    std::map<std::string, double> phases;
    for (const ProblemTiming& t : *timings)
      if (!t.from_store)
        add_phase_seconds(phases, t.phase_seconds);
    for (const auto& [phase, seconds] : phases) time["phase_seconds"][phase] = std::round(seconds * 10) / 10;
    s["time"] = time;
  }
  return s;
}

std::string format_stage_summary(const YAML::Node& s) {
  std::ostringstream out;
  for (const auto& t : s["space"]) {
    out << "space    " << t["template"].as<std::string>() << ": " << t["enumerated"].as<int64_t>()
        << " enumerated, " << t["kept"].as<int64_t>() << " kept";
    for (const auto& p : t["pruned"])
      out << ", " << p.second.as<int64_t>() << " pruned (" << p.first.as<std::string>() << ")";
    out << "\n";
  }
  out << "         " << s["candidates"].as<int64_t>() << " candidates (kept points x element types)\n";
  const YAML::Node c = s["compile"];
  out << "compile  " << c["compiled"].as<int64_t>() << " kept, " << c["compile_failed"].as<int64_t>()
      << " failed, " << c["spills"].as<int64_t>() << " pruned (spills), " << c["occupancy"].as<int64_t>()
      << " pruned (occupancy), " << c["slow_path"].as<int64_t>() << " pruned (slow path); "
      << c["from_cache"].as<int64_t>() << " from cache\n";
  if (const YAML::Node f = s["fuzz"]) {
    out << "fuzz     " << f["passed"].as<int64_t>() << " of " << f["fuzzed"].as<int64_t>() << " passed";
    if (f["quarantined"] && f["quarantined"].as<int64_t>() > 0)
      out << ", " << f["quarantined"].as<int64_t>() << " quarantined";
    for (const auto& k : f["failed"])
      out << ", " << k.second.as<int64_t>() << " " << k.first.as<std::string>();
    out << "\n";
  }
  if (const YAML::Node t = s["time"]) {
    out << "time     " << t["problems"].as<int64_t>() << " problems";
    for (const auto& e : t["entries"])
      out << ", " << e.second.as<int64_t>() << " " << e.first.as<std::string>();
    out << "\n";
  }
  return out.str();
}

YAML::Node results_table(const DeviceInfo& device, const Provenance& provenance,
                         const std::vector<ProblemTiming>& timings,
                         const std::vector<FuzzedCandidate>& fuzzed, int64_t fuzz_cases_per_candidate) {
  YAML::Node table;
  table["format"] = kResultsFormat;
  YAML::Node gpu;
  gpu["name"] = device.name;
  gpu["arch"] = device.arch;
  gpu["sm_count"] = device.limits.sm_count;
  gpu["memory_bytes"] = device.memory_bytes;
  gpu["driver"] = device.driver_version;
  gpu["cuda_driver_api"] = device.cuda_driver_api;
  table["gpu"] = gpu;
  YAML::Node prov;
  prov["tool_version"] = provenance.tool_version;
  prov["tool_commit"] = provenance.tool_commit;
  prov["date"] = provenance.date;
  prov["command"] = provenance.command;
  prov["config"] = provenance.config_file;
  prov["compiler"] = provenance.compiler;
  for (const auto& [name, hash] : provenance.template_hashes) prov["template_hashes"][name] = hash;
  table["provenance"] = prov;
  std::map<std::string, const FuzzedCandidate*> by_id;
  for (const FuzzedCandidate& f : fuzzed) by_id[f.candidate.id()] = &f;
  table["problems"] = YAML::Node(YAML::NodeType::Sequence);
  for (const ProblemTiming& t : timings) {
    YAML::Node row;
    const Problem& p = t.problem;
    row["name"] = p.name;
    row["m"] = p.m;
    row["n"] = p.n;
    row["k"] = p.k;
    row["precision"] = to_string(p.input);
    row["output"] = to_string(p.output);
    row["layout"] = to_string(p.layout);
    row["alpha"] = p.alpha;
    row["beta"] = p.beta;
    if (t.gpu) row["timed_on"] = to_yaml(*t.gpu);  // `--gpus` or MPI ranks: the card that timed it, baseline too
    YAML::Node baseline;
    baseline["name"] = "cublas";
    baseline["version"] = t.baseline_version;
    baseline["status"] = t.baseline.status;
    baseline["median_ms"] = round_to(t.baseline.median_ms, 5);
    baseline["tflops"] = round_to(t.baseline.tflops, 2);
    if (t.baseline.interleaved_median_ms > 0)
      baseline["interleaved_median_ms"] = round_to(t.baseline.interleaved_median_ms, 5);
    if (!t.baseline.message.empty()) baseline["message"] = t.baseline.message;
    row["baseline"] = baseline;
    if (t.traffic.bytes > 0) {
      // Least bytes moved and the card's copy of as many bytes: bandwidth-bound rows (decode) read against
      // it.
      YAML::Node memory;
      memory["bytes"] = t.traffic.bytes;
      memory["copy_ms"] = round_to(t.traffic.copy_ms, 5);
      row["memory"] = memory;
    }
    // The search that chose what to measure and the winner, and the candidate measurements it made.
    row["strategy"] = to_string(t.strategy);
    row["evaluations"] = t.evaluations;
    const TimedEntry* w = t.winner();
    if (!w) {
      row["winner"] = YAML::Node(YAML::NodeType::Null);
      row["note"] = "no candidate both supports this problem and passed fuzzing and verification";
    } else {
      const Candidate c = parse_candidate_id(w->id);
      YAML::Node winner;
      winner["template"] = c.kernel_template->name;
      winner["id"] = w->id;
      winner["config"] = point_node(c.point);
      winner["median_ms"] = round_to(w->median_ms, 5);
      winner["min_ms"] = round_to(w->min_ms, 5);
      winner["max_ms"] = round_to(w->max_ms, 5);
      winner["tflops"] = round_to(w->tflops, 2);
      winner["verification_error_ratio"] = round_to(w->worst_error_ratio, 4);
      winner["verified_exact"] = w->exact_verified;
      // The code it ran (a template's source may change later without changing it: tune check).
      if (const FuzzedCandidate* f = by_id[w->id];
          f && !f->image.empty() && std::filesystem::is_regular_file(f->image))
        winner["code_sha256"] = code_sha256(read_whole_file(f->image));
      row["winner"] = winner;
      // Finalists within a few percent of the best, re-timed taking turns: what the choice was made on.
      for (const TimedEntry& e : t.entries) {
        if (e.interleaved_median_ms <= 0) continue;
        YAML::Node finalist;
        finalist["id"] = e.id;
        finalist["median_ms"] = round_to(e.interleaved_median_ms, 5);
        finalist["spread"] = round_to(e.interleaved_spread, 4);
        row["finalists"].push_back(finalist);
      }
      if (t.baseline.status == "timed") row["ratio_vs_baseline"] = round_to(t.ratio_vs_baseline(), 3);
      if (const FuzzedCandidate* f = by_id[w->id]) {
        YAML::Node evidence;
        evidence["cases_passed"] = f->cases_run;
        evidence["perturbed_cases_passed"] = f->perturbed_cases_run;  // of cases_passed, on the perturbed twin
        evidence["cases_budget"] = fuzz_cases_per_candidate;
        evidence["seed"] = f->seed;
        if (f->confirmed) {  // screened with a few cases, then confirmed with the budget (confirm_winners)
          evidence["screen_cases"] = f->screen_cases;
          evidence["confirmation_seed"] = f->confirmation_seed;
        }
        YAML::Node coverage(YAML::NodeType::Map);  // the bug classes its cases exercised
        for (const auto& [tag, count] : f->coverage)
          if (!fuzz::is_domain_tag(tag)) coverage[tag] = count;
        coverage.SetStyle(YAML::EmitterStyle::Flow);
        evidence["coverage"] = coverage;
        row["fuzz"] = evidence;
      }
      // compute-sanitizer tools the winner passed on small cases of its own (sanitize_winners).
      YAML::Node sanitizers(YAML::NodeType::Sequence);
      for (const std::string& tool : t.sanitizers) sanitizers.push_back(tool);
      sanitizers.SetStyle(YAML::EmitterStyle::Flow);
      row["sanitizers"] = sanitizers;
      int64_t timed = 0;
      for (const TimedEntry& e : t.entries) timed += e.status == "timed";
      row["candidates_timed"] = timed;
    }
    table["problems"].push_back(row);
  }
  return table;
}

}  // namespace tunefuzz
