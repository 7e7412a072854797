// The `tune` subcommands that work on results tables (no GPU, no compiler): show, export, merge, report.
#pragma once

#include <string>
#include <vector>

namespace tunefuzz::cli {

/// Aligned columns per card: problem, shape, types, winner TFLOP/s, baseline TFLOP/s, ratio, winner config.
int show(const std::vector<std::string>& tables, bool json);
int export_command(const std::vector<std::string>& tables, const std::string& format,
                   const std::string& output);
int merge(const std::vector<std::string>& tables, const std::string& output, const std::string& prefer);
int report(const std::string& table, const std::string& output, const std::string& problem,
           const std::string& x, const std::string& y);

}  // namespace tunefuzz::cli
