// Laws of `tune export` and `tune merge`:
//  - yaml and json exports read back with the same rows (json is checked to be strict JSON first);
//  - csv has a header and one line per (table, row), each of 17 RFC 4180 fields that decode back;
//  - the header compiles warning-free as C++17 alone, its tables and lookup are constexpr, and lookup answers
//    by the rule: exact → nearest shape on the card → nearest on the arch → gemm_mma's defaults;
//  - the layout (storage orders of A and B) is part of the lookup's key at every step: two rows of one shape
//    and types in different layouts each answer for their own layout, whichever comes first, and a lookup
//    without a layout means RR;
//  - merging one card's tables unions rows by problem and records every source; a conflict is refused naming
//    the problem, card and files unless a preference picks a side; several cards become a collection.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "runtime/backend/elf_image.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/kernel_template.hpp"
#include "tests/support/current_table.hpp"
#include "tuner/table/embed.hpp"
#include "tuner/table/export.hpp"
#include "tuner/table/merge.hpp"
#include "tuner/table/staleness.hpp"
#include "tuner/worker/protocol.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kCommittedTable = TUNEFUZZ_SOURCE_DIR "/results/h200.yaml";
const std::string kH200 = "NVIDIA H200";

/// A fresh directory for one test.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(TUNEFUZZ_BINARY_DIR) / "test-export" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs a shell command; its standard output and error go to `output`.
int run(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void expect_same_rows(const ResultsTable& a, const ResultsTable& b) {
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const TableRow &x = a.rows[i], &y = b.rows[i];
    EXPECT_EQ(x.problem.name, y.problem.name);
    EXPECT_EQ(std::tie(x.problem.m, x.problem.n, x.problem.k),
              std::tie(y.problem.m, y.problem.n, y.problem.k));
    EXPECT_TRUE(x.problem.input == y.problem.input && x.problem.output == y.problem.output &&
                x.problem.layout == y.problem.layout && x.problem.beta == y.problem.beta);
    EXPECT_EQ(x.baseline_tflops, y.baseline_tflops) << x.problem.name;
    ASSERT_EQ(x.winner.has_value(), y.winner.has_value()) << x.problem.name;
    if (!x.winner) continue;
    EXPECT_EQ(x.winner->id, y.winner->id);
    EXPECT_EQ(x.winner->config, y.winner->config);
    EXPECT_EQ(x.winner->tflops, y.winner->tflops);
    EXPECT_EQ(x.winner->median_ms, y.winner->median_ms);
  }
}

/// The committed table's document with only rows [first, last), and optionally another card name.
/// Rows of the committed table.
size_t committed_rows() { return YAML::LoadFile(kCommittedTable.string())["problems"].size(); }

fs::path write_slice(const fs::path& path, size_t first, size_t last, const std::string& card = kH200) {
  YAML::Node doc = YAML::Clone(YAML::LoadFile(kCommittedTable.string()));
  YAML::Node rows(YAML::NodeType::Sequence);
  for (size_t i = first; i < last; ++i) rows.push_back(doc["problems"][i]);
  doc["problems"] = rows;
  doc["gpu"]["name"] = card;
  write_yaml(path, doc);
  return path;
}

// Strict JSON (RFC 8259) recogniser: true when `text` is exactly one JSON value.
class JsonChecker {
 public:
  explicit JsonChecker(std::string text) : s_(std::move(text)) {}
  bool valid() { return value() && (space(), i_ == s_.size()); }

 private:
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) { return space(), i_ < s_.size() && s_[i_] == c ? (++i_, true) : false; }
  bool word(const std::string& w) {
    return s_.compare(i_, w.size(), w) == 0 ? (i_ += w.size(), true) : false;
  }
  bool string() {
    if (!eat('"')) return false;
    for (; i_ < s_.size() && s_[i_] != '"'; ++i_)
      if (static_cast<unsigned char>(s_[i_]) < 0x20 || (s_[i_] == '\\' && ++i_ >= s_.size())) return false;
    return i_++ < s_.size();
  }
  bool number() {
    static const std::regex pattern(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
    std::smatch m;
    const std::string rest = s_.substr(i_, 64);
    if (!std::regex_search(rest, m, pattern, std::regex_constants::match_continuous)) return false;
    return i_ += m.length(), true;
  }
  template <class Item>
  bool list(char open, char close, Item item) {
    if (!eat(open)) return false;
    if (eat(close)) return true;
    while (item())
      if (!eat(',')) return eat(close);
    return false;
  }
  bool value() {
    space();
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{':
        return list('{', '}', [&] { return string() && eat(':') && value(); });
      case '[':
        return list('[', ']', [&] { return value(); });
      case '"':
        return string();
      case 't':
        return word("true");
      case 'f':
        return word("false");
      case 'n':
        return word("null");
      default:
        return number();
    }
  }
  std::string s_;
  size_t i_ = 0;
};

/// Fields of one RFC 4180 line.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"')
        fields.back() += line[++i];
      else
        quoted = false;
    } else if (line[i] == '"')
      quoted = true;
    else if (line[i] == ',' && !quoted)
      fields.emplace_back();
    else
      fields.back() += line[i];
  }
  return fields;
}

