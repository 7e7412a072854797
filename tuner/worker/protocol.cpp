#include "tuner/worker/protocol.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"

namespace tunefuzz {

namespace {

template <class T>
T get(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value) throw Error(ErrorKind::bad_input, std::string("missing field '") + key + "'");
  try {
    return value.as<T>();
  } catch (const YAML::Exception&) {
    throw Error(ErrorKind::bad_input, std::string("field '") + key + "' has the wrong type",
                {"", value.Mark().line + 1, value.Mark().column + 1, key});
  }
}

template <class T>
T get_or(const YAML::Node& node, const char* key, T fallback) {
  return node[key] ? get<T>(node, key) : fallback;
}

/// A decimal unsigned 64-bit integer (yaml-cpp would read "-1" as 2^64 - 1 and 2^64 as a wrong type).
uint64_t unsigned_field(const YAML::Node& node, const char* key, uint64_t fallback) {
  if (!node[key]) return fallback;
  const std::string text = get<std::string>(node, key);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw Error(ErrorKind::bad_input, "expected an unsigned 64-bit integer, got '" + text + "'",
                {"", node[key].Mark().line + 1, node[key].Mark().column + 1, key});
  return value;
}

/// An integer field of a case record within [minimum, maximum], or the field's name in the error.
int64_t bounded_field(const YAML::Node& node, const char* key, int64_t fallback, int64_t minimum,
                      int64_t maximum) {
  if (!node[key]) {
    if (fallback < minimum) throw Error(ErrorKind::bad_input, std::string("missing field '") + key + "'");
    return fallback;
  }
  const int64_t value = get<int64_t>(node, key);
  if (value < minimum || value > maximum)
    throw Error(ErrorKind::bad_input,
                "must be in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "], got " +
                    std::to_string(value),
                {"", node[key].Mark().line + 1, node[key].Mark().column + 1, key});
  return value;
}

Precision precision_field(const YAML::Node& node, const char* key) {
  const auto p = parse_precision(get<std::string>(node, key));
  if (!p) throw Error(ErrorKind::bad_input, std::string("field '") + key + "' is not an element type");
  return *p;
}

}  // namespace

