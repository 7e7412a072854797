// `tune report`: one self-contained HTML page about a campaign, with inline CSS and inline SVG charts drawn
// by the small helpers below (no script, no external resource). Three charts: TFLOP/s of each problem's
// winner against the baseline (from the table), the stage funnel (from <table>.stages.yaml) and a heatmap
// of the best time over two parameters for one problem (from the `timed` events of <table>.journal).
#include "tuner/table/report.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/common/error.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"
#include "runtime/dispatch/results_reader.hpp"
#include "tuner/table/results_table.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

namespace {

namespace fs = std::filesystem;

// ---- text -------------------------------------------------------------------------------------------

/// `text` with &, <, >, " and ' escaped: safe as HTML text, SVG text and attribute values alike.
std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

/// About three significant digits, never an exponent: 0.0532, 1.25, 386.
std::string significant(double value) {
  if (value == 0 || !std::isfinite(value)) return fixed(value, 0);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return fixed(value, std::clamp(2 - magnitude, 0, 9));
}

std::string note(const std::string& text) {
  return "<p class=\"note\">" + escape(text) + "</p>\n";
}

// ---- SVG writing --------------------------------------------------------------------------------------

/// One inline <svg> chart: an id, a <title>, then elements in drawing order. Coordinates are pixels.
class Svg {
 public:
  Svg(std::string id, std::string title, double width, double height)
      : id_(std::move(id)), title_(std::move(title)), width_(width), height_(height) {}

  /// A rectangle; `tooltip` becomes its <title> (shown on hover); `attributes` are appended as they are.
  void rect(double x, double y, double width, double height, std::string_view css_class,
            const std::string& tooltip = {}, const std::string& attributes = {}) {
    body_ << "<rect class=\"" << css_class << "\" x=\"" << fixed(x, 1) << "\" y=\"" << fixed(y, 1)
          << "\" width=\"" << fixed(std::max(width, 0.0), 1) << "\" height=\"" << fixed(height, 1) << "\""
          << attributes;
    if (tooltip.empty())
      body_ << "/>\n";
    else
      body_ << "><title>" << escape(tooltip) << "</title></rect>\n";
  }
  void text(double x, double y, std::string_view content, std::string_view css_class,
            std::string_view anchor = "start", const std::string& attributes = {}) {
    body_ << "<text class=\"" << css_class << "\" x=\"" << fixed(x, 1) << "\" y=\"" << fixed(y, 1)
          << "\" text-anchor=\"" << anchor << "\"" << attributes << ">" << escape(content) << "</text>\n";
  }
  void line(double x1, double y1, double x2, double y2, std::string_view css_class) {
    body_ << "<line class=\"" << css_class << "\" x1=\"" << fixed(x1, 1) << "\" y1=\"" << fixed(y1, 1)
          << "\" x2=\"" << fixed(x2, 1) << "\" y2=\"" << fixed(y2, 1) << "\"/>\n";
  }
  /// Markup built by the caller (gradients); it must already be escaped.
  void markup(const std::string& element) { body_ << element << "\n"; }

  std::string str() const {
    std::ostringstream out;
    out << "<svg id=\"" << id_ << "\" class=\"chart\" role=\"img\" aria-labelledby=\"" << id_
        << "-title\" width=\"" << fixed(width_, 0) << "\" height=\"" << fixed(height_, 0)
        << "\" viewBox=\"0 0 " << fixed(width_, 0) << " " << fixed(height_, 0) << "\">\n<title id=\"" << id_
        << "-title\">" << escape(title_) << "</title>\n"
        << body_.str() << "</svg>\n";
    return out.str();
  }

