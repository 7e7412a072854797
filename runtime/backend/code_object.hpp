// AMDGPU code objects (what hiprtc produces and hipModuleLoadData loads): the per-kernel resources recorded
// in the code object's metadata note (`amdhsa.kernels`, code object v3 and later), read through the ROCm
// code-object manager (comgr), and the targets that comgr knows.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/backend/compiler.hpp"

namespace tunefuzz {

/// Per-kernel resources by kernel name: `.vgpr_count` as registers (VGPRs and AGPRs together on gfx90a and
/// later, where they share one file), `.sgpr_count`,
/// `.group_segment_fixed_size` (static LDS), `.private_segment_fixed_size` (scratch per work-item) and
/// `.vgpr_spill_count` + `.sgpr_spill_count`. Throws Error{compile} when the image holds no such metadata.
std::map<std::string, KernelResources> read_code_object_resources(const std::string& image);

/// The processors comgr can target, e.g. `gfx90a`, in its order (from its ISA names
/// `amdgcn-amd-amdhsa--gfx90a[:feature...]`).
std::vector<std::string> comgr_targets();

/// comgr's version, e.g. `comgr 2.4`.
std::string comgr_version();

}  // namespace tunefuzz
