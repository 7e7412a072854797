#include "tuner/campaign/reproducer.hpp"

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/common/hash.hpp"

#include <charconv>
#include <map>

#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"

namespace tunefuzz {

namespace fs = std::filesystem;

fs::path write_reproducer(const fs::path& directory, const Reproducer& r, const KernelSource& source,
                          const std::string& ptx) {
  const std::string name =
      "repro-" + sha256_hex(r.candidate + "/" + to_string(r.failure.shrunk_case)).substr(0, 12);
  const Candidate candidate = parse_candidate_id(r.candidate);
  std::string generated = "// " + r.candidate + "\n";
  for (const Define& d :
       candidate.kernel_template->defines(candidate.point, candidate.types, candidate.mutant, candidate.perturb))
    generated += "#define " + d.name + " " + std::to_string(d.value) + "\n";
  generated += source.text;
  write_file_atomically(directory / (name + ".cu"), generated);
  write_file_atomically(directory / (name + ".ptx"), ptx);

  YAML::Node n;
  n["format"] = kReproducerFormat;
  n["candidate"] = r.candidate;
  n["arch"] = r.arch;
  n["failure"]["class"] = fuzz::to_string(r.failure.failure_class);
  n["failure"]["subtype"] = r.failure.subtype;
  n["failure"]["message"] = r.failure.message;
  n["case"] = to_yaml(r.failure.shrunk_case);
  n["first_case"] = to_yaml(r.failure.first_case);
  n["cases_until_failure"] = r.failure.cases_until_failure;
  n["shrink_steps"] = r.failure.shrink_steps;
  n["seed"] = r.seed;
  n["reproduce"] = r.failure.reproduce;
  n["template_hash"] = r.template_hash;
  n["card"] = r.card;
  n["driver"] = r.driver;
  n["generated_source"] = name + ".cu";
  n["ptx"] = name + ".ptx";
  const fs::path path = directory / (name + ".yaml");
  write_yaml(path, n);
  return path;
}

void write_reproducers(std::vector<FuzzedCandidate>& fuzzed, const fs::path& directory,
                       const fs::path& template_directory, const DeviceInfo& device,
                       const std::string& arch) {
  std::map<std::string, KernelSource> sources;
  for (FuzzedCandidate& f : fuzzed) {
    if (!f.failure) continue;
    const std::string& file = f.candidate.kernel_template->source_file;
    if (!sources.count(file)) sources.emplace(file, KernelSource::load(template_directory, file));
    fs::path ptx_path = f.failed_image.empty() ? f.image : f.failed_image;
    ptx_path.replace_extension(".ptx");
    std::string ptx;
    try {
      ptx = read_whole_file(ptx_path);
    } catch (const Error&) {
      ptx = "// PTX not found at " + ptx_path.string() + "\n";
    }
    Candidate ran = f.candidate;  // the perturbed twin, when the failure came from it
    ran.perturb = f.failure->perturb;
    Reproducer r{ran.id(),                arch,        *f.failure,           f.seed,
                 sources.at(file).hash(), device.name, device.driver_version};
    f.reproducer = write_reproducer(directory, r, sources.at(file), ptx);
  }
}

Reproducer read_reproducer(const fs::path& file) {
  const YAML::Node n = load_yaml_file(file, "reproducer", kDocumentByteLimit, kDocumentNodeLimit);
  if (!n.IsMap()) throw Error(ErrorKind::bad_input, "a reproducer is a YAML map", {file.string(), 1, 1, ""});
  const auto where = [&](const std::string& field, const YAML::Node& node) {
    return SourceLocation{file.string(), node ? node.Mark().line + 1 : 0, node ? node.Mark().column + 1 : 0,
                          field};
  };
  const auto fail = [&](const std::string& field, const std::string& why) {
    throw Error(ErrorKind::bad_input, why, where(field, n[field.substr(0, field.find('.'))]));
  };
  const auto text = [&](const char* field, bool required) {
    if (!n[field]) {
      if (required) fail(field, "missing");
      return std::string();
    }
    if (!n[field].IsScalar()) fail(field, "expected a string");
    return n[field].Scalar();
  };
  if (text("format", true) != kReproducerFormat)
    fail("format", "unknown format (expected " + std::string(kReproducerFormat) + ")");
  Reproducer r;
  r.candidate = text("candidate", true);
  Candidate candidate;
  try {
    candidate = parse_candidate_id(r.candidate);
  } catch (const Error& e) {
    fail("candidate", e.message());
  }
  // The arch a replay compiles for: a target name (no options ride along) the template runs on.
  r.arch = text("arch", true);
  if (!is_arch_name(r.arch))
    fail("arch", "invalid arch '" + r.arch + "' (expected e.g. sm_90 or gfx90a)");
  try {
    candidate.kernel_template->compile_arch(r.arch);
  } catch (const Error& e) {
    fail("arch", e.message());
  }
  for (const char* field : {"case", "first_case"}) {
    if (!n[field] && std::string(field) == "first_case") continue;
    try {
      const fuzz::CaseRecord record = case_from_yaml(n[field]);
      (std::string(field) == "case" ? r.failure.shrunk_case : r.failure.first_case) = record;
    } catch (const Error& e) {
      const SourceLocation& inner = e.where();
      throw Error(ErrorKind::bad_input, e.message(),
                  inner.line > 0 ? SourceLocation{file.string(), inner.line, inner.column,
                                                  std::string(field) + "." + inner.field}
                                 : where(std::string(field) + (inner.field.empty() ? "" : "." + inner.field),
                                         n[field]));
    } catch (const YAML::Exception& e) {
      fail(field, e.msg);
    }
  }
  if (const YAML::Node f = n["failure"]) {
    if (!f.IsMap()) fail("failure", "expected a map (class, subtype, message)");
    // Each field a string, or the reproducer is malformed (a map or a list where a string belongs).
    const auto scalar = [&](const char* field) {
      const YAML::Node value = f[field];
      if (!value) return std::string();
      if (!value.IsScalar())
        throw Error(ErrorKind::bad_input, "expected a string", where(std::string("failure.") + field, value));
      return value.Scalar();
    };
    const std::string name = scalar("class");
    if (auto c = fuzz::parse_failure_class(name))
      r.failure.failure_class = *c;
    else if (!name.empty())
      throw Error(ErrorKind::bad_input, "unknown failure class '" + name + "'", where("failure.class", f["class"]));
    r.failure.subtype = scalar("subtype");
    r.failure.message = scalar("message");
  }
  if (n["seed"]) {
    const std::string seed = text("seed", false);
    const auto [end, error] = std::from_chars(seed.data(), seed.data() + seed.size(), r.seed);
    if (seed.empty() || error != std::errc() || end != seed.data() + seed.size())
      fail("seed", "expected an unsigned 64-bit integer, got '" + seed + "'");
  }
  r.failure.reproduce = text("reproduce", false);
  r.template_hash = text("template_hash", false);
  r.card = text("card", false);
  r.driver = text("driver", false);
  return r;
}

}  // namespace tunefuzz