 private:
  std::string id_, title_;
  double width_, height_;
  std::ostringstream body_;
};

/// A round tick step (1, 2 or 5 times a power of ten) giving about six ticks from 0 to `max_value`.
double tick_step(double max_value) {
  if (!(max_value > 0)) return 1;
  const double raw = max_value / 6;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (const double multiple : {1.0, 2.0, 5.0})
    if (multiple * power >= raw) return multiple * power;
  return 10 * power;
}

/// A legend entry: a swatch of `css_class` and its label; returns the x after it.
double legend_entry(Svg& svg, double x, double y, std::string_view css_class, const std::string& label) {
  svg.rect(x, y - 11, 14, 14, css_class);
  svg.text(x + 20, y, label, "legend");
  return x + 32 + 7.5 * static_cast<double>(label.size());
}

// ---- header ---------------------------------------------------------------------------------------------

std::string header_section(const ResultsTable& t) {
  const auto item = [](const std::string& term, const std::string& value) {
    return "<dt>" + escape(term) + "</dt><dd>" + escape(value) + "</dd>\n";
  };
  std::string out = "<header>\n<h1>tunefuzz report: " + escape(t.gpu_name) + "</h1>\n<dl>\n";
  out += item("card", t.gpu_name + " (" + t.gpu_arch + ", " + std::to_string(t.sm_count) + " SMs)");
  out += item("driver", t.driver);
  out += item("tool", t.tool_version + " at commit " + t.tool_commit);
  out += item("date", t.date);
  out += item("command", t.command);
  out += item("table", t.file.string() + " (" + std::to_string(t.rows.size()) + " problems)");
  return out + "</dl>\n</header>\n";
}

// ---- TFLOP/s per problem ------------------------------------------------------------------------------

/// One bar with its value at the end, or the text `missing` where there is no figure.
void tflops_bar(Svg& svg, double x, double y, double scale, double tflops, std::string_view css_class,
                const std::string& tooltip, const std::string& missing) {
  constexpr double bar_height = 15;
  if (tflops <= 0) {
    svg.text(x + 4, y + 12, missing, "missing");
    return;
  }
  svg.rect(x, y, tflops * scale, bar_height, css_class, tooltip);
  svg.text(x + tflops * scale + 5, y + 12, fixed(tflops, 1), "value");
}

std::string ratio_text(const TableRow& row) {
  if (row.ratio_vs_baseline <= 0) return row.winner ? "no baseline" : "no winner";
  return fixed(row.ratio_vs_baseline, 2) + "× cuBLAS";
}

/// One problem's group: its name and shape, the winner's bar, the baseline's bar and the ratio.
void tflops_group(Svg& svg, const TableRow& row, double y, double bars_x, double scale, double ratio_x) {
  const Problem& p = row.problem;
  svg.text(bars_x - 10, y + 13, p.name, "label", "end");
  svg.text(
      bars_x - 10, y + 29,
      std::to_string(p.m) + "×" + std::to_string(p.n) + "×" + std::to_string(p.k) + " " + to_string(p.input),
      "sublabel", "end");
  tflops_bar(svg, bars_x, y, scale, row.winner ? row.winner->tflops : 0, "bar winner",
             row.winner ? p.name + ": " + row.winner->id : "", "no winner");
  tflops_bar(svg, bars_x, y + 16, scale, row.baseline_tflops, "bar baseline", p.name + ": cuBLAS",
             "baseline " + row.baseline_status);
  svg.text(ratio_x, y + 21, ratio_text(row), row.ratio_vs_baseline >= 1 ? "ratio faster" : "ratio slower");
}

std::string tflops_chart(const ResultsTable& table) {
  constexpr double bars_x = 230, plot_width = 720, ratio_x = bars_x + plot_width + 70;
  constexpr double top = 50, group = 44;
  double max_tflops = 0;
  for (const TableRow& row : table.rows)
    max_tflops = std::max({max_tflops, row.baseline_tflops, row.winner ? row.winner->tflops : 0.0});
  const double step = tick_step(max_tflops), axis_max = std::max(step, std::ceil(max_tflops / step) * step);
  const double scale = plot_width / axis_max, bottom = top + group * static_cast<double>(table.rows.size());
  Svg svg("chart-tflops", "TFLOP/s per problem: the winner against the baseline (cuBLAS)", ratio_x + 120,
          bottom + 50);
  // legend, then the axis with its grid, then one group of two bars per problem
  legend_entry(svg, legend_entry(svg, bars_x, 22, "bar winner", "winner (tunefuzz)"), 22, "bar baseline",
               "baseline (cuBLAS)");
  svg.text(ratio_x, 22, "winner speed", "legend");
  for (double v = 0; v <= axis_max + step / 2; v += step) {
    svg.line(bars_x + v * scale, top - 6, bars_x + v * scale, bottom, v == 0 ? "axis" : "grid");
    svg.text(bars_x + v * scale, bottom + 18, fixed(v, 0), "tick", "middle");
  }
  svg.line(bars_x, bottom, bars_x + plot_width, bottom, "axis");
  svg.text(bars_x + plot_width / 2, bottom + 40, "TFLOP/s (higher is faster)", "axis-title", "middle");
  for (size_t i = 0; i < table.rows.size(); ++i)
    tflops_group(svg, table.rows[i], top + group * static_cast<double>(i) + 6, bars_x, scale, ratio_x);
  return svg.str();
}

// ---- stage funnel ---------------------------------------------------------------------------------------

struct FunnelRow {
  std::string stage, label;
  int64_t count = 0;
  bool loss = false;  ///< candidates removed at this stage (drawn indented, in the loss colour)
};

int64_t count_of(const YAML::Node& map, const char* key) {
  return map[key] ? map[key].as<int64_t>() : 0;
}

/// Adds `amount` under `key`, keeping the order keys were first seen in.
void accumulate(std::vector<std::pair<std::string, int64_t>>& counts, const std::string& key,
                int64_t amount) {
  for (auto& [name, count] : counts)
    if (name == key) {
      count += amount;
      return;
    }
  counts.emplace_back(key, amount);
}

/// The funnel's rows from a stage summary (docs/results-format.md): at each stage, what it removed by
/// reason, then what went on.
std::vector<FunnelRow> funnel_rows(const YAML::Node& s) {
  std::vector<FunnelRow> rows;
  int64_t enumerated = 0, kept = 0;
  std::vector<std::pair<std::string, int64_t>> pruned;
  for (const YAML::Node& t : s["space"]) {
    enumerated += count_of(t, "enumerated");
    kept += count_of(t, "kept");
    for (const auto& reason : t["pruned"])
      accumulate(pruned, reason.first.Scalar(), reason.second.as<int64_t>());
  }
  rows.push_back({"space", "enumerated points", enumerated});
  for (const auto& [reason, count] : pruned) rows.push_back({"space", "pruned: " + reason, count, true});
  rows.push_back({"space", "kept points", kept});
  rows.push_back({"space", "candidates (kept × element types)", count_of(s, "candidates")});
  if (const YAML::Node c = s["compile"]) {
    for (const char* reason : {"spills", "occupancy", "slow_path", "compile_failed"})
      rows.push_back({"compile", std::string("pruned: ") + reason, count_of(c, reason), true});
    rows.push_back({"compile", "compiled", count_of(c, "compiled")});
  }
  if (const YAML::Node f = s["fuzz"]) {
    for (const auto& failure : f["failed"])
      rows.push_back({"fuzz", "failed: " + failure.first.Scalar(), failure.second.as<int64_t>(), true});
    if (!f["failed"] || f["failed"].size() == 0) rows.push_back({"fuzz", "failed (any class)", 0, true});
    rows.push_back({"fuzz", "quarantined", count_of(f, "quarantined"), true});
    rows.push_back({"fuzz", "passed", count_of(f, "passed")});
  }
  if (const YAML::Node t = s["time"]) {
    const std::string over = " (over " + std::to_string(count_of(t, "problems")) + " problems)";
    for (const auto& entry : t["entries"]) {
      const std::string status = entry.first.Scalar();
      const bool loss = status != "timed" && status != "screened";
      rows.push_back({"time", "entries " + status + (loss ? "" : over), entry.second.as<int64_t>(), loss});
    }
  }
  return rows;
}

std::string draw_funnel(const std::vector<FunnelRow>& rows) {
  constexpr double stage_x = 10, label_x = 90, bars_x = 380, plot_width = 600, top = 10, row_height = 26;
  int64_t max_count = 1;
  for (const FunnelRow& row : rows) max_count = std::max(max_count, row.count);
  const double scale = plot_width / static_cast<double>(max_count);
  Svg svg("chart-funnel", "Stage funnel: candidates at each stage and what each stage removed",
          bars_x + plot_width + 80, top + row_height * static_cast<double>(rows.size()) + 10);
  for (size_t i = 0; i < rows.size(); ++i) {
    const FunnelRow& row = rows[i];
    const double y = top + row_height * static_cast<double>(i);
    if (i == 0 || rows[i - 1].stage != row.stage) {
      if (i > 0) svg.line(stage_x, y - 2, bars_x + plot_width + 70, y - 2, "separator");
      svg.text(stage_x, y + 15, row.stage, "stage");
    }
    svg.text(label_x + (row.loss ? 18 : 0), y + 15, row.label, row.loss ? "label loss" : "label");
    const double length = static_cast<double>(row.count) * scale;
    if (row.count > 0) svg.rect(bars_x, y + 3, length, 17, row.loss ? "bar loss" : "bar kept");
    svg.text(bars_x + length + 6, y + 16, std::to_string(row.count), row.count > 0 ? "value" : "value zero");
  }
  return svg.str();
}

std::string funnel_section(const fs::path& table) {
  const fs::path path = stage_summary_path(table);
  std::string out = "<section>\n<h2>Stage funnel</h2>\n";
  if (!fs::exists(path))
    return out + note("no stage summary beside the table (" + path.string() + ")") + "</section>\n";
  try {
    const YAML::Node summary = read_yaml(path);
    if (!summary.IsMap() || !summary["space"] || !summary["candidates"])
      return out + note("the stage summary " + path.string() + " has no stage counts") + "</section>\n";
    out += "<p>From " + escape(path.filename().string()) +
           ": how many candidates each stage started with, what it removed and why.</p>\n";
    return out + draw_funnel(funnel_rows(summary)) + "</section>\n";
  } catch (const YAML::Exception& e) {
    return out + note("the stage summary " + path.string() + " could not be read: " + e.what()) +
           "</section>\n";
  } catch (const Error& e) {
    return out + note("the stage summary could not be read: " + std::string(e.what())) + "</section>\n";
  }
}

// ---- heatmap --------------------------------------------------------------------------------------------

struct HeatCell {
  double best_ms = std::numeric_limits<double>::infinity();
  std::string best_id;
  int timed = 0;  ///< candidates timed or screened in this cell
};

struct Heatmap {
  std::set<int64_t> xs, ys;                               ///< every value seen in the problem's entries
  std::map<std::pair<int64_t, int64_t>, HeatCell> cells;  ///< (x, y) → best over the other parameters
};

/// The last `timed` event of `problem` in the journal (lines that do not parse are skipped, as on resume).
std::optional<YAML::Node> timed_event(const fs::path& journal, const std::string& problem) {
  std::optional<YAML::Node> found;
  std::string text;
  try {
    text = read_input_file(journal, "journal", kTableByteLimit);
  } catch (const Error&) {
    return found;  // no journal, or not one that can be read: the heatmap says so
  }
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    try {
      const YAML::Node event = load_yaml_text(line, journal.string(), kDocumentNodeLimit);
      if (event.IsMap() && event["event"] && event["event"].Scalar() == "timed" && event["problem"] &&
          event["problem"].Scalar() == problem)
        found = event;
    } catch (const YAML::Exception&) {
    } catch (const Error&) {
    }
  }
  return found;
}

