// `tune export`: a table set in the forms downstream builds consume. yaml and json carry every field (one
// table as is; several as a collection {format: tunefuzz-results-collection/1, tables: [...]}); csv one line
// per (GPU, problem) under a header line gpu,arch,problem,m,n,k,precision,output,layout,alpha,beta,template,
// candidate,tflops,median_ms,baseline_tflops,ratio (winner fields empty without a winner; RFC 4180 quoting);
// header a self-contained C++17 header (namespace tunefuzz_tables) of constexpr tables, one row per problem
// with a winner, and a constexpr lookup(); cmake an installable CMake package (find_package(tunefuzz) →
// target tunefuzz::tables) holding that header as include/tunefuzz/tables.hpp, and include/tunefuzz/kernels.hpp
// with the winners' images compiled ahead of time when asked (--embed-kernels), else none. The lookup rule, written at
// the top of the generated header: the exact problem on the same card → the nearest shape (sum of |log|
// ratios of m, n, k) of the same element types and layout on that card → the same over every card of the same
// arch → gemm_mma at its default point.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "tuner/table/table_set.hpp"

namespace tunefuzz {

enum class ExportFormat { yaml, json, csv, header, cmake };

std::optional<ExportFormat> parse_export_format(std::string_view text);

/// `cmake` only: compile every winner ahead of time and put the images in the package (tuner/table/embed.hpp),
/// with the templates of `template_directory`, through the kernel cache in `cache_directory`.
struct EmbedKernels {
  std::filesystem::path template_directory;
  std::filesystem::path cache_directory;
};

/// Writes `set` to `output`: a file, or for `cmake` a directory holding the package's sources (with the
/// winners' images when `embed` is given; Error{bad_input} for another format).
void export_tables(const TableSet& set, ExportFormat format, const std::filesystem::path& output,
                   const std::optional<EmbedKernels>& embed = std::nullopt);

}  // namespace tunefuzz