YAML::Node to_yaml(const fuzz::CaseRecord& r) {
  YAML::Node n;
  n["m"] = r.m;
  n["n"] = r.n;
  n["k"] = r.k;
  n["lda_pad"] = r.lda_pad;
  n["ldb_pad"] = r.ldb_pad;
  n["ldc_pad"] = r.ldc_pad;
  n["alpha"] = r.alpha;
  n["beta"] = r.beta;
  n["distribution"] = fuzz::to_string(r.distribution);
  n["seed"] = r.seed;
  if (r.a_offset) n["a_offset"] = r.a_offset;
  if (r.b_offset) n["b_offset"] = r.b_offset;
  if (r.c_offset) n["c_offset"] = r.c_offset;
  if (r.splits) n["splits"] = r.splits;
  if (r.grid) n["grid"] = r.grid;
  if (r.layout != Layout{}) n["layout"] = to_string(r.layout);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

fuzz::CaseRecord case_from_yaml(const YAML::Node& n) {
  if (!n.IsMap()) throw Error(ErrorKind::bad_input, "a case record is a map (m, n, k, ...)");
  // Sizes a GPU could hold and cuBLAS's int can count; an operand's elements stay below 2^40, so no byte
  // count downstream overflows.
  constexpr int64_t dimension = (int64_t{1} << 31) - 1;
  fuzz::CaseRecord r;
  r.m = bounded_field(n, "m", 0, 0, dimension);  // zero sizes are quick returns
  r.n = bounded_field(n, "n", 0, 0, dimension);
  r.k = bounded_field(n, "k", 0, 0, dimension);
  r.lda_pad = bounded_field(n, "lda_pad", 0, 0, dimension);
  r.ldb_pad = bounded_field(n, "ldb_pad", 0, 0, dimension);
  r.ldc_pad = bounded_field(n, "ldc_pad", 0, 0, dimension);
  r.alpha = get_or<double>(n, "alpha", 1.0);
  r.beta = get_or<double>(n, "beta", 0.0);
  if (!std::isfinite(r.alpha) || !std::isfinite(r.beta))
    throw Error(ErrorKind::bad_input, "alpha and beta must be finite numbers",
                {"", n.Mark().line + 1, n.Mark().column + 1, std::isfinite(r.alpha) ? "beta" : "alpha"});
  if (!fuzz::parse_distribution(get_or<std::string>(n, "distribution", "small_int"), r.distribution))
    throw Error(ErrorKind::bad_input, "unknown distribution in case record",
                {"", n.Mark().line + 1, n.Mark().column + 1, "distribution"});
  r.seed = unsigned_field(n, "seed", 0);
  r.a_offset = bounded_field(n, "a_offset", 0, 0, 4096);
  r.b_offset = bounded_field(n, "b_offset", 0, 0, 4096);
  r.c_offset = bounded_field(n, "c_offset", 0, 0, 4096);
  r.splits = bounded_field(n, "splits", 0, 0, 65536);
  r.grid = bounded_field(n, "grid", 0, 0, INT32_MAX);
  const auto layout = parse_layout(get_or<std::string>(n, "layout", "RR"));
  if (!layout)
    throw Error(ErrorKind::bad_input, "case record layout must be RR, RC, CR or CC",
                {"", n.Mark().line + 1, n.Mark().column + 1, "layout"});
  r.layout = *layout;
  constexpr int64_t elements = int64_t{1} << 40;
  const auto too_big = [&](int64_t rows, int64_t ld) { return ld > 0 && rows > elements / ld; };
  if (too_big(r.layout.a == Order::row ? r.m : r.k, r.lda()) ||
      too_big(r.layout.b == Order::row ? r.k : r.n, r.ldb()) || too_big(r.m, r.ldc()))
    throw Error(ErrorKind::bad_input, "an operand of the case holds more than 2^40 elements",
                {"", n.Mark().line + 1, n.Mark().column + 1, "m"});
  return r;
}

YAML::Node to_yaml(const DeviceInfo& d) {
  YAML::Node n;
  n["name"] = d.name;
  n["arch"] = d.arch;
  n["sm_count"] = d.limits.sm_count;
  n["shared_memory_per_block_optin"] = d.limits.shared_memory_per_block_optin;
  n["shared_memory_per_sm"] = d.limits.shared_memory_per_sm;
  n["shared_memory_reserved_per_block"] = d.limits.shared_memory_reserved_per_block;
  n["registers_per_sm"] = d.limits.registers_per_sm;
  n["max_threads_per_block"] = d.limits.max_threads_per_block;
  n["max_threads_per_sm"] = d.limits.max_threads_per_sm;
  n["max_blocks_per_sm"] = d.limits.max_blocks_per_sm;
  n["l2_bytes"] = d.l2_bytes;
  n["memory_bytes"] = d.memory_bytes;
  n["driver_version"] = d.driver_version;
  n["cuda_driver_api"] = d.cuda_driver_api;
  n["device_count"] = d.device_count;
  if (!d.uuid.empty()) n["uuid"] = d.uuid;
  return n;
}

DeviceInfo device_info_from_yaml(const YAML::Node& n) {
  DeviceInfo d;
  d.name = get<std::string>(n, "name");
  d.arch = get<std::string>(n, "arch");
  d.limits.sm_count = get<int64_t>(n, "sm_count");
  d.limits.shared_memory_per_block_optin = get<int64_t>(n, "shared_memory_per_block_optin");
  d.limits.shared_memory_per_sm = get<int64_t>(n, "shared_memory_per_sm");
  d.limits.shared_memory_reserved_per_block = get<int64_t>(n, "shared_memory_reserved_per_block");
  d.limits.registers_per_sm = get<int64_t>(n, "registers_per_sm");
  d.limits.max_threads_per_block = get<int64_t>(n, "max_threads_per_block");
  d.limits.max_threads_per_sm = get<int64_t>(n, "max_threads_per_sm");
  d.limits.max_blocks_per_sm = get<int64_t>(n, "max_blocks_per_sm");
  d.l2_bytes = get<int64_t>(n, "l2_bytes");
  d.memory_bytes = get<int64_t>(n, "memory_bytes");
  d.driver_version = get<std::string>(n, "driver_version");
  d.cuda_driver_api = get<int>(n, "cuda_driver_api");
  // Probes of workers older than `--gpus` say neither: one device, no UUID.
  if (n["device_count"]) d.device_count = get<int>(n, "device_count");
  if (n["uuid"]) d.uuid = get<std::string>(n, "uuid");
  return d;
}

YAML::Node to_yaml(const Problem& p) {
  YAML::Node n;
  n["name"] = p.name;
  n["m"] = p.m;
  n["n"] = p.n;
  n["k"] = p.k;
  n["precision"] = to_string(p.input);
  n["output"] = to_string(p.output);
  n["layout"] = to_string(p.layout);
  n["alpha"] = p.alpha;
  n["beta"] = p.beta;
  return n;
}

Problem problem_from_yaml(const YAML::Node& n) {
  Problem p;
  p.name = get<std::string>(n, "name");
  p.m = get<int64_t>(n, "m");
  p.n = get<int64_t>(n, "n");
  p.k = get<int64_t>(n, "k");
  p.input = precision_field(n, "precision");
  p.output = precision_field(n, "output");
  const auto layout = parse_layout(get<std::string>(n, "layout"));
  if (!layout) throw Error(ErrorKind::bad_input, "field 'layout' is not RR, RC, CR or CC");
  p.layout = *layout;
  p.alpha = get<double>(n, "alpha");
  p.beta = get<double>(n, "beta");
  return p;
}

YAML::Node to_yaml(const FuzzJob& j) {
  YAML::Node n;
  n["kind"] = "fuzz";
  n["candidate"] = j.candidate;
  n["image"] = j.image.string();
  n["cases"] = j.cases;
  n["seed"] = j.seed;
  n["huge_weight"] = j.huge_weight;
  n["progress"] = j.progress.string();
  if (j.host_threads > 0) n["host_threads"] = j.host_threads;
  return n;
}

FuzzJob fuzz_job_from_yaml(const YAML::Node& n) {
  FuzzJob j;
  j.candidate = get<std::string>(n, "candidate");
  j.image = get<std::string>(n, "image");
  j.cases = get<int64_t>(n, "cases");
  j.seed = get<uint64_t>(n, "seed");
  j.huge_weight = get_or<int>(n, "huge_weight", 0);
  j.progress = get<std::string>(n, "progress");
  j.host_threads = get_or<int>(n, "host_threads", 0);
  return j;
}

YAML::Node to_yaml(const FuzzResult& r) {
  YAML::Node n;
  n["passed"] = r.passed;
  n["cases_run"] = r.cases_run;
  YAML::Node coverage(YAML::NodeType::Map);
  for (const auto& [tag, count] : r.coverage) coverage[tag] = count;
  n["coverage"] = coverage;
  for (const auto& [phase, seconds] : r.phase_seconds)
    n["phase_seconds"][phase] = std::round(seconds * 1e4) / 1e4;
  if (r.failure) {
    const FuzzFailure& f = *r.failure;
    YAML::Node failure;
    failure["class"] = fuzz::to_string(f.failure_class);
    failure["subtype"] = f.subtype;
    failure["message"] = f.message;
    failure["first_case"] = to_yaml(f.first_case);
    failure["shrunk_case"] = to_yaml(f.shrunk_case);
    failure["cases_until_failure"] = f.cases_until_failure;
    failure["shrink_steps"] = f.shrink_steps;
    failure["reproduce"] = f.reproduce;
    if (f.perturb != 0) failure["perturb"] = f.perturb;
    n["failure"] = failure;
  }
  return n;
}

FuzzResult fuzz_result_from_yaml(const YAML::Node& n) {
  FuzzResult r;
  r.passed = get<bool>(n, "passed");
  r.cases_run = get<int64_t>(n, "cases_run");
  for (const auto& entry : n["coverage"])
    r.coverage[entry.first.as<std::string>()] = entry.second.as<int64_t>();
  for (const auto& entry : n["phase_seconds"])
    r.phase_seconds[entry.first.as<std::string>()] = entry.second.as<double>();
  if (const YAML::Node f = n["failure"]) {
    FuzzFailure failure;
    const auto failure_class = fuzz::parse_failure_class(get<std::string>(f, "class"));
    if (!failure_class) throw Error(ErrorKind::bad_input, "unknown failure class");
    failure.failure_class = *failure_class;
    failure.subtype = get_or<std::string>(f, "subtype", "");
    failure.message = get_or<std::string>(f, "message", "");
    failure.first_case = case_from_yaml(f["first_case"]);
    failure.shrunk_case = case_from_yaml(f["shrunk_case"]);
    failure.cases_until_failure = get_or<int64_t>(f, "cases_until_failure", 0);
    failure.shrink_steps = get_or<int64_t>(f, "shrink_steps", 0);
    failure.reproduce = get_or<std::string>(f, "reproduce", "");
    failure.perturb = get_or<int64_t>(f, "perturb", 0);
    r.failure = failure;
  }
  return r;
}

namespace {

YAML::Node id_list(const std::vector<std::string>& ids) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const std::string& id : ids) list.push_back(id);
  return list;
}