/// The (x, y) values of a candidate id, or nullopt when the id does not parse or lacks either parameter.
std::optional<std::pair<int64_t, int64_t>> coordinates(const std::string& id, const ReportOptions& o) {
  try {
    const Candidate candidate = parse_candidate_id(id);
    std::optional<int64_t> x, y;
    for (const auto& [name, value] : candidate.point.values()) {
      if (name == o.x) x = value;
      if (name == o.y) y = value;
    }
    if (x && y) return std::pair{*x, *y};
  } catch (const Error&) {
  }
  return std::nullopt;
}

Heatmap collect_heatmap(const YAML::Node& entries, const ReportOptions& o) {
  Heatmap map;
  for (const YAML::Node& entry : entries) {
    if (!entry.IsMap() || !entry["id"]) continue;
    const auto at = coordinates(entry["id"].Scalar(), o);
    if (!at) continue;
    map.xs.insert(at->first);
    map.ys.insert(at->second);
    const std::string status = entry["status"] ? entry["status"].Scalar() : "";
    double ms = 0;
    if ((status != "timed" && status != "screened") || !entry["median_ms"] ||
        !YAML::convert<double>::decode(entry["median_ms"], ms) || !(ms > 0 && std::isfinite(ms)))
      continue;
    HeatCell& cell = map.cells[*at];
    ++cell.timed;
    if (ms < cell.best_ms) cell.best_ms = ms, cell.best_id = entry["id"].Scalar();
  }
  return map;
}

