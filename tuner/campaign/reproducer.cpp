#include "tuner/campaign/reproducer.hpp"

#include "tuner/backend/kernel_cache.hpp"
#include "tuner/common/hash.hpp"

#include <map>

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
  const YAML::Node n = read_yaml(file);
  const auto where = [&](const char* field) {
    const YAML::Node node = n[field];
    return SourceLocation{file.string(), node ? node.Mark().line + 1 : 0, node ? node.Mark().column + 1 : 0,
                          field};
  };
  const auto text = [&](const char* field) {
    if (!n[field] || !n[field].IsScalar())
      throw Error(ErrorKind::bad_input, "missing or not a string", where(field));
    return n[field].as<std::string>();
  };
  if (!n.IsMap()) throw Error(ErrorKind::bad_input, "a reproducer is a YAML map", {file.string(), 1, 1, ""});
  if (text("format") != kReproducerFormat)
    throw Error(ErrorKind::bad_input, "unknown format (expected " + std::string(kReproducerFormat) + ")",
                where("format"));
  Reproducer r;
  try {
    r.candidate = text("candidate");
    parse_candidate_id(r.candidate);
  } catch (const Error& e) {
    throw Error(ErrorKind::bad_input, e.message(), where("candidate"));
  }
  r.arch = text("arch");
  try {
    r.failure.shrunk_case = case_from_yaml(n["case"]);
    if (n["first_case"]) r.failure.first_case = case_from_yaml(n["first_case"]);
  } catch (const Error& e) {
    throw Error(ErrorKind::bad_input, e.message(), where("case"));
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::bad_input, e.msg, where("case"));
  }
  if (const YAML::Node f = n["failure"]; f && f.IsMap()) {
    // Each field a string, or the reproducer is malformed (a map or a list where a string belongs).
    const auto scalar = [&](const char* field) {
      const YAML::Node value = f[field];
      if (!value) return std::string();
      if (!value.IsScalar())
        throw Error(ErrorKind::bad_input, std::string("failure.") + field + " is not a string",
                    where("failure"));
      return value.as<std::string>();
    };
    if (auto c = fuzz::parse_failure_class(scalar("class"))) r.failure.failure_class = *c;
    r.failure.subtype = scalar("subtype");
    r.failure.message = scalar("message");
  }
  r.seed = n["seed"] ? n["seed"].as<uint64_t>(0) : 0;
  r.failure.reproduce = n["reproduce"] ? n["reproduce"].as<std::string>("") : "";
  r.template_hash = n["template_hash"] ? n["template_hash"].as<std::string>("") : "";
  r.card = n["card"] ? n["card"].as<std::string>("") : "";
  r.driver = n["driver"] ? n["driver"].as<std::string>("") : "";
  return r;
}

}  // namespace tunefuzz
