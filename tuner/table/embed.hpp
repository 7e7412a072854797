// `tune export --format cmake --embed-kernels`: every winner of the tables compiled ahead of time for its
// table's GPU (a cubin from NVRTC for sm_*, a code object from hiprtc for gfx*, through the kernel cache), and
// the C++ that carries the images into the package (tunefuzz/kernels.hpp, src/kernels.cpp), so a program
// linking tunefuzz::tables runs them without compiling anything. Without images the header says so (an empty
// kImages), and the runtime compiles each kernel on first use instead.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/table/table_set.hpp"

namespace tunefuzz {

struct EmbeddedImage {
  std::string candidate;  ///< Candidate::id()
  std::string arch;       ///< the target it was compiled for (sm_90a for gemm_wgmma on sm_90)
  std::string image;
};

/// One image per distinct winner and target, its debug sections emptied (without_debug_sections: the code
/// digest is the tuned image's). Throws Error{bad_input} naming the table when a template in
/// `template_directory` is not the source the table was tuned with and a winner of it compiles to other code
/// than the table recorded, or the table records none (its image would be untested code:
/// tuner/table/staleness.hpp), and Error{compile} with the log when a winner does not compile.
std::vector<EmbeddedImage> compile_winners(const TableSet& set, const std::filesystem::path& template_directory,
                                           const KernelCache& cache);

/// include/tunefuzz/kernels.hpp: `tunefuzz_tables::kImages`, declared over src/kernels.cpp, or empty.
std::string kernels_header(const std::vector<EmbeddedImage>& images);
/// src/kernels.cpp: the images as byte arrays.
std::string kernels_source(const std::vector<EmbeddedImage>& images);

}  // namespace tunefuzz