/// Fast (t = 0) green, through yellow, to slow (t = 1) red; `dark` says whether white text reads better.
std::string heat_colour(double t, bool* dark = nullptr) {
  static const double stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
  t = std::clamp(t, 0.0, 1.0) * 2;
  const int i = std::min(static_cast<int>(t), 1);
  const double f = t - i;
  double rgb[3];
  for (int c = 0; c < 3; ++c) rgb[c] = stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f;
  if (dark) *dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 150;
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", static_cast<int>(rgb[0]), static_cast<int>(rgb[1]),
                static_cast<int>(rgb[2]));
  return hex;
}

/// A vertical colour legend: fast at the top, slow at the bottom, on the same log scale as the cells.
void heat_legend(Svg& svg, double x, double y, double height, double fastest, double slowest) {
  svg.markup(
      "<defs><linearGradient id=\"heat-scale\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\"><stop offset=\"0\" "
      "stop-color=\"" +
      heat_colour(0) + "\"/><stop offset=\"0.5\" stop-color=\"" + heat_colour(0.5) +
      "\"/><stop offset=\"1\" stop-color=\"" + heat_colour(1) + "\"/></linearGradient></defs>");
  svg.text(x, y - 10, "median ms (log scale)", "legend");
  svg.rect(x, y, 18, height, "scale", {}, " fill=\"url(#heat-scale)\"");
  svg.text(x + 26, y + 12, significant(fastest) + " fast", "tick");
  svg.text(x + 26, y + height / 2 + 4, significant(std::sqrt(fastest * slowest)), "tick");
  svg.text(x + 26, y + height, significant(slowest) + " slow", "tick");
  svg.rect(x, y + height + 16, 18, 18, "cell empty");
  svg.text(x + 26, y + height + 30, "not timed", "tick");
}

