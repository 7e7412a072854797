// Compiles every candidate on all cores, through the cache, and prunes on what only the compiler knows:
// register spills, occupancy below the configured minimum, and PTX that lacks the instructions the template
// means to use (a slower path).
#include <atomic>
#include <thread>

#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

const char* to_string(CompileStatus status) {
  switch (status) {
    case CompileStatus::compiled: return "compiled";
    case CompileStatus::compile_failed: return "compile_failed";
    case CompileStatus::spills: return "spills";
    case CompileStatus::occupancy: return "occupancy";
    case CompileStatus::slow_path: return "slow_path";
  }
  return "?";
}

namespace {

void judge_resources(CompiledCandidate& out, const CompiledKernel& kernel, const Config& config) {
  const Candidate& c = out.candidate;
  const KernelTemplate& t = *c.kernel_template;
  const std::string main_kernel = t.entry_points.front();
  const auto it = kernel.resources.find(main_kernel);
  if (it == kernel.resources.end()) {
    out.status = CompileStatus::compile_failed;
    out.message = "ptxas reported no resources for " + main_kernel;
    return;
  }
  out.resources = it->second;
  out.occupancy = occupancy(t.threads_per_block(c.point), out.resources.registers,
                            t.shared_memory_bytes(c.point) + out.resources.static_shared_bytes, config.gpu.limits);
  for (const std::string& instruction : t.expected_instructions(c.point))
    if (kernel.ptx.find(instruction) == std::string::npos) {
      out.status = CompileStatus::slow_path;
      out.message = "PTX has no " + instruction + ": compiled onto a slower path";
      return;
    }
  if (out.resources.spills() && !config.pruning.allow_spills) {
    out.status = CompileStatus::spills;
    out.message = std::to_string(out.resources.spill_store_bytes) + " bytes spill stores, " +
                  std::to_string(out.resources.spill_load_bytes) + " bytes spill loads";
    return;
  }
  if (out.occupancy.blocks_per_sm < config.pruning.min_blocks_per_sm) {
    out.status = CompileStatus::occupancy;
    out.message = std::to_string(out.occupancy.blocks_per_sm) + " CTAs per SM (limited by " +
                  out.occupancy.limited_by + "), minimum " + std::to_string(config.pruning.min_blocks_per_sm);
  }
}

}  // namespace

std::vector<CompiledCandidate> compile_stage(const std::vector<Candidate>& candidates, const Config& config,
                                             const Compiler& compiler, const KernelCache& cache,
                                             const CompileOptions& options) {
  std::map<std::string, KernelSource> sources;  // by template source file, loaded once
  for (const Candidate& c : candidates)
    if (!sources.count(c.kernel_template->source_file))
      sources.emplace(c.kernel_template->source_file,
                      KernelSource::load(options.template_directory, c.kernel_template->source_file));

  std::vector<CompiledCandidate> out(candidates.size());
  Progress progress("compile", static_cast<int64_t>(candidates.size()));
  std::atomic<size_t> next{0};
  std::mutex log_mutex;
  const auto work = [&] {
    for (size_t i = next++; i < candidates.size(); i = next++) {
      CompiledCandidate& record = out[i];
      record.candidate = candidates[i];
      const Candidate& c = candidates[i];
      const CompileRequest request{&sources.at(c.kernel_template->source_file),
                                   c.kernel_template->defines(c.point, c.types, c.mutant), config.gpu.arch};
      try {
        record.key = compiler.key(request);
        std::optional<CompiledKernel> kernel = cache.load(record.key, [&](const std::string& why) {
          std::lock_guard lock(log_mutex);
          std::fprintf(stderr, "\n%s\n", why.c_str());
        });
        if (!kernel) {
          kernel = compiler.compile(request);
          cache.store(*kernel);
        }
        record.from_cache = kernel->from_cache;
        record.seconds = kernel->from_cache ? 0 : kernel->compile_seconds;
        record.image = cache.image_path(record.key);
        judge_resources(record, *kernel, config);
      } catch (const Error& e) {
        record.status = CompileStatus::compile_failed;
        record.message = e.what();
        if (!e.detail().empty()) record.message += "\n" + e.detail();
      }
      progress.advance(c.id());
    }
  };
  const unsigned threads = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& thread : pool) thread.join();
  int64_t kept = 0, cached = 0;
  for (const auto& r : out) {
    kept += r.status == CompileStatus::compiled;
    cached += r.from_cache;
  }
  progress.finish(std::to_string(kept) + " kept, " + std::to_string(cached) + " from cache");
  return out;
}

}  // namespace tunefuzz
