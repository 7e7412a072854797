#include "tuner/cli/table_commands.hpp"

#include <cstdio>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/environment.hpp"
#include "tuner/table/export.hpp"
#include "tuner/table/json.hpp"
#include "tuner/table/merge.hpp"
#include "tuner/table/report.hpp"
#include "runtime/templates/kernel_template.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz::cli {

namespace {

TableSet read_all(const std::vector<std::string>& files) {
  TableSet all;
  for (const std::string& file : files) {
    TableSet one = read_table_set(file);
    all.tables.insert(all.tables.end(), one.tables.begin(), one.tables.end());
    all.documents.insert(all.documents.end(), one.documents.begin(), one.documents.end());
  }
  return all;
}

/// `text` safe for a terminal: control characters (a newline that would break the columns, an escape
/// sequence) and bytes that are not UTF-8 are shown as \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t length = utf8_sequence_length(text, i);
    if (length == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) length = 0;  // C1 controls
    if (length == 1 && c >= 0x20 && c != 0x7F) {
      out += static_cast<char>(c);
    } else if (length > 1) {
      out.append(text, i, length);
      i += length - 1;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

/// The winner's template and its parameters off their defaults, and the form it runs the problem in where
/// that is another (`[as Cᵀ = Bᵀ·Aᵀ: 1×8192×8192 RC]`: canonical_form).
std::string config_text(const TableWinner& w, const Problem& problem) {
  std::string out;
  const Candidate c = parse_candidate_id(w.id);
  for (const auto& [name, value] : c.point.values()) {
    if (c.kernel_template->parameter(name)->default_value == value && name != "BM" && name != "BN") continue;
    out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  const GemmShape shape = shape_of(problem);
  const std::string form = describe_form(shape, launch_form(*c.kernel_template, c.point, shape));
  return w.template_name + " " + out + (form.empty() ? "" : " [" + form + "]");
}

}  // namespace

int show(const std::vector<std::string>& files, bool json) {
  const TableSet set = read_all(files);
  if (json) {
    YAML::Node out;
    for (const YAML::Node& document : set.documents) out["tables"].push_back(document);
    std::fputs(to_json(out).c_str(), stdout);
    return 0;
  }
  for (const ResultsTable& t : set.tables) {
    std::printf("%s (%s, driver %s) — %s, commit %.12s, %s\n", printable(t.gpu_name).c_str(),
                printable(t.gpu_arch).c_str(), printable(t.driver).c_str(), printable(t.file.string()).c_str(),
                printable(t.tool_commit).c_str(), printable(t.date).c_str());
    std::printf("  %-24s %-17s %-16s %-6s %9s %9s %7s  %s\n", "problem", "m x n x k", "types", "layout",
                "TFLOP/s", "baseline", "ratio", "winner");
    for (const TableRow& row : t.rows) {
      const Problem& p = row.problem;
      const std::string name = printable(p.name);
      const std::string shape = std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
      const std::string types = std::string(to_string(p.input)) + "->" + to_string(p.output);
      const std::string layout = to_string(p.layout);
      if (row.winner && row.ratio_vs_baseline > 0)
        std::printf("  %-24s %-17s %-16s %-6s %9.1f %9.1f %6.2fx  %s\n", name.c_str(), shape.c_str(),
                    types.c_str(), layout.c_str(), row.winner->tflops, row.baseline_tflops,
                    row.ratio_vs_baseline, printable(config_text(*row.winner, p)).c_str());
      else if (row.winner)  // no baseline to compare with (the vendor library refused the problem, say)
        std::printf("  %-24s %-17s %-16s %-6s %9.1f %9s %7s  %s (baseline %s)\n", name.c_str(), shape.c_str(),
                    types.c_str(), layout.c_str(), row.winner->tflops, "-", "-",
                    printable(config_text(*row.winner, p)).c_str(), printable(row.baseline_status).c_str());
      else
        std::printf("  %-24s %-17s %-16s %-6s %9s %9.1f %7s  %s\n", name.c_str(), shape.c_str(),
                    types.c_str(), layout.c_str(), "-", row.baseline_tflops, "-", "(no candidate)");
    }
  }
  return 0;
}

int export_command(const std::vector<std::string>& files, const std::string& format,
                   const std::string& output, bool embed_kernels) {
  const auto parsed = parse_export_format(format);
  if (!parsed)
    throw Error(ErrorKind::bad_input, "--format " + format + ": expected yaml, json, csv, header or cmake");
  std::optional<EmbedKernels> embed;
  if (embed_kernels) embed = EmbedKernels{template_directory(), KernelCache::default_directory()};
  export_tables(read_all(files), *parsed, output, embed);
  std::fprintf(stderr, "wrote %s\n", output.c_str());
  return 0;
}

int merge(const std::vector<std::string>& files, const std::string& output, const std::string& prefer) {
  MergePreference preference = MergePreference::none;
  if (prefer == "first")
    preference = MergePreference::first;
  else if (prefer == "last")
    preference = MergePreference::last;
  else if (!prefer.empty())
    throw Error(ErrorKind::bad_input, "--prefer " + prefer + ": expected first or last");
  std::vector<TableSet> inputs;
  for (const std::string& file : files) inputs.push_back(read_table_set(file));
  write_yaml(output, merge_tables(inputs, preference));
  std::fprintf(stderr, "wrote %s\n", output.c_str());
  return 0;
}

int report(const std::string& table, const std::string& output, const std::string& problem,
           const std::string& x, const std::string& y) {
  ReportOptions options;
  options.problem = problem;
  if (!x.empty()) options.x = x;
  if (!y.empty()) options.y = y;
  write_report(table, output, options);
  std::fprintf(stderr, "wrote %s\n", output.c_str());
  return 0;
}

}  // namespace tunefuzz::cli
