// Compiles every candidate on all cores, through the cache, and prunes on what only the compiler knows:
// register spills, occupancy below the configured minimum, and PTX that lacks the instructions the template
// means to use (a slower path; NVIDIA targets only: hiprtc hands out no assembly to look into).
#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/common/hash.hpp"

namespace tunefuzz {

const char* to_string(CompileStatus status) {
  switch (status) {
    case CompileStatus::compiled:
      return "compiled";
    case CompileStatus::compile_failed:
      return "compile_failed";
    case CompileStatus::spills:
      return "spills";
    case CompileStatus::occupancy:
      return "occupancy";
    case CompileStatus::slow_path:
      return "slow_path";
  }
  return "?";
}

namespace {

void judge_resources(CompiledCandidate& out, const CompiledKernel& kernel, const Config& config) {
  const Candidate& c = out.candidate;
  const KernelTemplate& t = *c.kernel_template;
  // The main kernel: the one the template says the point launches, else the first GEMM entry point the image
  // exports (LAYOUTS may leave some out).
  auto it = kernel.resources.end();
  if (t.main_entry)
    it = kernel.resources.find(t.main_entry(c.point));
  else
    for (const std::string& entry : t.entry_points)
      if (entry.starts_with("tf_gemm") && (it = kernel.resources.find(entry)) != kernel.resources.end())
        break;
  if (it == kernel.resources.end()) {
    out.status = CompileStatus::compile_failed;
    out.message = "the compiler reported the resources of no GEMM kernel (tf_gemm*)";
    return;
  }
  out.resources = it->second;
  out.occupancy =
      occupancy(t.threads_per_block(c.point), out.resources.registers,
                t.shared_memory_bytes(c.point) + out.resources.static_shared_bytes, config.gpu.limits);
  const bool has_ptx = !is_amd_arch(config.gpu.arch);
  for (const std::string& instruction :
       has_ptx ? t.expected_instructions(c.point) : std::vector<std::string>{})
    if (kernel.ptx.find(instruction) == std::string::npos) {
      out.status = CompileStatus::slow_path;
      out.message = "PTX has no " + instruction + ": compiled onto a slower path";
      return;
    }
  for (const std::string& phrase : t.slow_path_log_phrases) {
    const size_t at = kernel.log.find(phrase);
    if (at == std::string::npos) continue;
    const size_t begin = kernel.log.rfind('\n', at), end = kernel.log.find('\n', at);
    out.status = CompileStatus::slow_path;
    out.message =
        "compiler: " + kernel.log.substr(begin == std::string::npos ? 0 : begin + 1,
                                         end == std::string::npos ? std::string::npos : end - begin - 1);
    return;
  }
  if (out.resources.spills() && !config.pruning.allow_spills) {
    out.status = CompileStatus::spills;
    out.message = out.resources.spilled_registers > 0
                      ? std::to_string(out.resources.spilled_registers) + " registers spilled to scratch (" +
                            std::to_string(out.resources.stack_frame_bytes) + " bytes private segment)"
                      : std::to_string(out.resources.spill_store_bytes) + " bytes spill stores, " +
                            std::to_string(out.resources.spill_load_bytes) + " bytes spill loads";
    return;
  }
  if (out.occupancy.blocks_per_sm < config.pruning.min_blocks_per_sm) {
    out.status = CompileStatus::occupancy;
    out.message = std::to_string(out.occupancy.blocks_per_sm) + " CTAs per SM (limited by " +
                  out.occupancy.limited_by + "), minimum " + std::to_string(config.pruning.min_blocks_per_sm);
  }
}

// Compiles the perturbed twin of every kept candidate and records its image beside the candidate's own. A
// twin is only fuzzed, so what the compiler says of its resources (the delays cost registers) prunes nothing;
// a twin that does not compile leaves its candidate unprovable.
void attach_perturbed_twins(std::vector<CompiledCandidate>& out, const Config& config, const Compiler& compiler,
                            const KernelCache& cache, const CompileOptions& options) {
  std::vector<Candidate> twins;
  std::vector<size_t> owners;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].status != CompileStatus::compiled) continue;
    Candidate twin = out[i].candidate;
    twin.perturb = perturb_seed(options.perturb_seed, twin.id());
    twins.push_back(twin);
    owners.push_back(i);
  }
  if (twins.empty()) return;
  CompileOptions plain = options;
  plain.perturb_seed = 0;
  const std::vector<CompiledCandidate> compiled = compile_stage(twins, config, compiler, cache, plain);
  for (size_t t = 0; t < compiled.size(); ++t) {
    CompiledCandidate& owner = out[owners[t]];
    if (compiled[t].status == CompileStatus::compile_failed) {
      owner.status = CompileStatus::compile_failed;
      owner.message = "its schedule-perturbed twin did not compile: " + compiled[t].message;
      continue;
    }
    owner.perturbed_image = compiled[t].image;
    owner.perturb = compiled[t].candidate.perturb;
  }
}

}  // namespace

