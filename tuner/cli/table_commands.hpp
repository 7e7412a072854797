// The `tune` subcommands that work on results tables (no GPU; the compiler only for export --embed-kernels):
// show, export, merge, report.
#pragma once

#include <string>
#include <vector>

namespace tunefuzz::cli {

/// Aligned columns per card: problem, shape, types, winner TFLOP/s, baseline TFLOP/s, ratio, winner config.
int show(const std::vector<std::string>& tables, bool json);
/// `embed_kernels`: compile the winners ahead of time into the cmake package (templates and kernel cache as
/// the campaign finds them).
int export_command(const std::vector<std::string>& tables, const std::string& format,
                   const std::string& output, bool embed_kernels = false);
int merge(const std::vector<std::string>& tables, const std::string& output, const std::string& prefer);
int report(const std::string& table, const std::string& output, const std::string& problem,
           const std::string& x, const std::string& y);

}  // namespace tunefuzz::cli