std::vector<std::string> id_list_from_yaml(const YAML::Node& n, const char* key) {
  return get<std::vector<std::string>>(n, key);
}

}  // namespace

YAML::Node to_yaml(const BaselineCheck& c) {
  YAML::Node n;
  n["cublas_version"] = c.cublas_version;
  if (!c.message.empty()) n["message"] = c.message;
  n["worst_error_ratio"] = c.worst_error_ratio;
  n["exact_verified"] = c.exact_verified;
  return n;
}

BaselineCheck baseline_check_from_yaml(const YAML::Node& n) {
  BaselineCheck c;
  c.cublas_version = get<std::string>(n, "cublas_version");
  c.message = get_or<std::string>(n, "message", "");
  c.worst_error_ratio = get<double>(n, "worst_error_ratio");
  c.exact_verified = get<bool>(n, "exact_verified");
  return c;
}

YAML::Node to_yaml(const TimeJob& j) {
  YAML::Node n;
  n["kind"] = "time";
  n["problem"] = to_yaml(j.problem);
  for (const auto& e : j.candidates) {
    YAML::Node entry;
    entry["candidate"] = e.candidate;
    entry["image"] = e.image.string();
    n["candidates"].push_back(entry);
  }
  n["baseline"] = j.baseline;
  if (j.baseline_check) n["baseline_check"] = to_yaml(*j.baseline_check);
  n["screen"] = id_list(j.screen);
  n["screen_in_turns"] = j.screen_in_turns;
  n["time"] = id_list(j.time);
  n["interleave"] = id_list(j.interleave);
  n["interleave_baseline"] = j.interleave_baseline;
  n["warmup"] = j.warmup;
  n["repeats"] = j.repeats;
  n["screen_repeats"] = j.screen_repeats;
  n["seed"] = j.seed;
  if (j.host_threads > 0) n["host_threads"] = j.host_threads;
  if (!j.gpu_turns.empty()) n["gpu_turns"] = j.gpu_turns.string();
  n["progress"] = j.progress.string();
  return n;
}