/// Where a time falls between the heatmap's fastest (0) and slowest (1) cell, on a log scale.
struct HeatScale {
  double fastest = std::numeric_limits<double>::infinity(), slowest = 0;
  double operator()(double ms) const {
    const double span = std::log(slowest / fastest);
    return span > 0 ? std::log(ms / fastest) / span : 0;
  }
};

/// One cell: coloured and labelled with its best time, or grey where nothing was timed. `where` holds its
/// data-x/data-y attributes, `name` its parameter values for the tooltip.
void heat_cell(Svg& svg, double x, double y, const HeatCell* cell, const HeatScale& scale, bool winner,
               const std::string& where, const std::string& name) {
  constexpr double width = 104, height = 50;
  if (!cell) {
    svg.rect(x + 1, y + 1, width - 2, height - 2, "cell empty", name + ": not timed", where);
    return;
  }
  bool dark = false;
  const std::string fill = heat_colour(scale(cell->best_ms), &dark);
  const std::string of = "best of " + std::to_string(cell->timed);
  svg.rect(x + 1, y + 1, width - 2, height - 2, winner ? "cell winner-cell" : "cell",
           name + ", " + of + ": " + cell->best_id, where + " fill=\"" + fill + "\"");
  const std::string ink = dark ? "cell-text light" : "cell-text";
  svg.text(x + width / 2, y + 24, significant(cell->best_ms), ink, "middle");
  svg.text(x + width / 2, y + 40, of, ink + " small", "middle");
}

