// What every template launcher does the same way: after loading a module, check the kernel's own record of
// its geometry (tf_kernel_meta = {threads, shared memory bytes, BM, BN}, computed by the template's
// constexprs) against the template's host-side formulas, so a launch never runs a kernel the host
// misunderstands; and turn one GEMM's operands into the kernel arguments.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "templates/gemm_params.h"
#include "runtime/cuda/cuda.hpp"
#include "runtime/cuda/runner.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz::device {

/// Throws Error{internal} naming both sides when `module`'s tf_kernel_meta disagrees with `candidate`'s
/// template formulas (threads per block, shared memory bytes, BM, BN).
void check_kernel_meta(const Module& module, const Candidate& candidate);

/// How many CTAs of `function` (with `threads` threads and `shared_memory_bytes` of dynamic shared memory)
/// are resident at once on the current device: SMs × CTAs per SM, at least the SM count. A persistent
/// launch's grid.
int64_t resident_ctas(CUfunction function, int64_t threads, int64_t shared_memory_bytes);

/// How many clusters of `cluster_size` CTAs of `function` are resident at once (at least 1): fewer than
/// resident_ctas / cluster_size where a GPC's free SMs do not pair up.
int64_t resident_clusters(CUfunction function, int64_t cluster_size, int64_t threads,
                          int64_t shared_memory_bytes);

/// The GEMM kernel of `layout` in `module` (gemm_entry_name), loaded on first use with `shared_memory_bytes`
/// of dynamic shared memory opted in; `then`, when given, runs on it once after that (an occupancy to read).
std::unique_ptr<LazyFunction> gemm_entry(const Module& module, const Layout& layout,
                                         int64_t shared_memory_bytes,
                                         std::function<void(CUfunction)> then = {});

/// The launch a GEMM with a zero size makes instead of the template's own (tunefuzz::quick_return): none for
/// M or N = 0, tf_scale_c (`scale_c`, from the candidate's module) for K = 0. True when `gemm` was such a
/// GEMM (the caller launches nothing more), false when the template's kernels must run.
bool launch_quick_return(const LazyFunction& scale_c, const DeviceGemm& gemm, CUstream stream);

/// The packing kernels of a candidate's module (templates/pack.h); `transposed` is needed only by plans that
/// transpose (PackRule::tma_k_major).
struct PackKernels {
  const LazyFunction* pack = nullptr;
  const LazyFunction* transposed = nullptr;
};

/// PACK=1: copies the operands `plan` names into `workspace` (A, then B) with tf_pack or, where the plan
/// transposes, tf_pack_transposed, and points `p`'s operands, K and leading dimensions at the copies (the
/// GEMM then runs in plan.layout). Returns the workspace bytes the copies take (plan.a_bytes + b_bytes).
int64_t launch_packing(const PackKernels& kernels, const PackPlan& plan, const DeviceGemm& gemm,
                       int64_t element_bytes, CUdeviceptr workspace, TfGemmParams& p, CUstream stream);

/// Split-K's second pass (tf_reduce, from the candidate's module) over the partials `p` points at.
void launch_split_k_reduce(const LazyFunction& reduce, const TfGemmParams& p, const GemmShape& shape,
                           CUstream stream);

/// Split-K finished in the launch itself (gemm_skinny): one 32-bit arrival counter
/// per output tile, zero when a launch starts and put back to zero by the split
/// that arrives last. The counters stay outside the workspace, which the fuzzer fills with NaN before every
/// launch. One buffer per stream (by cuStreamGetId, which a new stream never reuses): launches on one stream
/// are ordered, so no two launches share counters at once, and threads may launch one runner on their own
/// streams together.
class SplitCounters {
 public:
  /// Runs `launch(counters)` with at least `count` counters of `stream`, all zero. A buffer grows (and is
  /// zeroed) only when a problem needs more counters than any before on its stream, after the stream has
  /// drained, since a launch still running may use the old one; the lock is held until `launch` has
  /// enqueued its kernel.
  template <class Launch>
  void with_zeroed(int64_t count, CUstream stream, Launch launch) const {
    const std::lock_guard lock(mutex_);
    launch(zeroed(count, stream));
  }

 private:
  CUdeviceptr zeroed(int64_t count, CUstream stream) const;
  mutable std::mutex mutex_;
  mutable std::map<unsigned long long, DeviceBuffer> buffers_;  ///< by stream id, under mutex_
};

/// The kernel arguments of `gemm` as given: operands, sizes, leading dimensions, alpha and beta; every other
/// field zero.
TfGemmParams gemm_params(const DeviceGemm& gemm);

}  // namespace tunefuzz::device
