#include "tuner/campaign/session.hpp"

#include <cstdio>

#include "runtime/backend/compiler_for.hpp"
#include "tuner/campaign/confirm_stage.hpp"
#include "tuner/campaign/environment.hpp"

namespace tunefuzz {

std::vector<CompiledCandidate> compile_candidates(const Config& config,
                                                  const std::vector<Candidate>& candidates, int jobs,
                                                  Twins twins, std::string* compiler_version) {
  const std::unique_ptr<Compiler> compiler = compiler_for(config.gpu);
  const KernelCache cache(KernelCache::default_directory());
  if (compiler_version) *compiler_version = compiler->version();
  std::fprintf(stderr, "compiling %zu candidates with %s for %s (cache: %s)\n", candidates.size(),
               compiler->version().c_str(), config.gpu.arch.c_str(), cache.directory().c_str());
  // The twin's seed must not be 0 (no twin) whatever the config's seed is.
  const uint64_t perturb = twins == Twins::perturbed ? (config.seed == 0 ? 1 : config.seed) : 0;
  return compile_stage(candidates, config, *compiler, cache, {template_directory(), jobs, perturb});
}

Prepared prepare(const std::filesystem::path& config_file, int jobs, Twins twins,
                 const std::vector<Candidate>& extra) {
  Prepared p;
  p.config = load_config(config_file);
  // A target the compiler cannot build for is the config's one error (at gpu.arch), before any template's own
  // rule about the GPUs it runs on.
  compiler_for(p.config.gpu);
  p.space = space_stage(p.config);
  std::vector<Candidate> all = p.space.candidates;
  all.insert(all.end(), extra.begin(), extra.end());
  if (twins == Twins::unless_screened) twins = fuzz_is_screened(p.config) ? Twins::none : Twins::perturbed;
  p.compiled = compile_candidates(p.config, all, jobs, twins, &p.compiler);
  return p;
}

namespace {

// The card's arch must be the config's; a limit stated differently is a warning.
DeviceInfo check_card(const Config& config, const DeviceInfo& device) {
  if (device.arch != config.gpu.arch)
    throw Error(ErrorKind::bad_input,
                "the config targets " + config.gpu.arch + " but the GPU is " + device.name + " (" +
                    device.arch + "); use the config for this card",
                config.gpu.where);
  for (const std::string& mismatch : limit_mismatches(config.gpu, device))
    std::fprintf(stderr, "warning: %s: %s\n", config.file.c_str(), mismatch.c_str());
  return device;
}

}  // namespace

DeviceInfo require_device(const Config& config) {
  const ScratchDirectory scratch;
  const ProbeOutcome probe = probe_device(scratch.path);
  if (!probe.device) throw Error(ErrorKind::no_device, "no usable GPU: " + probe.reason);
  return check_card(config, *probe.device);
}

DeviceInfo require_devices(const Config& config, const GpuChoice& choice, std::vector<Gpu>& gpus) {
  if (!choice.given()) return require_device(config);
  const ScratchDirectory scratch;
  DeviceInfo first;
  gpus = probe_gpus(choice, scratch.path, &first);
  std::fprintf(stderr, "GPUs: %s\n", describe(gpus).c_str());
  return check_card(config, first);
}

}  // namespace tunefuzz
