// `tune report`: one self-contained HTML file (no network, inline SVG) describing a campaign: TFLOP/s of
// each problem's winner against the baseline, the stage funnel (enumerated → pruned by reason → compiled →
// failed fuzz by class → timed) from the stage summary beside the table, and a heatmap of time over two
// parameters for one problem from the campaign journal beside the table.
#pragma once

#include <filesystem>
#include <string>

namespace tunefuzz {

struct ReportOptions {
  std::string problem;             ///< the heatmap's problem (default: the first in the table)
  std::string x = "BM", y = "BN";  ///< the heatmap's parameters
};

/// Reads TABLE, TABLE's .stages.yaml and .journal (each optional beyond the table: a missing one leaves its
/// chart out with a note) and writes the report.
void write_report(const std::filesystem::path& table, const std::filesystem::path& output,
                  const ReportOptions& options);

}  // namespace tunefuzz