std::string draw_heatmap(const Heatmap& map, const TableRow& row, const ReportOptions& o) {
  constexpr double left = 90, top = 56, cell_width = 104, cell_height = 50;
  const double grid_width = cell_width * static_cast<double>(map.xs.size());
  const double grid_height = cell_height * static_cast<double>(map.ys.size());
  const double legend_height = std::max(grid_height, 140.0);
  HeatScale scale;
  for (const auto& [at, cell] : map.cells)
    scale.fastest = std::min(scale.fastest, cell.best_ms),
    scale.slowest = std::max(scale.slowest, cell.best_ms);
  Svg svg("chart-heatmap", "Heatmap of " + row.problem.name + ": best median ms over " + o.x + " and " + o.y,
          left + grid_width + 190, top + legend_height + 60);
  svg.text(left + grid_width / 2, 18, o.x, "axis-title", "middle");
  svg.text(20, top + grid_height / 2, o.y, "axis-title", "middle");
  const auto winner = row.winner ? coordinates(row.winner->id, o) : std::nullopt;
  double x = left;
  for (const int64_t xv : map.xs) {
    svg.text(x + cell_width / 2, top - 10, std::to_string(xv), "tick", "middle");
    double y = top;
    for (const int64_t yv : map.ys) {
      if (x == left) svg.text(left - 10, y + cell_height / 2 + 4, std::to_string(yv), "tick", "end");
      const auto found = map.cells.find({xv, yv});
      heat_cell(svg, x, y, found == map.cells.end() ? nullptr : &found->second, scale,
                winner == std::pair{xv, yv},
                " data-x=\"" + std::to_string(xv) + "\" data-y=\"" + std::to_string(yv) + "\"",
                o.x + "=" + std::to_string(xv) + ", " + o.y + "=" + std::to_string(yv));
      y += cell_height;
    }
    x += cell_width;
  }
  heat_legend(svg, left + grid_width + 30, top, legend_height, scale.fastest, scale.slowest);
  return svg.str();
}

std::string heatmap_section(const ResultsTable& table, const fs::path& table_path, const ReportOptions& o) {
  std::string out = "<section>\n<h2>Heatmap</h2>\n";
  const auto end = [&](const std::string& text) { return out + note(text) + "</section>\n"; };
  if (table.rows.empty()) return end("the table has no problems");
  const auto row = std::find_if(table.rows.begin(), table.rows.end(), [&](const TableRow& r) {
    return o.problem.empty() || r.problem.name == o.problem;
  });
  const std::string& problem = row->problem.name;
  const fs::path journal = journal_path(table_path);
  if (!fs::exists(journal)) return end("no journal beside the table (" + journal.string() + ")");
  const std::optional<YAML::Node> event = timed_event(journal, problem);
  const YAML::Node entries =
      event && (*event)["timing"].IsMap() ? (*event)["timing"]["entries"] : YAML::Node();
  const Heatmap map = entries.IsSequence() ? collect_heatmap(entries, o) : Heatmap{};
  if (map.cells.empty())
    return end("the journal has no timings for problem " + problem + " over " + o.x + " and " + o.y);
  out += "<p>Problem <b>" + escape(problem) +
         "</b>: each cell is the best (lowest) median time in ms of the " +
         "candidates timed or screened with that " + escape(o.x) + " and " + escape(o.y) +
         ", over all other parameters. Outlined: the table's winner.</p>\n";
  return out + draw_heatmap(map, *row, o) + "</section>\n";
}