TimeJob time_job_from_yaml(const YAML::Node& n) {
  TimeJob j;
  j.problem = problem_from_yaml(n["problem"]);
  for (const auto& e : n["candidates"])
    j.candidates.push_back({get<std::string>(e, "candidate"), get<std::string>(e, "image")});
  j.baseline = get<bool>(n, "baseline");
  if (n["baseline_check"]) j.baseline_check = baseline_check_from_yaml(n["baseline_check"]);
  j.screen = id_list_from_yaml(n, "screen");
  j.screen_in_turns = get<bool>(n, "screen_in_turns");
  j.time = id_list_from_yaml(n, "time");
  j.interleave = id_list_from_yaml(n, "interleave");
  j.interleave_baseline = get<bool>(n, "interleave_baseline");
  j.warmup = get<int64_t>(n, "warmup");
  j.repeats = get<int64_t>(n, "repeats");
  j.screen_repeats = get<int64_t>(n, "screen_repeats");
  j.seed = get<uint64_t>(n, "seed");
  j.host_threads = get_or<int>(n, "host_threads", 0);
  j.gpu_turns = get_or<std::string>(n, "gpu_turns", "");
  j.progress = get<std::string>(n, "progress");
  return j;
}

YAML::Node to_yaml(const TimedEntry& e) {
  YAML::Node n;
  n["id"] = e.id;
  n["status"] = e.status;
  if (!e.message.empty()) n["message"] = e.message;
  n["median_ms"] = e.median_ms;
  n["min_ms"] = e.min_ms;
  n["max_ms"] = e.max_ms;
  n["tflops"] = e.tflops;
  n["worst_error_ratio"] = e.worst_error_ratio;
  if (e.interleaved_median_ms > 0) {
    n["interleaved_median_ms"] = e.interleaved_median_ms;
    n["interleaved_spread"] = e.interleaved_spread;
  }
  if (e.screen_ms > 0) n["screen_ms"] = e.screen_ms;
  if (e.exact_verified) n["exact_verified"] = true;
  return n;
}

