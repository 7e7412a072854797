#include "runtime/backend/compile_candidate.hpp"

namespace tunefuzz {

CompiledKernel compile_candidate(const Candidate& candidate, const std::string& gpu_arch, const KernelSource& source,
                                 const Compiler& compiler, const KernelCache& cache) {
  const KernelTemplate& t = *candidate.kernel_template;
  const CompileRequest request{&source, t.defines(candidate.point, candidate.types, candidate.mutant, candidate.perturb),
                               t.compile_arch(gpu_arch)};
  const std::string key = compiler.key(request);
  if (auto kernel = cache.load(key)) return *kernel;
  const KernelCache::KeyLock lock(cache, key);  // another process may be compiling it: wait, then look again
  if (auto kernel = cache.load(key)) return *kernel;
  CompiledKernel kernel = compiler.compile(request);
  cache.store(kernel);
  return kernel;
}

}  // namespace tunefuzz