/// Throws Error{bad_input} unless the options name known parameters and a problem of the table.
void check_options(const ResultsTable& table, const ReportOptions& o) {
  std::set<std::string> known;
  for (const KernelTemplate* t : all_templates())
    for (const ParameterDecl& p : t->parameters) known.insert(p.name);
  std::string names;
  for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
  for (const std::string& name : {o.x, o.y})
    if (!known.contains(name))
      throw Error(ErrorKind::bad_input,
                  "unknown heatmap parameter '" + name + "' (parameters: " + names + ")");
  if (o.x == o.y)
    throw Error(ErrorKind::bad_input, "the heatmap needs two different parameters, not " + o.x + " twice");
  if (o.problem.empty()) return;
  std::string problems;
  for (const TableRow& row : table.rows) {
    if (row.problem.name == o.problem) return;
    problems += (problems.empty() ? "" : ", ") + row.problem.name;
  }
  throw Error(ErrorKind::bad_input,
              "no problem '" + o.problem + "' in " + table.file.string() + " (problems: " + problems + ")");
}

constexpr const char* kStyle = R"(
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 12px; }
h2 { font-size: 20px; margin: 36px 0 6px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dt { color: #57606a; } dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; overflow-wrap: anywhere; }
.note { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 10px 14px; }
svg.chart { display: block; max-width: 100%; height: auto; margin-top: 8px; }
svg text { font-family: system-ui, sans-serif; font-size: 13px; fill: #1f2328; }
.bar.winner { fill: #3b6fb6; } .bar.baseline { fill: #e3913a; }
.bar.kept { fill: #3b6fb6; } .bar.loss { fill: #d1495b; }
.grid { stroke: #e6e8eb; } .axis { stroke: #57606a; } .separator { stroke: #d0d7de; }
.label { font-weight: 600; } .label.loss { font-weight: 400; fill: #8b2230; }
.sublabel, .tick { fill: #57606a; font-size: 12px; } .missing { fill: #8b2230; font-style: italic; }
.value { font-size: 12px; } .value.zero { fill: #8c959f; }
.stage { font-weight: 700; text-transform: uppercase; font-size: 12px; fill: #57606a; }
.axis-title { font-weight: 600; fill: #57606a; }
.ratio { font-weight: 700; } .ratio.faster { fill: #1a7f37; } .ratio.slower { fill: #8b2230; }
.cell.empty { fill: #d8dbdf; } .cell.winner-cell { stroke: #1f2328; stroke-width: 3; }
.cell-text { font-size: 14px; font-weight: 600; } .cell-text.small { font-size: 11px; font-weight: 400; }
.cell-text.light { fill: #fff; } .scale { stroke: #8c959f; }
)";

}  // namespace

void write_report(const fs::path& table_path, const fs::path& output, const ReportOptions& options) {
  const ResultsTable table = read_results_table(table_path);
  check_options(table, options);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tunefuzz report: " +
      escape(table.gpu_name) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n";
  html += header_section(table);
  html +=
      "<section>\n<h2>TFLOP/s per problem</h2>\n<p>Each problem's winner against cuBLAS on the same inputs; "
      "the right column is cuBLAS time / winner time (above 1: faster than cuBLAS).</p>\n";
  html += (table.rows.empty() ? note("the table has no problems") : tflops_chart(table)) + "</section>\n";
  html += funnel_section(table_path);
  html += heatmap_section(table, table_path, options);
  html += "</main>\n</body>\n</html>\n";
  write_file_atomically(output, html);
}

}  // namespace tunefuzz
