#include "runtime/dispatch/results_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>

#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

namespace {

// Typed access to a YAML tree with errors that say where: file, line, column and the dotted field path.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& message) const {
    const YAML::Mark mark = node.Mark();
    throw Error(ErrorKind::bad_input, message,
                {file_, mark.line >= 0 ? mark.line + 1 : 0, mark.column >= 0 ? mark.column + 1 : 0, field});
  }

  YAML::Node child(const YAML::Node& map, const std::string& key, const std::string& path) const {
    if (!map.IsMap()) fail(map, path, "expected a map");
    const YAML::Node value = map[key];
    if (!value) fail(map, path.empty() ? key : path + "." + key, "missing field '" + key + "'");
    return value;
  }

  std::string text(const YAML::Node& map, const std::string& key, const std::string& path) const {
    const YAML::Node value = child(map, key, path);
    if (!value.IsScalar()) fail(value, join(path, key), "expected a string");
    return value.Scalar();
  }

  int64_t integer(const YAML::Node& map, const std::string& key, const std::string& path) const {
    const YAML::Node value = child(map, key, path);
    int64_t out = 0;
    if (!value.IsScalar() || !YAML::convert<int64_t>::decode(value, out))
      fail(value, join(path, key),
           "expected an integer, got '" + (value.IsScalar() ? value.Scalar() : "a collection") + "'");
    return out;
  }

  double number(const YAML::Node& map, const std::string& key, const std::string& path) const {
    const YAML::Node value = child(map, key, path);
    double out = 0;
    if (!value.IsScalar() || !YAML::convert<double>::decode(value, out) || !std::isfinite(out))
      fail(value, join(path, key), "expected a finite number");
    return out;
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  std::string file_;
};

TableRow read_row(const Reader& r, const YAML::Node& node, const std::string& path) {
  TableRow row;
  Problem& p = row.problem;
  p.name = r.text(node, "name", path);
  p.m = r.integer(node, "m", path);
  p.n = r.integer(node, "n", path);
  p.k = r.integer(node, "k", path);
  for (const auto& [value, key] : {std::pair{p.m, "m"}, {p.n, "n"}, {p.k, "k"}})
    if (value < 1) r.fail(node[key], Reader::join(path, key), "must be >= 1");
  const auto input = parse_precision(r.text(node, "precision", path));
  if (!input) r.fail(node["precision"], path + ".precision", "unknown element type");
  const auto output = parse_precision(r.text(node, "output", path));
  if (!output) r.fail(node["output"], path + ".output", "unknown element type");
  const auto layout = parse_layout(r.text(node, "layout", path));
  if (!layout) r.fail(node["layout"], path + ".layout", "expected RR, RC, CR or CC");
  p.input = *input;
  p.output = *output;
  p.layout = *layout;
  p.alpha = r.number(node, "alpha", path);
  p.beta = r.number(node, "beta", path);
  const YAML::Node baseline = r.child(node, "baseline", path);
  row.baseline_status = r.text(baseline, "status", path + ".baseline");
  row.baseline_median_ms = r.number(baseline, "median_ms", path + ".baseline");
  row.baseline_tflops = r.number(baseline, "tflops", path + ".baseline");
  const YAML::Node winner = r.child(node, "winner", path);
  if (winner.IsNull()) return row;
  const std::string wpath = path + ".winner";
  TableWinner w;
  w.template_name = r.text(winner, "template", wpath);
  w.id = r.text(winner, "id", wpath);
  try {
    parse_candidate_id(w.id);
  } catch (const Error& e) {
    r.fail(winner["id"], wpath + ".id", e.message());
  }
  const YAML::Node config = r.child(winner, "config", wpath);
  if (!config.IsMap()) r.fail(config, wpath + ".config", "expected a map of parameter values");
  for (const auto& entry : config)
    w.config[entry.first.Scalar()] = r.integer(config, entry.first.Scalar(), wpath + ".config");
  w.median_ms = r.number(winner, "median_ms", wpath);
  w.tflops = r.number(winner, "tflops", wpath);
  if (w.median_ms <= 0) r.fail(winner["median_ms"], wpath + ".median_ms", "must be > 0");
  if (winner["code_sha256"]) {
    w.code_sha256 = r.text(winner, "code_sha256", wpath);
    if (w.code_sha256.size() != 64 ||
        w.code_sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      r.fail(winner["code_sha256"], wpath + ".code_sha256", "expected 64 lowercase hexadecimal digits");
  }
  row.winner = w;
  if (node["ratio_vs_baseline"]) row.ratio_vs_baseline = r.number(node, "ratio_vs_baseline", path);
  return row;
}

}  // namespace

