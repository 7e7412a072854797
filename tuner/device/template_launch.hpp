// What every template launcher does the same way: after loading a module, check the kernel's own record of
// its geometry (tf_kernel_meta = {threads, shared memory bytes, BM, BN}, computed by the template's
// constexprs) against the template's host-side formulas, so a launch never runs a kernel the host
// misunderstands; and turn one GEMM's operands into the kernel arguments.
#pragma once

#include "templates/gemm_params.h"
#include "tuner/device/cuda.hpp"
#include "tuner/device/runner.hpp"
#include "tuner/templates/kernel_template.hpp"

namespace tunefuzz::device {

/// Throws Error{internal} naming both sides when `module`'s tf_kernel_meta disagrees with `candidate`'s
/// template formulas (threads per block, shared memory bytes, BM, BN).
void check_kernel_meta(const Module& module, const Candidate& candidate);

/// The kernel arguments of `gemm` as given: operands, sizes, leading dimensions, alpha and beta; every other
/// field zero.
TfGemmParams gemm_params(const DeviceGemm& gemm);

}  // namespace tunefuzz::device
