// Picks the backend compiler for a config's GPU: NVRTC for `sm_*` targets, hiprtc for `gfx*` ones, and checks
// that it can target that GPU before anything is compiled, so a campaign stops with one clear error at the
// config's `gpu.arch` instead of a failure per candidate (or, with hiprtc, an aborted process).
#pragma once

#include <memory>

#include "runtime/backend/compiler.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz {

/// Throws Error{unsupported} at `gpu.arch` when this build has no compiler for the target (a `gfx*` target
/// in a build without HIP) or the compiler here cannot target it.
std::unique_ptr<Compiler> compiler_for(const GpuSpec& gpu);

/// Whether this build has the hiprtc backend (ROCm's hiprtc was found when it was configured).
bool built_with_hip();

}  // namespace tunefuzz
