// Laws of `tune report` (write_report):
//  - the report of the committed H200 table has the three charts; the TFLOP/s chart has one winner bar and
//    one baseline bar per problem; every problem is named; the funnel shows every count of the stage
//    summary; the heatmap has a filled cell for every (BM, BN) pair the journal timed for the problem, each
//    labelled with the best median over the other parameters; nothing is fetched from the network;
//  - a table alone (no stage summary, no journal) still gives a report, with notes in place of the funnel
//    and the heatmap; a journal without the problem's timings gives a note naming the problem;
//  - a damaged stage summary or journal (generated mutations of the committed ones) never fails the report:
//    each of their charts is drawn or replaced by a note;
//  - unknown heatmap parameters or problems are Error{bad_input}; an unreadable table is an Error;
//  - text from the inputs is escaped.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tuner/common/error.hpp"
#include "tests/support/mutate.hpp"
#include "tuner/table/report.hpp"
#include "runtime/dispatch/results_reader.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kResults = TUNEFUZZ_SOURCE_DIR "/results";

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// The <svg> element with this id, or "" when the report has none.
std::string chart(const std::string& html, const std::string& id) {
  const size_t begin = html.find("<svg id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  return html.substr(begin, html.find("</svg>", begin) + 6 - begin);
}

/// The same formatting as the report's cell labels: about three significant digits.
std::string significant(double value) {
  const int magnitude = static_cast<int>(std::floor(std::log10(value)));
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", std::max(0, 2 - magnitude), value);
  return buffer;
}

/// A fresh directory per test, removed afterwards.
class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = fs::temp_directory_path() /
                 ("tunefuzz_test_report_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  /// Writes the report of `table` and returns its text.
  std::string report(const fs::path& table, const ReportOptions& options = {}) {
    const fs::path out = directory_ / "out" / "report.html";
    write_report(table, out, options);
    return read(out);
  }

  fs::path directory_;
};

TEST_F(Report, TheCommittedTableHasTheThreeChartsAndNoNetworkResource) {
  const std::string html = report(kResults / "h200.yaml");
  for (const char* id : {"chart-tflops", "chart-funnel", "chart-heatmap"}) {
    const std::string svg = chart(html, id);
    ASSERT_FALSE(svg.empty()) << id;
    EXPECT_NE(svg.find("<title"), std::string::npos) << id << " has no <title>";
  }
  EXPECT_EQ(html.find("http:"), std::string::npos);
  EXPECT_EQ(html.find("https:"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("class=\"note\""), std::string::npos) << "every input is there: no note";
}

TEST_F(Report, TheHeaderNamesTheCardDriverCommitDateAndCommand) {
  const ResultsTable table = read_results_table(kResults / "h200.yaml");
  const std::string html = report(kResults / "h200.yaml");
  const std::string header = html.substr(0, html.find("</header>"));
  for (const std::string& field :
       {table.gpu_name, table.driver, table.tool_commit, table.date, table.command})
    EXPECT_NE(header.find(field), std::string::npos) << field;
}

TEST_F(Report, EveryProblemHasAWinnerBarABaselineBarAndItsName) {
  const ResultsTable table = read_results_table(kResults / "h200.yaml");
  const std::string svg = chart(report(kResults / "h200.yaml"), "chart-tflops");
  size_t winners = 0, baselines = 0;
  for (const TableRow& row : table.rows) {
    winners += row.winner && row.winner->tflops > 0;
    baselines += row.baseline_tflops > 0;
    EXPECT_NE(svg.find(">" + row.problem.name + "<"), std::string::npos) << row.problem.name;
  }
  EXPECT_EQ(winners, table.rows.size()) << "every row of the committed table has a winner";
  EXPECT_EQ(count(svg, "<rect class=\"bar winner\""), winners + 1)
      << "one bar per problem, one in the legend";
  EXPECT_EQ(count(svg, "<rect class=\"bar baseline\""), baselines + 1);
}

TEST_F(Report, TheFunnelShowsEveryCountOfTheStageSummary) {
  const YAML::Node s = YAML::LoadFile((kResults / "h200.stages.yaml").string());
  const std::string svg = chart(report(kResults / "h200.yaml"), "chart-funnel");
  const auto shows = [&](int64_t n) {
    return svg.find(">" + std::to_string(n) + "</text>") != std::string::npos;
  };
  int64_t enumerated = 0, kept = 0;
  std::map<std::string, int64_t> pruned;  // the funnel sums each reason over the template searches
  for (const YAML::Node& t : s["space"]) {
    enumerated += t["enumerated"].as<int64_t>();
    kept += t["kept"].as<int64_t>();
    for (const auto& reason : t["pruned"]) pruned[reason.first.as<std::string>()] += reason.second.as<int64_t>();
  }
  for (const auto& [reason, count] : pruned) EXPECT_TRUE(shows(count)) << reason;
  EXPECT_TRUE(shows(enumerated));
  EXPECT_TRUE(shows(kept));
  EXPECT_TRUE(shows(s["candidates"].as<int64_t>()));
  for (const char* key : {"compiled", "spills", "occupancy", "slow_path", "compile_failed"})
    EXPECT_TRUE(shows(s["compile"][key].as<int64_t>())) << key;
  EXPECT_TRUE(shows(s["fuzz"]["passed"].as<int64_t>()));
  for (const auto& entry : s["time"]["entries"])
    EXPECT_TRUE(shows(entry.second.as<int64_t>())) << entry.first;
  for (const char* label : {"spills", "occupancy", "slow_path", "compile_failed", "shared_memory", "passed"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
}

/// (x, y) → best median over the other parameters, straight from the journal's `timed` event of `problem`.
std::map<std::pair<int64_t, int64_t>, double> journal_cells(const fs::path& journal,
                                                            const std::string& problem, const std::string& x,
                                                            const std::string& y) {
  std::map<std::pair<int64_t, int64_t>, double> best;
  std::ifstream in(journal);
  for (std::string line; std::getline(in, line);) {
    const YAML::Node e = YAML::Load(line);
    if (e["event"].as<std::string>() != "timed" || e["problem"].as<std::string>() != problem) continue;
    best.clear();  // the last event of the problem counts
    for (const YAML::Node& entry : e["timing"]["entries"]) {
      const std::string status = entry["status"].as<std::string>();
      if (status != "timed" && status != "screened") continue;
      const Point point = parse_candidate_id(entry["id"].as<std::string>()).point;
      const std::pair at{point[x], point[y]};
      const double ms = entry["median_ms"].as<double>();
      best[at] = best.contains(at) ? std::min(best[at], ms) : ms;
    }
  }
  return best;
}

/// Checks that the heatmap has exactly the filled cells `expected`, each labelled with its best median.
void expect_cells(const std::string& svg, const std::map<std::pair<int64_t, int64_t>, double>& expected) {
  ASSERT_FALSE(expected.empty());
  for (const auto& [at, ms] : expected) {
    const std::string where =
        "data-x=\"" + std::to_string(at.first) + "\" data-y=\"" + std::to_string(at.second) + "\"";
    const size_t cell = svg.find(where);
    ASSERT_NE(cell, std::string::npos) << where;
    const size_t start = svg.rfind("<rect", cell);
    EXPECT_EQ(svg.substr(start, cell - start).find("empty"), std::string::npos) << where << " is empty";
    EXPECT_NE(svg.find(">" + significant(ms) + "</text>", cell), std::string::npos) << where << " " << ms;
  }
  const std::regex filled("<rect class=\"cell( winner-cell)?\"");
  EXPECT_EQ(std::distance(std::sregex_iterator(svg.begin(), svg.end(), filled), std::sregex_iterator()),
            static_cast<long>(expected.size()));
}

TEST_F(Report, TheHeatmapHasACellForEveryTimedPairOfTheFirstProblem) {
  const ResultsTable table = read_results_table(kResults / "h200.yaml");
  const std::string svg = chart(report(kResults / "h200.yaml"), "chart-heatmap");
  expect_cells(svg, journal_cells(kResults / "h200.journal", table.rows.front().problem.name, "BM", "BN"));
  EXPECT_EQ(count(svg, "winner-cell"), 1u) << "the table's winner is outlined";
}

TEST_F(Report, TheHeatmapFollowsTheChosenProblemAndParameters) {
  ReportOptions options;
  options.problem = "odd_1000";
  options.x = "STAGES";
  options.y = "BK";
  const std::string svg = chart(report(kResults / "h200.yaml", options), "chart-heatmap");
  EXPECT_NE(svg.find("odd_1000"), std::string::npos);
  expect_cells(svg, journal_cells(kResults / "h200.journal", "odd_1000", "STAGES", "BK"));
}

TEST_F(Report, ATableAloneGivesNotesInsteadOfTheFunnelAndHeatmap) {
  fs::copy_file(kResults / "h200.yaml", directory_ / "alone.yaml");
  const std::string html = report(directory_ / "alone.yaml");
  EXPECT_FALSE(chart(html, "chart-tflops").empty());
  EXPECT_TRUE(chart(html, "chart-funnel").empty());
  EXPECT_TRUE(chart(html, "chart-heatmap").empty());
  EXPECT_NE(html.find("no stage summary beside the table"), std::string::npos);
  EXPECT_NE(html.find("no journal beside the table"), std::string::npos);
}

TEST_F(Report, AJournalWithoutTheProblemsTimingsGivesANoteNamingIt) {
  fs::copy_file(kResults / "h200.yaml", directory_ / "t.yaml");
  std::string journal;
  std::istringstream lines(read(kResults / "h200.journal"));
  for (std::string line; std::getline(lines, line);)
    if (line.find("\"event\": \"timed\"") == std::string::npos) journal += line + "\n";
  write(directory_ / "t.journal", journal);
  write(directory_ / "t.stages.yaml", "{not: [a stage summary\n");
  const std::string html = report(directory_ / "t.yaml");
  EXPECT_TRUE(chart(html, "chart-heatmap").empty());
  EXPECT_NE(html.find("the journal has no timings for problem square_2048"), std::string::npos);
  EXPECT_TRUE(chart(html, "chart-funnel").empty());
  EXPECT_NE(html.find("could not be read"), std::string::npos) << "a broken stage summary is a note, too";
}

// Malformed stage summaries and journals: YAML syntax plus values the report reads.
const std::vector<std::string>& report_insertions() {
  static const std::vector<std::string> pieces = [] {
    std::vector<std::string> out = test::yaml_insertions();
    for (const char* piece : {"-1", "nan", "BM=x", "[1, 2]", "\"timed\""}) out.push_back(piece);
    return out;
  }();
  return pieces;
}

std::string mutate(const std::string& text, const test::Edits& edits) {
  return test::mutate(text, edits, report_insertions());
}

/// Whether the section under `heading` holds exactly one of: the chart `id`, or a note in its place.
bool chart_or_note(const std::string& html, const std::string& id, const std::string& heading) {
  const size_t section = html.find("<h2>" + heading + "</h2>");
  if (section == std::string::npos) return false;
  const size_t end = html.find("</section>", section);
  const std::string body = html.substr(section, end - section);
  return (body.find("<svg id=\"" + id + "\"") != std::string::npos) !=
         (body.find("class=\"note\"") != std::string::npos);
}

RC_GTEST_PROP(DamagedInput, StageSummariesAndJournalsNeverFailTheReport, ()) {
  static const std::string stages = read(kResults / "h200.stages.yaml"),
                           journal = read(kResults / "h200.journal");
  const auto edits = rc::gen::container<std::vector<std::pair<size_t, int>>>(
      *rc::gen::inRange<size_t>(1, 6),
      rc::gen::pair(rc::gen::inRange<size_t>(0, 1u << 20), rc::gen::inRange(0, 4)));
  const fs::path directory =
      fs::temp_directory_path() / ("tunefuzz_test_report_damaged_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  fs::copy_file(kResults / "h200.yaml", directory / "t.yaml", fs::copy_options::overwrite_existing);
  write(directory / "t.stages.yaml", mutate(stages, *edits));
  // the journal's edits land in the timed events (its last lines) half of the time
  const std::string tail = journal.substr(journal.size() / 2);
  write(directory / "t.journal", *rc::gen::arbitrary<bool>()
                                     ? mutate(journal, *edits)
                                     : journal.substr(0, journal.size() / 2) + mutate(tail, *edits));
  ReportOptions options;
  options.problem = *rc::gen::element<std::string>("square_2048", "odd_1000", "decode_m16");
  write_report(directory / "t.yaml", directory / "report.html", options);
  const std::string html = read(directory / "report.html");
  RC_ASSERT(html.find("<svg id=\"chart-tflops\"") != std::string::npos);
  RC_ASSERT(chart_or_note(html, "chart-funnel", "Stage funnel"));
  RC_ASSERT(chart_or_note(html, "chart-heatmap", "Heatmap"));
  fs::remove_all(directory);
}

TEST_F(Report, UnknownParametersAndProblemsAreBadInput) {
  const auto kind_of = [&](const ReportOptions& options, const std::string& needle) {
    try {
      report(kResults / "h200.yaml", options);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      return e.kind();
    }
    ADD_FAILURE() << "no error for " << needle;
    return ErrorKind::internal;
  };
  ReportOptions options;
  options.x = "NOT_A_PARAMETER";
  EXPECT_EQ(kind_of(options, "unknown heatmap parameter 'NOT_A_PARAMETER'"), ErrorKind::bad_input);
  options = {};
  options.y = "bm";
  EXPECT_EQ(kind_of(options, "'bm'"), ErrorKind::bad_input);
  options = {};
  options.problem = "no_such_problem";
  EXPECT_EQ(kind_of(options, "no problem 'no_such_problem'"), ErrorKind::bad_input);
  EXPECT_FALSE(fs::exists(directory_ / "out" / "report.html")) << "nothing is written on an error";
}

TEST_F(Report, AnUnreadableTableIsAnError) {
  EXPECT_THROW(report(directory_ / "missing.yaml"), Error);
  write(directory_ / "bad.yaml", "format: tunefuzz-results/1\ngpu: [\n");
  try {
    report(directory_ / "bad.yaml");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
  }
}

TEST_F(Report, TextFromTheInputsIsEscaped) {
  const std::string name = "sq<2048> & \"x\"";
  const std::string escaped = "sq&lt;2048&gt; &amp; &quot;x&quot;";
  std::string table = read(kResults / "h200.yaml");
  table.replace(table.find("name: square_2048"), 17, "name: 'sq<2048> & \"x\"'");
  write(directory_ / "t.yaml", table);
  std::string journal = read(kResults / "h200.journal");
  journal = std::regex_replace(journal, std::regex("\"square_2048\""), "\"sq<2048> & \\\"x\\\"\"");
  write(directory_ / "t.journal", journal);
  const std::string html = report(directory_ / "t.yaml");
  EXPECT_EQ(html.find("sq<2048>"), std::string::npos);
  EXPECT_GE(count(html, escaped), 3u) << "in the bar chart label, the heatmap title and its caption";
  EXPECT_FALSE(chart(html, "chart-heatmap").empty()) << "the renamed problem's timings are found";
}

}  // namespace
}  // namespace tunefuzz