TEST(Export, FormatNames) {
  EXPECT_EQ(parse_export_format("yaml"), ExportFormat::yaml);
  EXPECT_EQ(parse_export_format("cmake"), ExportFormat::cmake);
  EXPECT_EQ(parse_export_format("xml"), std::nullopt);
}

TEST(Export, YamlOfOneTableReadsBackRowForRow) {
  const TableSet set = read_table_set(kCommittedTable);
  const fs::path out = scratch("yaml") / "h200.yaml";
  export_tables(set, ExportFormat::yaml, out);
  const TableSet back = read_table_set(out);
  ASSERT_EQ(back.tables.size(), 1u);
  EXPECT_EQ(back.tables[0].gpu_name, kH200);
  expect_same_rows(set.tables[0], back.tables[0]);
}

TEST(Export, YamlOfTwoCardsIsACollectionThatReadsBack) {
  const fs::path dir = scratch("yaml-two");
  TableSet set = read_table_set(kCommittedTable);
  const TableSet other = read_table_set(write_slice(dir / "h100.yaml", 0, 3, "NVIDIA H100 80GB HBM3"));
  set.tables.push_back(other.tables[0]);
  set.documents.push_back(other.documents[0]);
  export_tables(set, ExportFormat::yaml, dir / "both.yaml");
  const TableSet back = read_table_set(dir / "both.yaml");
  ASSERT_EQ(back.tables.size(), 2u);
  EXPECT_EQ(back.tables[1].gpu_name, "NVIDIA H100 80GB HBM3");
  expect_same_rows(set.tables[0], back.tables[0]);
  expect_same_rows(other.tables[0], back.tables[1]);
}

TEST(Export, JsonIsStrictJsonWithTheSameRows) {
  const TableSet set = read_table_set(kCommittedTable);
  const fs::path out = scratch("json") / "h200.json";
  export_tables(set, ExportFormat::json, out);
  const std::string text = read(out);
  EXPECT_TRUE(JsonChecker(text).valid()) << text.substr(0, 400);
  EXPECT_FALSE(JsonChecker(text + "}").valid());  // the checker can fail
  expect_same_rows(set.tables[0], parse_results_table_node(YAML::Load(text), out.string(), ""));
}

TEST(Export, CsvHasOneQuotedLinePerRow) {
  TableSet set = read_table_set(kCommittedTable);
  const std::string awkward = "square, \"2048\"";
  set.tables[0].rows[0].problem.name = awkward;
  set.tables[0].rows[1].winner.reset();
  const fs::path out = scratch("csv") / "h200.csv";
  export_tables(set, ExportFormat::csv, out);
  std::istringstream text(read(out));
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(text, line);) lines.push_back(csv_fields(line));
  ASSERT_EQ(lines.size(), set.tables[0].rows.size() + 1);
  EXPECT_EQ(lines[0][2], "problem");
  for (const auto& fields : lines) EXPECT_EQ(fields.size(), 17u);
  EXPECT_NE(read(out).find("\"square, \"\"2048\"\"\""), std::string::npos);
  EXPECT_EQ(lines[1][2], awkward);
  EXPECT_EQ(lines[1][0], kH200);
  EXPECT_EQ(lines[1][12], set.tables[0].rows[0].winner->id);
  for (const size_t winner_field : {11, 12, 13, 14, 16}) EXPECT_EQ(lines[2][winner_field], "");
}

/// One lookup the generated header must answer, with the answer expected by the rule.
struct Query {
  std::string card, arch;
  int64_t m, n, k;
  std::string precision, output;
  std::string layout = {};  ///< empty: the argument is left out, so the lookup's default (RR) applies

  std::string key_layout() const { return layout.empty() ? "RR" : layout; }
};

// The answer as the probe program prints it: source, problem, candidate and five parameters.
std::string answer(const std::string& source, const std::string& problem, const std::string& candidate,
                   const std::map<std::string, int64_t>& config) {
  std::string out =
      source + " " + (problem.empty() ? "-" : problem) + " " + (candidate.empty() ? "-" : candidate);
  for (const char* name : {"BM", "BN", "BK", "STAGES", "PACK"}) {
    const auto it = config.find(name);  // absent from the winner's template: the lookup says -1
    out += " " + std::string(name) + "=" + std::to_string(it == config.end() ? -1 : it->second);
  }
  return out + "\n";
}

// A table written before its template gained a parameter (PACK on gemm_wgmma) leaves it out of the
// winner's config: the winner ran at the template's default, and the lookup says so.
std::string answer(const std::string& source, const TableRow& row) {
  std::map<std::string, int64_t> config = row.winner->config;
  const Point defaults = find_template(row.winner->template_name).default_point();
  for (const auto& [name, value] : defaults.values()) config.emplace(name, value);
  return answer(source, row.problem.name, row.winner->id, config);
}

