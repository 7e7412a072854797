#include "tuner/campaign/verdict_keys.hpp"

#include <map>
#include <mutex>

#include "fuzz/generators.hpp"
#include "fuzz/matrix.hpp"
#include "runtime/backend/elf_image.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {

std::string image_code_sha256(const std::filesystem::path& image) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::string> known;
  {
    std::lock_guard lock(mutex);
    if (const auto it = known.find(image); it != known.end()) return it->second;
  }
  const std::string digest = code_sha256(read_whole_file(image));
  std::lock_guard lock(mutex);
  return known[image] = digest;
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

// What a problem computes: everything but its name (and where it was written).
std::string problem_content(const Problem& problem) {
  YAML::Node node = to_yaml(problem);
  node.remove("name");
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::Flow << node;
  return out.c_str();
}

}  // namespace

VerdictKey fuzz_verdict_key(const CompiledCandidate& compiled, const FuzzOptions& options) {
  const std::string id = compiled.candidate.id();
  const bool twin = !compiled.perturbed_image.empty();
  return {
      {"candidate", id},
      {"image_code_sha256", image_code_sha256(compiled.image)},
      {"perturbed_image_code_sha256", twin ? image_code_sha256(compiled.perturbed_image) : ""},
      {"cases", std::to_string(options.cases)},
      {"perturbed_cases", std::to_string(twin ? perturbed_cases(options.cases) : 0)},
      {"sanitizer", joined(options.sanitizer)},
      {"sanitized_cases", std::to_string(options.sanitizer.empty() ? 0 : sanitized_cases(options.cases))},
      {"seed", std::to_string(candidate_seed(options.seed, id))},
      {"huge_weight", std::to_string(options.huge_weight)},
      {"kernel_deadline_s", std::to_string(options.kernel_deadline_s)},
      {"case_generator_version", std::to_string(fuzz::kCaseGeneratorVersion)},
      {"launch_version", std::to_string(kLaunchVersion)},
      {"card", options.store.card},
      {"driver", options.store.driver},
  };
}

std::string fuzz_verdict_digest(const CompiledCandidate& compiled, const FuzzOptions& options) {
  return verdict_digest(VerdictKind::fuzz, fuzz_verdict_key(compiled, options));
}

VerdictKey sanitizer_key(const Candidate& candidate, const std::filesystem::path& image,
                         const std::vector<std::string>& wrapper, const std::vector<fuzz::CaseRecord>& cases,
                         const StoreUse& use) {
  std::string replayed;
  for (const fuzz::CaseRecord& c : cases) replayed += fuzz::to_string(c) + "\n";
  return {
      {"candidate", candidate.id()},
      {"image_code_sha256", image_code_sha256(image)},
      {"sanitizer", joined(wrapper)},
      {"cases", replayed},
      {"case_generator_version", std::to_string(fuzz::kCaseGeneratorVersion)},
      {"launch_version", std::to_string(kLaunchVersion)},
      {"card", use.card},
      {"driver", use.driver},
  };
}

VerdictKey screen_key(const Problem& problem, const FuzzedCandidate& candidate, int64_t screen_repeats,
                      const TimeOptions& options) {
  return {
      {"problem", problem_content(problem)},
      {"candidate", candidate.candidate.id()},
      {"image_code_sha256", image_code_sha256(candidate.image)},
      {"warmup", std::to_string(options.warmup)},
      {"screen_repeats", std::to_string(screen_repeats)},
      {"screen_version", std::to_string(kScreenVersion)},
      {"launch_version", std::to_string(kLaunchVersion)},
      {"inputs_version", std::to_string(fuzz::kUniformFillVersion)},
      {"timer_version", std::to_string(kTimerVersion)},
      {"seed", std::to_string(options.seed)},
      {"card", options.store.card},
      {"driver", options.store.driver},
      {"clocks", "unknown"},
  };
}

VerdictKey baseline_key(const Problem& problem, const TimeOptions& options) {
  return {
      {"problem", problem_content(problem)},
      {"launch_version", std::to_string(kLaunchVersion)},
      {"inputs_version", std::to_string(fuzz::kUniformFillVersion)},
      {"case_generator_version", std::to_string(fuzz::kCaseGeneratorVersion)},
      {"seed", std::to_string(options.seed)},
      {"card", options.store.card},
      {"driver", options.store.driver},
  };
}

VerdictKey timing_key(const Problem& problem, const std::vector<const FuzzedCandidate*>& candidates,
                      const TimeOptions& options) {
  std::string timed;
  for (const FuzzedCandidate* c : candidates)
    timed += c->candidate.id() + " " + image_code_sha256(c->image) + "\n";
  return {
      {"problem", problem_content(problem)},
      {"candidates", timed},
      {"warmup", std::to_string(options.warmup)},
      {"repeats", std::to_string(options.repeats)},
      {"screen_repeats", std::to_string(options.screen_repeats)},
      {"finalists", std::to_string(options.finalists)},
      {"launch_version", std::to_string(kLaunchVersion)},
      {"strategy", to_string(options.strategy)},
      {"inputs_version", std::to_string(fuzz::kUniformFillVersion)},
      {"timer_version", std::to_string(kTimerVersion)},
      {"seed", std::to_string(options.seed)},
      {"card", options.store.card},
      {"driver", options.store.driver},
      {"clocks", "unknown"},
  };
}

}  // namespace tunefuzz
