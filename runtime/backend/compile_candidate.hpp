// One candidate's image for one GPU through the persistent kernel cache: what the runtime compiles on a
// kernel's first use and `tune export --embed-kernels` compiles ahead of time. (The campaign's compile stage
// does the same for many candidates at once, on all cores.)
#pragma once

#include <string>

#include "runtime/backend/compiler.hpp"
#include "runtime/backend/kernel_cache.hpp"

namespace tunefuzz {

/// The image of `candidate` (its template's source in `source`) for a GPU of `gpu_arch` (compiled for the
/// template's target there: sm_90a on sm_90 for gemm_wgmma): the cache's entry, else compiled and stored.
/// Processes sharing the cache compile a key once (KernelCache::KeyLock). Throws Error{compile} with the log.
CompiledKernel compile_candidate(const Candidate& candidate, const std::string& gpu_arch, const KernelSource& source,
                                 const Compiler& compiler, const KernelCache& cache);

}  // namespace tunefuzz