/// The row of `table` with these types and layout nearest to (m, n, k) in log space, computed independently
/// here.
const TableRow& nearest(const ResultsTable& table, const Query& q) {
  const TableRow* best = nullptr;
  double best_distance = 0, second = INFINITY;
  for (const TableRow& row : table.rows) {
    if (to_string(row.problem.input) != q.precision || to_string(row.problem.output) != q.output ||
        to_string(row.problem.layout) != q.key_layout())
      continue;
    const double d = std::abs(std::log(double(q.m) / row.problem.m)) +
                     std::abs(std::log(double(q.n) / row.problem.n)) +
                     std::abs(std::log(double(q.k) / row.problem.k));
    if (best && d >= best_distance) {
      second = std::min(second, d);
      continue;
    }
    if (best) second = best_distance;
    best = &row;
    best_distance = d;
  }
  EXPECT_LT(best_distance + 1e-6, second) << "the query should have one nearest row";
  return *best;
}

// A program that includes only the header, checks it at compile time and prints one answer per query.
constexpr const char* kProbe = R"(#include "tables.hpp"
#include <iostream>
using namespace tunefuzz_tables;
static_assert(lookup("NVIDIA H200", "sm_90", 4096, 4096, 4096, "bf16", "bf16").source == Source::exact,
              "lookup is constexpr");
static void show(const Choice& c) {
  std::cout << to_string(c.source) << ' ' << (c.problem.empty() ? "-" : c.problem) << ' '
            << (c.candidate.empty() ? "-" : c.candidate);
  for (const char* p : {"BM", "BN", "BK", "STAGES", "PACK"}) std::cout << ' ' << p << '=' << c.parameter(p);
  std::cout << '\n';
}
)";

std::string probe_source(const std::vector<Query>& queries, size_t rows) {
  std::string text = kProbe;
  text +=
      "static_assert(kRows.size() == " + std::to_string(rows) + ", \"one row per winner\");\nint main() {\n";
  for (const Query& q : queries)
    text += "  show(lookup(\"" + q.card + "\", \"" + q.arch + "\", " + std::to_string(q.m) + ", " +
            std::to_string(q.n) + ", " + std::to_string(q.k) + ", \"" + q.precision + "\", \"" + q.output +
            "\"" + (q.layout.empty() ? "" : ", \"" + q.layout + "\"") + "));\n";
  return text + "}\n";
}

/// Builds the probe for `queries` against dir/tables.hpp (expecting `rows` rows in it) warning-free as C++17,
/// runs it and returns what it printed: one answer per query.
std::string run_probe(const fs::path& dir, const std::vector<Query>& queries, size_t rows) {
  std::ofstream(dir / "probe.cpp") << probe_source(queries, rows);
  std::string output;
  const std::string build =
      "cd " + dir.string() + " && c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -o probe probe.cpp";
  if (run(build, output) != 0) {
    ADD_FAILURE() << "the probe did not build:\n" << output;
    return {};
  }
  output.clear();
  if (run(dir.string() + "/probe", output) != 0) ADD_FAILURE() << "the probe failed:\n" << output;
  return output;
}