ResultsTable parse_results_table_node(const YAML::Node& root, const std::string& file_name,
                                      const std::string& path) {
  const Reader r(file_name);
  const auto at = [&](const std::string& field) { return path.empty() ? field : path + "." + field; };
  try {
    if (!root.IsMap()) r.fail(root, path, "a results table is a YAML map");
    ResultsTable t;
    t.file = file_name;
    if (r.text(root, "format", path) != kResultsFormat)
      r.fail(root["format"], at("format"), std::string("unknown format (expected ") + kResultsFormat + ")");
    const YAML::Node gpu = r.child(root, "gpu", path);
    t.gpu_name = r.text(gpu, "name", at("gpu"));
    t.gpu_arch = r.text(gpu, "arch", at("gpu"));
    t.driver = r.text(gpu, "driver", at("gpu"));
    t.sm_count = r.integer(gpu, "sm_count", at("gpu"));
    const YAML::Node prov = r.child(root, "provenance", path);
    t.tool_version = r.text(prov, "tool_version", at("provenance"));
    t.tool_commit = r.text(prov, "tool_commit", at("provenance"));
    t.date = r.text(prov, "date", at("provenance"));
    t.command = r.text(prov, "command", at("provenance"));
    if (prov["compiler"]) t.compiler = r.text(prov, "compiler", at("provenance"));
    const YAML::Node hashes = r.child(prov, "template_hashes", at("provenance"));
    if (!hashes.IsMap())
      r.fail(hashes, at("provenance.template_hashes"), "expected a map of template name to hash");
    for (const auto& entry : hashes)
      t.template_hashes[entry.first.Scalar()] =
          r.text(hashes, entry.first.Scalar(), at("provenance.template_hashes"));
    const YAML::Node problems = r.child(root, "problems", path);
    if (!problems.IsSequence()) r.fail(problems, at("problems"), "expected a list of problems");
    for (size_t i = 0; i < problems.size(); ++i)
      t.rows.push_back(read_row(r, problems[i], at("problems[" + std::to_string(i) + "]")));
    return t;
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::bad_input, e.msg, {file_name, e.mark.line + 1, e.mark.column + 1, path});
  }
}

ResultsTable parse_results_table(const std::string& text, const std::string& file_name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::bad_input, e.msg, {file_name, e.mark.line + 1, e.mark.column + 1, ""});
  }
  return parse_results_table_node(root, file_name, "");
}

namespace {

/// The number the end line `# end: N problems` states, and the 1-based line it is on; nullopt without one.
std::optional<std::pair<int64_t, int>> end_line_rows(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  const size_t start = text.rfind('\n', end == 0 ? 0 : end - 1);
  const std::string last = text.substr(start == std::string::npos ? 0 : start + 1,
                                       end - (start == std::string::npos ? 0 : start + 1));
  static const std::string prefix = "# end: ", suffix = " problems";
  if (!last.starts_with(prefix) || !last.ends_with(suffix) || last.size() <= prefix.size() + suffix.size())
    return std::nullopt;
  const std::string digits = last.substr(prefix.size(), last.size() - prefix.size() - suffix.size());
  int64_t rows = 0;
  const auto [ptr, error] = std::from_chars(digits.data(), digits.data() + digits.size(), rows);
  if (error != std::errc() || ptr != digits.data() + digits.size() || rows < 0) return std::nullopt;
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(end), '\n'));
  return std::pair{rows, line};
}

}  // namespace

YAML::Node load_table_file(const std::filesystem::path& file, int64_t& rows) {
  const std::string text = read_input_file(file, "results table", kTableByteLimit);
  const YAML::Node root = load_yaml_text(text, file.string(), kTableNodeLimit);
  const auto end = end_line_rows(text);
  if (!end) {
    const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    throw Error(ErrorKind::bad_input,
                "the table is cut short or damaged: a table tune writes ends with the line '# end: N "
                "problems', and this one ends at line " +
                    std::to_string(lines) + " without it",
                {file.string(), lines, 0, ""});
  }
  rows = end->first;
  return root;
}

void check_row_count(const std::filesystem::path& file, int64_t rows, int64_t read) {
  if (rows != read)
    throw Error(ErrorKind::bad_input,
                "the table's end line counts " + std::to_string(rows) + " problems but " +
                    std::to_string(read) + " were read: rows are missing or were added by hand",
                {file.string(), 0, 0, "problems"});
}

ResultsTable read_results_table(const std::filesystem::path& file) {
  int64_t rows = 0;
  const YAML::Node root = load_table_file(file, rows);
  ResultsTable table = parse_results_table_node(root, file.string(), "");
  check_row_count(file, rows, static_cast<int64_t>(table.rows.size()));
  return table;
}

}  // namespace tunefuzz