TimedEntry timed_entry_from_yaml(const YAML::Node& n) {
  TimedEntry e;
  e.id = get<std::string>(n, "id");
  e.status = get<std::string>(n, "status");
  e.message = get_or<std::string>(n, "message", "");
  e.median_ms = get<double>(n, "median_ms");
  e.min_ms = get<double>(n, "min_ms");
  e.max_ms = get<double>(n, "max_ms");
  e.tflops = get<double>(n, "tflops");
  e.worst_error_ratio = get_or<double>(n, "worst_error_ratio", 0.0);
  e.interleaved_median_ms = get_or<double>(n, "interleaved_median_ms", 0.0);
  e.interleaved_spread = get_or<double>(n, "interleaved_spread", 0.0);
  e.screen_ms = get_or<double>(n, "screen_ms", 0.0);
  e.exact_verified = get_or<bool>(n, "exact_verified", false);
  return e;
}

YAML::Node to_yaml(const TimeResult& r) {
  YAML::Node n;
  n["baseline_version"] = r.baseline_version;
  n["baseline"] = to_yaml(r.baseline);
  if (r.baseline_checked) n["baseline_checked"] = true;
  n["entries"] = YAML::Node(YAML::NodeType::Sequence);
  for (const auto& e : r.entries) n["entries"].push_back(to_yaml(e));
  if (r.traffic.bytes > 0) {
    n["traffic"]["bytes"] = r.traffic.bytes;
    n["traffic"]["copy_ms"] = r.traffic.copy_ms;
  }
  for (const auto& [phase, seconds] : r.phase_seconds)
    n["phase_seconds"][phase] = std::round(seconds * 1e4) / 1e4;
  return n;
}