int64_t perturb_seed(uint64_t campaign_seed, const std::string& candidate_id) {
  return 1 + static_cast<int64_t>(candidate_seed(campaign_seed, candidate_id + "/perturb") % 0xFFFFFFFEu);
}

std::vector<CompiledCandidate> compile_stage(const std::vector<Candidate>& candidates, const Config& config,
                                             const Compiler& compiler, const KernelCache& cache,
                                             const CompileOptions& options) {
  std::map<std::string, KernelSource> sources;  // by template source file, loaded once
  for (const Candidate& c : candidates)
    if (!sources.count(c.kernel_template->source_file))
      sources.emplace(c.kernel_template->source_file,
                      KernelSource::load(options.template_directory, c.kernel_template->source_file));

  // Candidates that differ only in launcher parameters (PACK) share one image: compile each key once.
  std::vector<CompiledCandidate> out(candidates.size());
  std::vector<CompileRequest> requests;
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    out[i].candidate = c;
    requests.push_back({&sources.at(c.kernel_template->source_file),
                        c.kernel_template->defines(c.point, c.types, c.mutant, c.perturb),
                        c.kernel_template->compile_arch(config.gpu.arch, config.gpu.arch_where)});
    out[i].key = compiler.key(requests.back());
    by_key[out[i].key].push_back(i);
  }
  std::vector<const std::vector<size_t>*> groups;
  for (const auto& [key, members] : by_key) groups.push_back(&members);
  // The longest compiles first (as long as the last compile of the same request but its source took: a
  // changed template compiles as long as it did), those never timed before them, and what the cache holds
  // last: a long image started late runs alone at the end while the other cores wait (at 637ee23, the last
  // 6–10 s of the H200 campaign's compile stage left most of 16 cores idle).
  std::vector<std::string> shapes(groups.size());
  std::vector<double> expected(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const size_t first = groups[g]->front();
    const CompileRequest& request = requests[first];
    std::string shape = request.source->file_name + "\n" + request.arch;
    for (const Define& d : request.defines) shape += "\n" + d.name + "=" + std::to_string(d.value);
    shapes[g] = sha256_hex(shape);
    expected[g] = cache.contains(out[first].key)
                      ? -1.0
                      : cache.compile_seconds_of(shapes[g]).value_or(std::numeric_limits<double>::infinity());
  }
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return expected[a] > expected[b]; });

  Progress progress("compile", static_cast<int64_t>(groups.size()), options.quiet);
  std::atomic<size_t> next{0};
  std::mutex log_mutex;
  const auto work = [&] {
    for (size_t n = next++; n < order.size(); n = next++) {
      const size_t g = order[n];
      const std::vector<size_t>& members = *groups[g];
      const CompileRequest& request = requests[members.front()];
      std::optional<CompiledKernel> kernel;
      std::string failure;
      try {
        const std::string& key = out[members.front()].key;
        const auto report_damage = [&](const std::string& why) {
          std::lock_guard lock(log_mutex);
          std::fprintf(stderr, "\n%s\n", why.c_str());
        };
        kernel = cache.load(key, report_damage);
        if (!kernel) {
          // Another campaign sharing the cache may be compiling this key: wait for it, then look again.
          const KernelCache::KeyLock key_lock(cache, key);
          kernel = cache.load(key, report_damage);
          if (!kernel) {
            kernel = compiler.compile(request);
            cache.store(*kernel);
            cache.record_compile_seconds(shapes[g], kernel->compile_seconds);
          }
        }
      } catch (const Error& e) {
        failure = e.what();
        if (!e.detail().empty()) failure += "\n" + e.detail();
      }
      for (size_t i : members) {
        CompiledCandidate& record = out[i];
        if (!kernel) {
          record.status = CompileStatus::compile_failed;
          record.message = failure;
          continue;
        }
        record.from_cache = kernel->from_cache;
        record.seconds = kernel->from_cache || i != members.front() ? 0 : kernel->compile_seconds;
        record.image = cache.image_path(record.key);
        judge_resources(record, *kernel, config);
      }
      progress.advance(out[members.front()].candidate.id());
    }
  };
  // No more threads than images to compile: a huge --jobs asks for parallelism, not for threads to spare.
  const unsigned threads = static_cast<unsigned>(std::clamp<size_t>(
      options.jobs > 0 ? static_cast<size_t>(options.jobs) : std::max(1u, std::thread::hardware_concurrency()),
      1, std::max<size_t>(groups.size(), 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& thread : pool) thread.join();
  int64_t kept = 0, cached = 0;
  for (const auto& r : out) {
    kept += r.status == CompileStatus::compiled;
    cached += r.from_cache;
  }
  progress.finish(std::to_string(groups.size()) + " distinct images for " + std::to_string(out.size()) +
                  " candidates; " + std::to_string(kept) + " kept, " + std::to_string(cached) +
                  " from cache" + (options.perturb_seed ? "; their schedule-perturbed twins next" : ""));
  if (options.perturb_seed != 0) attach_perturbed_twins(out, config, compiler, cache, options);
  return out;
}

}  // namespace tunefuzz