TEST(Export, TheHeaderCompilesAloneAndLooksUpByTheRule) {
  const TableSet set = read_table_set(kCommittedTable);
  const ResultsTable& table = set.tables[0];
  const fs::path dir = scratch("header");
  export_tables(set, ExportFormat::header, dir / "tables.hpp");
  const auto row = [&](const std::string& name) -> const TableRow& {
    for (const TableRow& r : table.rows)
      if (r.problem.name == name) return r;
    throw std::runtime_error("no row " + name);
  };
  const KernelTemplate& fallback = gemm_mma_template();
  const Point defaults = fallback.default_point();
  const std::map<std::string, int64_t> default_config(defaults.values().begin(), defaults.values().end());
  const std::string default_id = Candidate{&fallback, defaults, {Precision::bf16, Precision::bf16}}.id();
  const std::vector<Query> queries = {
      {kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16"},
      {kH200, "sm_90", 4097, 4095, 4099, "bf16", "bf16"},
      {kH200, "sm_90", 48, 8192, 8192, "bf16", "bf16"},  // nearest decode_m64, and no other row as near
      {kH200, "sm_90", 2048, 2048, 2048, "fp16", "fp16"},
      {"NVIDIA H100 80GB HBM3", "sm_90", 4096, 4096, 4096, "bf16", "bf16"},
      {"NVIDIA A100-SXM4-80GB", "sm_80", 4096, 4096, 4096, "bf16", "bf16"},
      {"NVIDIA A100-SXM4-80GB", "sm_80", 64, 64, 64, "fp32", "fp32"},
  };
  const std::string expected =
      answer("exact", row("square_4096")) + answer("exact", row("odd_4097x4095x4099")) +
      answer("nearest_shape", nearest(table, queries[2])) +
      answer("nearest_shape", nearest(table, queries[3])) + answer("same_arch", row("square_4096")) +
      answer("safe_default", "", default_id, default_config) + answer("safe_default", "", "", default_config);
  const size_t winners = std::count_if(table.rows.begin(), table.rows.end(),
                                       [](const TableRow& r) { return r.winner.has_value(); });
  EXPECT_EQ(run_probe(dir, queries, winners), expected);
}

// Each header row ends with its tuned problem's alpha and beta, so a program re-timing a row (the runtime's
// gpu_check) runs the same epilogue as the campaign did, and then the winner's code digest as the table
// records it.
TEST(Export, HeaderRowsCarryTheTunedProblemsAlphaAndBeta) {
  const fs::path dir = scratch("header-scalars");
  export_tables(read_table_set(kCommittedTable), ExportFormat::header, dir / "tables.hpp");
  std::ifstream in(dir / "tables.hpp");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto row_end = [&](const std::string& problem) {
    const size_t at = text.find("\"" + problem + "\", ");
    if (at == std::string::npos) return std::string("no row");
    const size_t end = text.find("},\n", at);
    const size_t digest = text.rfind('"', text.rfind('"', end) - 1);  // the opening quote of the digest
    const size_t hash = text.rfind('"', digest - 1);  // the closing quote of the template hash
    return text.substr(hash + 1, end - hash - 1);
  };
  const ResultsTable table = read_results_table(kCommittedTable);
  const auto digest = [&](const std::string& problem) {
    for (const TableRow& r : table.rows)
      if (r.problem.name == problem && r.winner) return r.winner->code_sha256;
    return std::string("no winner");
  };
  ASSERT_EQ(digest("square_4096").size(), 64u) << "the committed table records its winners' code digests";
  EXPECT_EQ(row_end("square_4096_beta1"), ", 1, 1, \"" + digest("square_4096_beta1") + "\"");
  EXPECT_EQ(row_end("square_4096"), ", 1, 0, \"" + digest("square_4096") + "\"");
}

TEST(Export, TheLookupKeysOnLayout) {
  // One shape and element types in two layouts with different winners, on two cards in both row orders:
  // without the layout in the key the rows tie and the first answers for both, so on one card or the other
  // a lookup gets the other layout's winner.
  const fs::path dir = scratch("header-layout");
  YAML::Node doc = YAML::Clone(YAML::LoadFile(kCommittedTable.string()));
  YAML::Node rr;
  for (const YAML::Node& row : doc["problems"])
    if (row["name"].as<std::string>() == "square_4096") rr = YAML::Clone(row);
  ASSERT_TRUE(rr) << "the committed table has no square_4096";
  ASSERT_EQ(rr["layout"].as<std::string>(), "RR");
  YAML::Node cc = YAML::Clone(rr);
  cc["name"] = "square_4096_cc";
  cc["layout"] = "CC";
  const std::string rr_id = rr["winner"]["id"].as<std::string>(),
                    cc_id = std::regex_replace(rr_id, std::regex("STAGES=[0-9]+"), "STAGES=3");
  ASSERT_NE(rr_id, cc_id) << "the CC row needs a winner of its own";
  cc["winner"]["id"] = cc_id;
  cc["winner"]["config"]["STAGES"] = 3;
  const std::string other = "NVIDIA H200 NVL";
  TableSet set;
  for (const auto& [card, first, second] : {std::tuple{kH200, rr, cc}, std::tuple{other, cc, rr}}) {
    doc["gpu"]["name"] = card;
    doc["problems"] = YAML::Node(YAML::NodeType::Sequence);
    doc["problems"].push_back(first);
    doc["problems"].push_back(second);
    const fs::path file = dir / (std::to_string(set.tables.size()) + ".yaml");
    write_yaml(file, doc);
    const TableSet one = read_table_set(file);
    set.tables.push_back(one.tables[0]);
    set.documents.push_back(one.documents[0]);
  }
  export_tables(set, ExportFormat::header, dir / "tables.hpp");
  const TableRow &rr_row = set.tables[0].rows[0], &cc_row = set.tables[0].rows[1];
  ASSERT_EQ(to_string(cc_row.problem.layout), "CC");

  const KernelTemplate& fallback = gemm_mma_template();
  const Point defaults = fallback.default_point();
  const std::map<std::string, int64_t> default_config(defaults.values().begin(), defaults.values().end());
  const std::string default_id = Candidate{&fallback, defaults, {Precision::bf16, Precision::bf16}}.id();
  const std::string h100 = "NVIDIA H100 80GB HBM3";
  const std::vector<std::pair<Query, std::string>> cases = {
      // Exact, the RR row first on kH200 and last on the other card; no layout means RR.
      {{kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "RR"}, answer("exact", rr_row)},
      {{kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "CC"}, answer("exact", cc_row)},
      {{kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16"}, answer("exact", rr_row)},
      {{other, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "RR"}, answer("exact", rr_row)},
      {{other, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "CC"}, answer("exact", cc_row)},
      {{other, "sm_90", 4096, 4096, 4096, "bf16", "bf16"}, answer("exact", rr_row)},
      // The nearest shape and the same arch keep to the layout as well.
      {{kH200, "sm_90", 3000, 5000, 4000, "bf16", "bf16", "CC"}, answer("nearest_shape", cc_row)},
      {{other, "sm_90", 3000, 5000, 4000, "bf16", "bf16", "RR"}, answer("nearest_shape", rr_row)},
      {{h100, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "CC"}, answer("same_arch", cc_row)},
      {{h100, "sm_90", 4096, 4096, 4096, "bf16", "bf16"}, answer("same_arch", rr_row)},
      // A layout no row has is not answered by another layout's row, even of the very shape.
      {{kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "CR"},
       answer("safe_default", "", default_id, default_config)},
  };
  std::vector<Query> queries;
  std::string expected;
  for (const auto& [query, want] : cases) {
    queries.push_back(query);
    expected += want;
  }
  EXPECT_EQ(run_probe(dir, queries, 4), expected);

  // The CSV carries each row's layout beside its winner.
  export_tables(set, ExportFormat::csv, dir / "tables.csv");
  std::istringstream text(read(dir / "tables.csv"));
  std::vector<std::pair<std::string, std::string>> layouts;  // (layout, candidate) per line after the header
  std::string line;
  std::getline(text, line);
  while (std::getline(text, line)) {
    const std::vector<std::string> fields = csv_fields(line);
    layouts.emplace_back(fields[8], fields[12]);
  }
  const std::vector<std::pair<std::string, std::string>> want_layouts = {
      {"RR", rr_id}, {"CC", cc_id}, {"CC", cc_id}, {"RR", rr_id}};
  EXPECT_EQ(layouts, want_layouts);
}

TEST(Export, TheHeaderEscapesNamesAndLeavesOutRowsWithoutWinners) {
  const fs::path dir = scratch("header-escapes");
  // Quotes, a backslash, a line break, UTF-8 and a trigraph, in string literals and in comments.
  const std::string card = "Card \"quoted\" \\ line\nbreak caf\xc3\xa9 ?\?= ?\?/";
  TableSet set = read_table_set(write_slice(dir / "a.yaml", 0, 2, card));
  TableSet none = read_table_set(write_slice(dir / "b.yaml", 0, committed_rows(), "No winners"));
  for (TableRow& row : none.tables[0].rows) row.winner.reset();
  set.tables.push_back(none.tables[0]);
  set.documents.push_back(none.documents[0]);
  export_tables(set, ExportFormat::header, dir / "tables.hpp");
  export_tables(set, ExportFormat::cmake, dir / "package");
  EXPECT_EQ(read(dir / "package/CMakeLists.txt").find("line\nbreak"), std::string::npos)
      << "a line break in a comment";
  std::ofstream(dir / "probe.cpp")
      << "#include \"tables.hpp\"\nusing namespace tunefuzz_tables;\n"
      << "static_assert(kRows.size() == 2, \"rows without a winner are left out\");\n"
      << "static_assert(lookup(R\"(" << card
      << ")\", \"sm_90\", 4096, 4096, 4096, \"bf16\", \"bf16\").problem == \"square_4096\", "
         "\"names survive escaping\");\n";
  std::string output;
  EXPECT_EQ(run("cd " + dir.string() +
                    " && c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only probe.cpp",
                output),
            0)
      << output;
}

TEST(Export, CmakeWritesAPackageHoldingTheHeader) {
  const TableSet set = read_table_set(kCommittedTable);
  const fs::path dir = scratch("cmake");
  export_tables(set, ExportFormat::cmake, dir / "package");
  export_tables(set, ExportFormat::header, dir / "tables.hpp");
  EXPECT_EQ(read(dir / "package/include/tunefuzz/tables.hpp"), read(dir / "tables.hpp"));
  const std::string cmake = read(dir / "package/CMakeLists.txt");
  EXPECT_NE(cmake.find("project(tunefuzz_tables VERSION 0.1.0"), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("add_library(tunefuzz::tables ALIAS tables)"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "package/cmake/tunefuzzConfig.cmake"));
  EXPECT_TRUE(fs::exists(dir / "package/README.md"));
}

// tunefuzz installs cmake/tunefuzzConfig.cmake and every exported package writes its own copy: one text, so
// the runtime and a tables package may share an install prefix whichever comes first.
TEST(Export, CmakePackageConfigIsTunefuzzsOwn) {
  const fs::path dir = scratch("cmake-config");
  export_tables(read_table_set(kCommittedTable), ExportFormat::cmake, dir / "package");
  EXPECT_EQ(read(dir / "package/cmake/tunefuzzConfig.cmake"), read(TUNEFUZZ_SOURCE_DIR "/cmake/tunefuzzConfig.cmake"));
  EXPECT_NE(read(dir / "package/include/tunefuzz/kernels.hpp").find("std::array<Image, 0> kImages{}"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "package/src/kernels.cpp"));
  EXPECT_NE(read(dir / "package/CMakeLists.txt").find("add_library(tables INTERFACE)"), std::string::npos);
}

// --embed-kernels: each distinct winner compiled by NVRTC for its table's GPU, its bytes in src/kernels.cpp,
// the library then static; a template that is not the one the table was tuned with is refused.
TEST(Export, EmbedKernelsCompilesEachWinnerAheadOfTime) {
  const fs::path dir = scratch("cmake-embed");
  const fs::path templates = TUNEFUZZ_BINARY_DIR "/share/tunefuzz/templates", table = dir / "current.yaml";
  test::write_current_table(TUNEFUZZ_SOURCE_DIR "/tests/downstream/small_table.yaml", templates, table);
  const EmbedKernels embed{templates, TUNEFUZZ_BINARY_DIR "/test-cache"};
  export_tables(read_table_set(table), ExportFormat::cmake, dir / "package", embed);
  const std::string header = read(dir / "package/include/tunefuzz/kernels.hpp");
  EXPECT_NE(header.find("extern const std::array<Image, 2> kImages;"), std::string::npos) << header;
  const std::string source = read(dir / "package/src/kernels.cpp");
  EXPECT_NE(source.find("\"gemm_simt/fp32-fp32/"), std::string::npos);
  EXPECT_NE(source.find("\"sm_90\", kImage1"), std::string::npos);
  EXPECT_NE(source.find("{\n127,69,76,70,"), std::string::npos) << "an image that does not start as an ELF file";
  EXPECT_NE(read(dir / "package/CMakeLists.txt").find("add_library(tables STATIC src/kernels.cpp)"), std::string::npos);

  YAML::Node doc = YAML::LoadFile(table.string());
  doc["provenance"]["template_hashes"]["gemm_simt"] = std::string(64, '0');
  write_yaml(dir / "stale.yaml", doc);
  try {
    export_tables(read_table_set(dir / "stale.yaml"), ExportFormat::cmake, dir / "stale", embed);
    FAIL() << "a stale template was embedded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
    EXPECT_EQ(e.where().field, "provenance.template_hashes.gemm_simt") << e.what();
  }
  EXPECT_THROW(export_tables(read_table_set(table), ExportFormat::header, dir / "h.hpp", embed), Error);
}

// What is embedded is the image the kernel cache holds for the winner, the code the campaign ran, without the
// debug sections: the same code digest, no debug bytes, a smaller file.
TEST(Export, EmbeddedImagesAreTheCachedImagesWithoutTheirDebugSections) {
  const fs::path dir = scratch("embed-stripped");
  const fs::path templates = TUNEFUZZ_BINARY_DIR "/share/tunefuzz/templates", table = dir / "current.yaml";
  test::write_current_table(TUNEFUZZ_SOURCE_DIR "/tests/downstream/small_table.yaml", templates, table);
  const fs::path cache_dir = TUNEFUZZ_BINARY_DIR "/test-cache";
  const std::vector<EmbeddedImage> images =
      compile_winners(read_table_set(table), templates, KernelCache(cache_dir));
  ASSERT_FALSE(images.empty());
  std::map<std::string, size_t> cached;  // code digest -> size of an image of the cache with that code
  for (const auto& entry : fs::directory_iterator(cache_dir))
    if (entry.path().extension() == ".cubin")
      cached[code_sha256(read(entry.path()))] = fs::file_size(entry.path());
  for (const EmbeddedImage& image : images) {
    SCOPED_TRACE(image.candidate);
    const auto sections = elf_sections(image.image);
    ASSERT_TRUE(sections);
    for (const ElfSection& s : *sections) {
      if (is_debug_section(s)) {
        EXPECT_EQ(s.size, 0u) << s.name;
      }
    }
    const auto it = cached.find(code_sha256(image.image));
    ASSERT_NE(it, cached.end()) << "no image of the cache has this code";
    EXPECT_LT(image.image.size(), it->second);
  }
}

// The small fixture table made current for the tree's templates in a scratch folder, with the code digest the
// tree compiles each of its two winners to (through the tests' kernel cache).
struct SmallCurrentTable {
  fs::path dir, templates = TUNEFUZZ_BINARY_DIR "/share/tunefuzz/templates", current,
                cache_dir = TUNEFUZZ_BINARY_DIR "/test-cache";
  KernelCache cache{cache_dir};
  std::map<std::string, std::string> digests;  // winner id -> the code the tree compiles it to

  explicit SmallCurrentTable(const std::string& name) : dir(scratch(name)), current(dir / "current.yaml") {
    test::write_current_table(TUNEFUZZ_SOURCE_DIR "/tests/downstream/small_table.yaml", templates, current);
    for (const EmbeddedImage& image : compile_winners(read_table_set(current), templates, cache))
      digests[image.candidate] = code_sha256(image.image);
  }
  // tune check with this tree's templates and the tests' kernel cache
  std::string tune_check() const {
    return "TUNEFUZZ_TEMPLATE_DIR=" + templates.string() + " TUNEFUZZ_CACHE_DIR=" + cache_dir.string() +
           " " TUNEFUZZ_BINARY_DIR "/bin/tune check ";
  }
};

// A template whose source changed after tuning leaves a table's rows as they were when the tree compiles each
// of its winners to the code the table recorded (winner.code_sha256): tune check calls the table current and
// tune export --embed-kernels ships the images. A winner whose code differs, or whose digest the table does
// not record, makes the table stale and refuses the export.
TEST(Staleness, AChangedSourceCountsOnlyWhenAWinnersCodeChanged) {
  const SmallCurrentTable small("staleness");
  const fs::path &dir = small.dir, &templates = small.templates, &current = small.current;
  const KernelCache& cache = small.cache;
  const std::map<std::string, std::string>& digests = small.digests;
  ASSERT_EQ(digests.size(), 2u);
  // gemm_simt as if its source had changed since the tuning: the table's hash is no longer the tree's
  std::string changed = read(current);
  const std::string key = "    gemm_simt: ";
  ASSERT_NE(changed.find(key), std::string::npos);
  changed.replace(changed.find(key) + key.size(), 64, std::string(64, '0'));
  const auto recorded = [&](bool other_simt_code) {
    std::string text = changed;
    for (const auto& [id, digest] : digests) {
      const std::string line = "      id: " + id + "\n";
      const size_t at = text.find(line);
      EXPECT_NE(at, std::string::npos) << id;
      std::string code = digest;
      if (other_simt_code && id.rfind("gemm_simt/", 0) == 0) code[0] = code[0] == '0' ? '1' : '0';
      text.insert(at + line.size(), "      code_sha256: " + code + "\n");
    }
    return text;
  };
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const fs::path same = write("same.yaml", recorded(false)), other = write("other.yaml", recorded(true)),
                 unrecorded = write("unrecorded.yaml", changed);
  const std::vector<TemplateChange> unchanged = template_changes(read_results_table(same), templates, cache);
  ASSERT_EQ(unchanged.size(), 1u);
  EXPECT_EQ(unchanged[0].name, "gemm_simt");
  EXPECT_EQ(unchanged[0].winners, 1);
  EXPECT_FALSE(unchanged[0].stale()) << ::testing::PrintToString(unchanged[0].changed);
  EXPECT_EQ(compile_winners(read_table_set(same), templates, cache).size(), 2u);
  for (const fs::path& stale : {other, unrecorded}) {
    SCOPED_TRACE(stale.filename().string());
    const std::vector<TemplateChange> changes = template_changes(read_results_table(stale), templates, cache);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_TRUE(changes[0].stale());
    EXPECT_THROW(compile_winners(read_table_set(stale), templates, cache), Error);
  }
  const std::string tune = small.tune_check();
  std::string output;
  EXPECT_EQ(run(tune + same.string(), output), 0) << output;
  EXPECT_NE(output.find("but the tree compiles its 1 winners to the code the table timed"), std::string::npos)
      << output;
  output.clear();
  EXPECT_EQ(run(tune + other.string(), output), 1) << output;
  EXPECT_NE(output.find("its code changed"), std::string::npos) << output;
  output.clear();
  EXPECT_EQ(run(tune + unrecorded.string(), output), 1) << output;
  EXPECT_NE(output.find("the table records no code digest"), std::string::npos) << output;
}

// A table written before winners recorded their code digests gets them from `tune check --record-digests`
// while the tree has the template sources and the compiler it was tuned with: each the digest of the image
// the tree compiles the winner to, written into the table with nothing else changed. Where the source or the
// compiler differs, the winner keeps none, and the reason is named.
TEST(Staleness, RecordedDigestsAreTheCodeTheTreeCompilesFromTheTunedSources) {
  const SmallCurrentTable small("record-digests");
  const fs::path &dir = small.dir, &templates = small.templates, &current = small.current;
  const KernelCache& cache = small.cache;
  const std::map<std::string, std::string>& digests = small.digests;
  ASSERT_EQ(digests.size(), 2u);
  const std::string before = read(current);
  ASSERT_EQ(before.find("code_sha256"), std::string::npos) << "the fixture records digests already";

  const std::string tune = small.tune_check() + "--record-digests ";
  std::string output;
  EXPECT_EQ(run(tune + current.string(), output), 0) << output;
  EXPECT_NE(output.find("recorded the code digests of 2 winners"), std::string::npos) << output;
  std::set<std::string> seen;
  for (const TableRow& row : read_results_table(current).rows)
    if (row.winner) {
      EXPECT_EQ(row.winner->code_sha256, digests.at(row.winner->id)) << row.winner->id;
      seen.insert(row.winner->id);
    }
  EXPECT_EQ(seen.size(), 2u);
  std::string without;  // the table again without the lines the command added
  std::istringstream lines(read(current));
  for (std::string line; std::getline(lines, line);)
    if (line.find("code_sha256: ") == std::string::npos) without += line + "\n";
  EXPECT_EQ(without, before);

  // Another compiler, or another source of one template: those winners keep no digest.
  const auto variant = [&](const std::string& from, const std::string& to) {
    std::string text = before;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(dir / "variant.yaml") << text;
    return missing_code_digests(read_results_table(dir / "variant.yaml"), templates, cache);
  };
  const DigestBackfill other_compiler = variant("compiler: nvrtc 13.0", "compiler: nvrtc 12.4");
  EXPECT_TRUE(other_compiler.digests.empty());
  ASSERT_EQ(other_compiler.skipped.size(), 2u);
  for (const std::string& why : other_compiler.skipped)
    EXPECT_NE(why.find("built by nvrtc 12.4"), std::string::npos) << why;
  const std::string key = "    gemm_simt: ";
  const size_t at = before.find(key);
  ASSERT_NE(at, std::string::npos);
  const DigestBackfill other_source = variant(before.substr(at, key.size() + 64), key + std::string(64, '0'));
  ASSERT_EQ(other_source.digests.size(), 1u);
  EXPECT_EQ(other_source.digests.begin()->second, digests.at(other_source.digests.begin()->first));
  ASSERT_EQ(other_source.skipped.size(), 1u);
  EXPECT_EQ(other_source.skipped[0].rfind("gemm_simt/", 0), 0u) << other_source.skipped[0];
  EXPECT_NE(other_source.skipped[0].find("not the one the table was tuned with"), std::string::npos);
}

TEST(Merge, OneCardUnionsRowsByProblemAndRecordsSources) {
  const fs::path dir = scratch("merge-one");
  const std::vector<TableSet> inputs = {read_table_set(write_slice(dir / "a.yaml", 0, 8)),
                                        read_table_set(write_slice(dir / "b.yaml", 5, committed_rows()))};
  write_yaml(dir / "merged.yaml", merge_tables(inputs, MergePreference::none));
  const TableSet merged = read_table_set(dir / "merged.yaml");
  ASSERT_EQ(merged.tables.size(), 1u);
  expect_same_rows(read_results_table(kCommittedTable), merged.tables[0]);
  const YAML::Node sources = merged.documents[0]["provenance"]["merged_from"];
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0]["file"].as<std::string>(), (dir / "a.yaml").string());
  EXPECT_EQ(sources[1]["file"].as<std::string>(), (dir / "b.yaml").string());
  EXPECT_EQ(sources[1]["tool_commit"].as<std::string>(), merged.tables[0].tool_commit);
}

TEST(Merge, DifferentWinnersConflictUnlessAPreferencePicksOne) {
  const fs::path dir = scratch("merge-conflict");
  const fs::path a = write_slice(dir / "a.yaml", 0, committed_rows());
  YAML::Node doc = YAML::LoadFile(a.string());
  YAML::Node winner = doc["problems"][1]["winner"];  // square_4096, STAGES=4
  const std::string original = winner["id"].as<std::string>(),
                    changed = std::regex_replace(original, std::regex("STAGES=4"), "STAGES=3");
  ASSERT_NE(original, changed);
  winner["id"] = changed;
  winner["config"]["STAGES"] = 3;
  write_yaml(dir / "b.yaml", doc);
  const std::vector<TableSet> inputs = {read_table_set(a), read_table_set(dir / "b.yaml")};
  try {
    merge_tables(inputs, MergePreference::none);
    ADD_FAILURE() << "a conflict was merged";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
    for (const std::string& part : {std::string("square_4096"), kH200, a.string(), (dir / "b.yaml").string()})
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what() << " lacks " << part;
  }
  for (const auto& [prefer, expected] :
       {std::pair{MergePreference::first, original}, {MergePreference::last, changed}}) {
    const ResultsTable merged = parse_results_table_node(merge_tables(inputs, prefer), "merged", "");
    ASSERT_EQ(merged.rows.size(), committed_rows());
    EXPECT_EQ(merged.rows[1].winner->id, expected);
  }
}

TEST(Merge, ARenamedShapeConflicts) {
  const fs::path dir = scratch("merge-shape");
  YAML::Node doc = YAML::LoadFile(write_slice(dir / "a.yaml", 0, 2).string());
  doc["problems"][1]["m"] = 4000;
  write_yaml(dir / "b.yaml", doc);
  EXPECT_THROW(
      merge_tables({read_table_set(dir / "a.yaml"), read_table_set(dir / "b.yaml")}, MergePreference::none),
      Error);
}

TEST(Merge, TwoCardsBecomeACollection) {
  const fs::path dir = scratch("merge-two");
  const std::vector<TableSet> inputs = {
      read_table_set(write_slice(dir / "a.yaml", 0, committed_rows())),
      read_table_set(write_slice(dir / "b.yaml", 0, 4, "NVIDIA H100 80GB HBM3"))};
  write_yaml(dir / "merged.yaml", merge_tables(inputs, MergePreference::none));
  const TableSet merged = read_table_set(dir / "merged.yaml");
  ASSERT_EQ(merged.tables.size(), 2u);
  EXPECT_EQ(merged.tables[0].gpu_name, kH200);
  EXPECT_EQ(merged.tables[1].gpu_name, "NVIDIA H100 80GB HBM3");
  expect_same_rows(inputs[0].tables[0], merged.tables[0]);
  expect_same_rows(inputs[1].tables[0], merged.tables[1]);
}

}  // namespace
}  // namespace tunefuzz