TimeResult time_result_from_yaml(const YAML::Node& n) {
  TimeResult r;
  r.baseline_version = get_or<std::string>(n, "baseline_version", "");
  r.baseline = timed_entry_from_yaml(n["baseline"]);
  r.baseline_checked = get_or<bool>(n, "baseline_checked", false);
  for (const auto& e : n["entries"]) r.entries.push_back(timed_entry_from_yaml(e));
  if (n["traffic"]) {
    r.traffic.bytes = get_or<int64_t>(n["traffic"], "bytes", 0);
    r.traffic.copy_ms = get_or<double>(n["traffic"], "copy_ms", 0.0);
  }
  for (const auto& entry : n["phase_seconds"])
    r.phase_seconds[entry.first.as<std::string>()] = entry.second.as<double>();
  return r;
}

YAML::Node to_yaml(const CaseJob& j) {
  YAML::Node n;
  n["kind"] = "case";
  for (const CaseSet& set : j.sets) {
    YAML::Node s;
    s["candidate"] = set.candidate;
    s["image"] = set.image.string();
    for (const fuzz::CaseRecord& record : set.records) s["cases"].push_back(to_yaml(record));
    n["sets"].push_back(s);
  }
  n["runs"] = j.runs;
  n["progress"] = j.progress.string();
  return n;
}

CaseJob case_job_from_yaml(const YAML::Node& n) {
  CaseJob j;
  const YAML::Node sets = n["sets"];
  if (!sets.IsSequence() || sets.size() == 0)
    throw Error(ErrorKind::bad_input, "a case job needs a non-empty list of sets", {"", 0, 0, "sets"});
  for (const YAML::Node& s : sets) {
    CaseSet set;
    set.candidate = get<std::string>(s, "candidate");
    set.image = get<std::string>(s, "image");
    const YAML::Node cases = s["cases"];
    if (!cases.IsSequence() || cases.size() == 0)
      throw Error(ErrorKind::bad_input, "a case job's set needs a non-empty list of cases",
                  {"", 0, 0, "cases"});
    for (const YAML::Node& c : cases) set.records.push_back(case_from_yaml(c));
    j.sets.push_back(std::move(set));
  }
  j.runs = get_or<int64_t>(n, "runs", 2);
  j.progress = get<std::string>(n, "progress");
  return j;
}

YAML::Node to_yaml(const CaseResult& r) {
  YAML::Node n;
  n["passed"] = r.passed;
  n["refused"] = r.refused;
  n["class"] = r.failure_class;
  n["subtype"] = r.subtype;
  n["message"] = r.message;
  return n;
}

CaseResult case_result_from_yaml(const YAML::Node& n) {
  CaseResult r;
  r.passed = get<bool>(n, "passed");
  r.refused = get_or<bool>(n, "refused", false);
  r.failure_class = get_or<std::string>(n, "class", "");
  r.subtype = get_or<std::string>(n, "subtype", "");
  r.message = get_or<std::string>(n, "message", "");
  return r;
}

std::string yaml_end_line(const YAML::Node& node) {
  const auto rows = [](const YAML::Node& table) -> int64_t {
    return table.IsMap() && table["problems"] && table["problems"].IsSequence()
               ? static_cast<int64_t>(table["problems"].size())
               : -1;
  };
  if (!node.IsMap()) return "# end";
  int64_t count = rows(node);
  if (count < 0 && node["tables"] && node["tables"].IsSequence()) {
    count = 0;
    for (const YAML::Node& table : node["tables"]) count += std::max<int64_t>(rows(table), 0);
  }
  return count < 0 ? "# end" : "# end: " + std::to_string(count) + " problems";
}

void write_yaml(const std::filesystem::path& path, const YAML::Node& node) {
  YAML::Emitter out;
  out.SetDoublePrecision(12);  // 800.55, not 800.54999999999995
  out << node;
  write_file_atomically(path, std::string(out.c_str()) + "\n" + yaml_end_line(node) + "\n");
}

YAML::Node read_yaml(const std::filesystem::path& path) {
  return load_yaml_file(path, "YAML file", kTableByteLimit, kTableNodeLimit);
}

}  // namespace tunefuzz
