// The public Table and Choice: a table read from a file written by `tune run`, and what a choice says.
#include "runtime/dispatch/results_reader.hpp"
#include "tunefuzz/runtime.hpp"

namespace tunefuzz::runtime {

Table Table::from_file(const std::string& path) {
  const ResultsTable read = read_results_table(path);
  Table table;
  for (const TableRow& row : read.rows) {
    if (!row.winner) continue;
    const tunefuzz::Problem& p = row.problem;
    const auto hash = read.template_hashes.find(row.winner->template_name);
    table.rows.push_back(TunedRow{
        read.gpu_name, read.gpu_arch, p.name, p.m, p.n, p.k, tunefuzz::to_string(p.input),
        tunefuzz::to_string(p.output), tunefuzz::to_string(p.layout), row.winner->id, row.winner->tflops,
        hash == read.template_hashes.end() ? "" : hash->second, p.alpha, p.beta, row.winner->code_sha256});
  }
  return table;
}

const char* to_string(Source source) {
  switch (source) {
    case Source::quick_return: return "quick_return";
    case Source::exact: return "exact";
    case Source::nearest_shape: return "nearest_shape";
    case Source::same_arch: return "same_arch";
    case Source::safe_default: return "safe_default";
    case Source::cublas: return "cublas";
  }
  return "unknown";
}

std::string Choice::explain() const {
  std::string out;
  if (source == Source::quick_return) {
    out = "quick return: M or N is 0, nothing is launched";
  } else {
    out = kernel + " (" + to_string(source) + (row.empty() ? "" : ", row " + row) + ")";
    if (!image.empty()) out += ", image " + image;
    if (!form.empty()) out += ", runs " + form;
  }
  for (const std::string& passed : passed_over) out += "\n  passed over " + passed;
  return out;
}

}  // namespace tunefuzz::runtime
