#include "tuner/campaign/session.hpp"

#include <cstdio>

#include "runtime/backend/compiler_for.hpp"
#include "tuner/campaign/confirm_stage.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/cluster/cluster.hpp"
#include "tuner/worker/worker_client.hpp"

namespace tunefuzz {

std::vector<CompiledCandidate> compile_candidates(const Config& config,
                                                  const std::vector<Candidate>& candidates, int jobs,
                                                  Twins twins, std::string* compiler_version, bool quiet) {
  const std::unique_ptr<Compiler> compiler = compiler_for(config.gpu);
  const KernelCache cache(KernelCache::default_directory());
  if (compiler_version) *compiler_version = compiler->version();
  if (!quiet)
    std::fprintf(stderr, "compiling %zu candidates with %s for %s (cache: %s)\n", candidates.size(),
                 compiler->version().c_str(), config.gpu.arch.c_str(), cache.directory().c_str());
  // The twin's seed must not be 0 (no twin) whatever the config's seed is.
  const uint64_t perturb = twins == Twins::perturbed ? (config.seed == 0 ? 1 : config.seed) : 0;
  return compile_stage(candidates, config, *compiler, cache, {template_directory(), jobs, perturb, quiet});
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
  if (cluster::size() > 1) {
    // Over MPI ranks each compiles every size-th candidate into the shared cache first; the full compile
    // below then finds them there, on rank 0 as on the others.
    cluster::require_shared(KernelCache::default_directory(), "the kernel cache");
    std::vector<Candidate> share;
    for (size_t i = static_cast<size_t>(cluster::rank()); i < all.size();
         i += static_cast<size_t>(cluster::size()))
      share.push_back(all[i]);
    std::fprintf(stderr, "rank %d of %d: compiling its share, %zu of %zu candidates\n", cluster::rank(),
                 cluster::size(), share.size(), all.size());
    compile_candidates(p.config, share, jobs, twins);
    cluster::barrier();
  }
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
  DeviceInfo device;
  if (!choice.given()) {
    device = require_device(config);
  } else {
    const ScratchDirectory scratch;
    gpus = probe_gpus(choice, scratch.path, &device);
    device = check_card(config, device);
  }
  if (cluster::size() > 1) gpus = cluster_gpus(std::move(gpus), device);
  if (!gpus.empty()) std::fprintf(stderr, "GPUs: %s\n", describe(gpus).c_str());
  return device;
}

EarlyDevices::EarlyDevices(const Config& config, const GpuChoice& choice,
                           std::filesystem::path work_directory)
    : config_(config), choice_(choice), work_directory_(std::move(work_directory)) {
  if (cluster::size() > 1) return;
  probe_ = std::async(std::launch::async, [this] {
    Probe probe;
    try {
      probe.device = require_devices(config_, choice_, probe.gpus);
      std::filesystem::create_directories(work_directory_);
      const int workers = static_cast<int>(config_.budgets.fuzz_workers);
      if (probe.gpus.empty()) start_serving_workers(-1, workers, work_directory_);
      for (const Gpu& gpu : probe.gpus)
        if (gpu.rank == cluster::rank()) start_serving_workers(gpu.index, workers, work_directory_);
    } catch (const Error& e) {
      probe.error = e;
    }
    return probe;
  });
}

DeviceInfo EarlyDevices::get(std::vector<Gpu>& gpus) {
  if (!probe_.valid()) {
    const DeviceInfo device = require_devices(config_, choice_, gpus);
    std::filesystem::create_directories(work_directory_);
    return device;
  }
  Probe probe = probe_.get();
  if (probe.error) throw *probe.error;
  gpus = probe.gpus;
  return probe.device;
}

int serve_rank(const GpuChoice& choice) {
  YAML::Node report;
  {
    const ScratchDirectory scratch;
    report = rank_gpu_report(choice, scratch.path);
  }
  if (report.IsMap())
    std::fprintf(stderr, "rank %d: %s\n", cluster::rank(), report["error"].as<std::string>().c_str());
  cluster::serve(report);
  return 0;
}

}  // namespace tunefuzz
