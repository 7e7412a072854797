// Laws of results tables and the other readers of files a user hands in:
//  - a table written by the campaign reads back with the same rows; the committed H200 table reads;
//  - malformed tables, reproducers and configs (thousands of generated mutations of real files) are
//    rejected with Error{bad_input} or read, never a crash or another exception (CI also runs this under
//    AddressSanitizer and UndefinedBehaviorSanitizer);
//  - the winner of close finalists is the cheaper config; a clearly faster one wins regardless;
//  - `tune check` passes a current table and fails a stale one.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/backend/compiler.hpp"
#include "runtime/backend/elf_image.hpp"
#include "runtime/dispatch/results_reader.hpp"
#include "runtime/templates/gemm_mma.hpp"
#include "tests/support/mutate.hpp"
#include "tuner/campaign/reproducer.hpp"
#include "tuner/config/config.hpp"
#include "tuner/table/results_table.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The committed tables, read as inputs. Whether either is current for the tree changes with every campaign
// (results/README.md), so TuneCheck makes its current and its stale table itself.
const std::string kH100Table = TUNEFUZZ_SOURCE_DIR "/results/h100.yaml";
const std::string kH200Table = TUNEFUZZ_SOURCE_DIR "/results/h200.yaml";

std::string candidate_id(int64_t stages, int64_t bk) {
  const KernelTemplate& t = gemm_mma_template();
  auto values = t.default_point().values();
  for (auto& [name, value] : values) {
    if (name == "STAGES") value = stages;
    if (name == "BK") value = bk;
  }
  return Candidate{&t, Point(values), {}}.id();
}

TimedEntry timed(const std::string& id, double ms, double interleaved = 0, double spread = 0) {
  TimedEntry e;
  e.id = id;
  e.status = "timed";
  e.median_ms = e.min_ms = e.max_ms = ms;
  e.tflops = 1 / ms;
  e.interleaved_median_ms = interleaved;
  e.interleaved_spread = spread;
  return e;
}

TEST(Tables, TheCurrentCommittedTableReads) {
  const ResultsTable t = read_results_table(kH100Table);
  EXPECT_EQ(t.gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.rows.size(), YAML::LoadFile(TUNEFUZZ_SOURCE_DIR "/configs/h100.yaml")["problems"].size())
      << "one row per problem of the config it was tuned from";
  for (const TableRow& row : t.rows) {
    ASSERT_TRUE(row.winner.has_value()) << row.problem.name;
    EXPECT_GT(row.winner->tflops, 0);
    EXPECT_EQ(row.winner->config.at("BM"), parse_candidate_id(row.winner->id).point["BM"]);
  }
}

TEST(Tables, AWrittenTableReadsBackRowForRow) {
  Problem p;
  p.name = "odd";
  p.m = 4097;
  p.n = 4095;
  p.k = 4099;
  ProblemTiming timing;
  timing.problem = p;
  timing.baseline = timed("cublas", 2.0);
  timing.baseline_version = "cuBLAS 13";
  timing.entries = {timed(candidate_id(4, 32), 1.0), timed(candidate_id(3, 32), 1.5)};
  Problem q = p;
  q.name = "nothing_fits";
  ProblemTiming empty;
  empty.problem = q;
  empty.baseline = timed("cublas", 1.0);
  DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.arch = "sm_90";
  device.driver_version = "580.1";
  device.limits.sm_count = 132;
  Provenance provenance = make_provenance("tune run x", "x.yaml", "nvrtc 13.0");
  provenance.template_hashes["gemm_mma"] = "abc";
  // The winner's image, as the fuzz stage hands it on: its code digest goes into the row.
  FuzzedCandidate fuzzed;
  fuzzed.candidate = parse_candidate_id(candidate_id(4, 32));
  fuzzed.image = fs::temp_directory_path() / ("tunefuzz-image-" + std::to_string(getpid()) + ".cubin");
  std::ofstream(fuzzed.image) << "not an ELF image: hashed whole";
  const std::string text = YAML::Dump(results_table(device, provenance, {timing, empty}, {fuzzed}, 100));
  fs::remove(fuzzed.image);
  const ResultsTable t = parse_results_table(text, "written.yaml");
  ASSERT_TRUE(t.rows[0].winner);
  EXPECT_EQ(t.rows[0].winner->code_sha256, code_sha256("not an ELF image: hashed whole"));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].problem.name, "odd");
  EXPECT_EQ(t.rows[0].problem.k, 4099);
  ASSERT_TRUE(t.rows[0].winner);
  EXPECT_EQ(t.rows[0].winner->id, candidate_id(4, 32));
  EXPECT_DOUBLE_EQ(t.rows[0].ratio_vs_baseline, 2.0);
  EXPECT_FALSE(t.rows[1].winner.has_value());
  EXPECT_EQ(t.template_hashes.at("gemm_mma"), "abc");
}

// A table cut short once read as a smaller table: 96 of 183 line-boundary cuts of the H100 table loaded, a cut
// to 2 of 26 rows passed `tune check`, a mid-line cut turned 616.74 TFLOP/s into 6. Every cut is an error now.
TEST(Tables, EveryCutOfATableIsAnError) {
  const std::string whole = read(kH100Table);
  const fs::path file = fs::temp_directory_path() / ("tunefuzz-cut-" + std::to_string(::getpid()) + ".yaml");
  std::vector<size_t> cuts;
  for (size_t at = 0; at < whole.size(); at = whole.find('\n', at + 1)) {
    if (at == std::string::npos) break;
    cuts.push_back(at + 1);  // at a line boundary
    cuts.push_back(at + 4);  // inside the next line
  }
  int checked = 0;
  for (size_t i = 0; i < cuts.size(); i += 5) {  // a fifth of them: seconds under the sanitizers
    if (cuts[i] >= whole.size() - 1) continue;
    std::ofstream(file, std::ios::trunc) << whole.substr(0, cuts[i]);
    ++checked;
    try {
      read_results_table(file);
      ADD_FAILURE() << "a table cut at byte " << cuts[i] << " of " << whole.size() << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
      EXPECT_TRUE(std::string(e.what()).starts_with(file.string())) << e.what();
    }
  }
  EXPECT_GT(checked, 100);
  // A row taken out whole (a hand edit, or a merge gone wrong) disagrees with the end line's count.
  std::string edited = whole;
  const size_t row = edited.find("  - name: square_4096"), next = edited.find("  - name: square_6144");
  edited.erase(row, next - row);
  std::ofstream(file, std::ios::trunc) << edited;
  try {
    read_results_table(file);
    ADD_FAILURE() << "a table missing a row was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("counts 26 problems but 25 were read"), std::string::npos) << e.what();
  }
  fs::remove(file);
}

TEST(Tables, DefectsNameTheFileLineAndField) {
  const std::string good = read(kH200Table);
  struct Case {
    std::string from, to, field;
  };
  const std::vector<Case> cases = {
      {"format: tunefuzz-results/1", "format: tunefuzz-results/9", "format"},
      {"    m: 4096\n", "    m: -4\n", "problems[1].m"},
      {"    precision: bf16\n", "    precision: fp8\n", "problems[0].precision"},
      {"  sm_count: 132\n", "  sm_count: lots\n", "gpu.sm_count"},
  };
  for (const Case& c : cases) {
    std::string text = good;
    const size_t at = text.find(c.from, c.field.starts_with("problems[1]") ? text.find("square_4096") : 0);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    try {
      parse_results_table(text, "bad.yaml");
      ADD_FAILURE() << "accepted " << c.to;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::bad_input);
      EXPECT_EQ(e.where().file, "bad.yaml");
      EXPECT_GT(e.where().line, 0) << e.what();
      EXPECT_EQ(e.where().field, c.field) << e.what();
    }
  }
}

using test::mutate;

// A reader meets a malformed document: it either reads it or throws Error{bad_input or io}; nothing else.
template <class Read>
void survives(const std::string& text, Read read) {
  try {
    read(text);
  } catch (const Error& e) {
    RC_ASSERT(e.kind() == ErrorKind::bad_input || e.kind() == ErrorKind::io);
  }
}

using test::Edits;
// Twenty documents per RapidCheck case: 2000 per reader at the default 100 cases.
constexpr size_t kDocumentsPerCase = 20;

const auto edits = [] {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(1, 6), [](size_t count) {
    return rc::gen::container<std::vector<std::pair<size_t, int>>>(
        count, rc::gen::pair(rc::gen::inRange<size_t>(0, 1u << 20), rc::gen::inRange(0, 4)));
  });
};

RC_GTEST_PROP(MalformedInput, ResultsTablesAreRejectedNotCrashedOn, ()) {
  static const std::string good = read(kH200Table);
  for (const Edits& e : *rc::gen::container<std::vector<Edits>>(kDocumentsPerCase, edits()))
    survives(mutate(good, e), [](const std::string& t) { parse_results_table(t, "mutated.yaml"); });
}

RC_GTEST_PROP(MalformedInput, ConfigsAreRejectedNotCrashedOn, ()) {
  static const std::string good = read(TUNEFUZZ_SOURCE_DIR "/configs/h100.yaml");
  for (const Edits& e : *rc::gen::container<std::vector<Edits>>(kDocumentsPerCase, edits()))
    survives(mutate(good, e), [](const std::string& t) { parse_config(t, "mutated.yaml"); });
}

RC_GTEST_PROP(MalformedInput, ReproducersAreRejectedNotCrashedOn, ()) {
  static const std::string good = [] {
    std::ostringstream r;
    r << "format: tunefuzz-reproducer/1\n"
      << "candidate: " << candidate_id(3, 32) << "\n"
      << "arch: sm_90\n"
      << "failure: {class: incorrect, subtype: unwritten, message: \"wrong 3\"}\n"
      << "case: {m: 129, n: 136, k: 32, lda_pad: 0, ldb_pad: 8, ldc_pad: 1, alpha: 1, beta: 0, distribution: "
         "small_int, seed: 4, c_offset: 3}\n"
      << "first_case: {m: 300, n: 272, k: 96, seed: 4}\n"
      << "seed: 77\nreproduce: \"reproduce=AbC\"\ntemplate_hash: abc\ncard: NVIDIA H200\ndriver: 580\n";
    return r.str();
  }();
  const fs::path file = fs::temp_directory_path() / ("tunefuzz-repro-" + std::to_string(getpid()) + ".yaml");
  for (const Edits& e : *rc::gen::container<std::vector<Edits>>(kDocumentsPerCase, edits())) {
    std::ofstream(file, std::ios::trunc) << mutate(good, e);
    survives("", [&](const std::string&) { read_reproducer(file); });
  }
  fs::remove(file);
}

TEST(Winner, CloseFinalistsGoToTheCheaperConfigAClearlyFasterOneWinsRegardless) {
  ProblemTiming t;
  const std::string four = candidate_id(4, 32), three = candidate_id(3, 32), deep = candidate_id(4, 64);
  // Within the best one's 2% spread: the 3-stage config is cheaper and wins although 0.5% slower.
  t.entries = {timed(four, 1.00, 1.000, 0.02), timed(three, 1.01, 1.005, 0.02),
               timed(deep, 1.02, 1.010, 0.02)};
  ASSERT_NE(t.winner(), nullptr);
  EXPECT_EQ(t.winner()->id, three);
  // Outside the tie band the faster one wins.
  t.entries = {timed(four, 1.00, 1.000, 0.005), timed(three, 1.10, 1.050, 0.005)};
  EXPECT_EQ(t.winner()->id, four);
  // Entries that were not re-timed compare on their medians; failed ones never win.
  t.entries = {timed(four, 1.2), timed(three, 1.1)};
  t.entries[1].status = "incorrect";
  EXPECT_EQ(t.winner()->id, four);
  // The card slowed down between the sequential round and the turn-taking one (an H200, 2026-11-26): a
  // candidate left out of the turns, with a sequential median below the finalists' turn-taking figures but
  // above their sequential ones, must not win on that mix.
  t.entries = {timed(four, 1.3692, 1.4455, 0.01), timed(deep, 1.4288)};
  EXPECT_EQ(t.winner()->id, four);
}

TEST(Winner, TheRatioToCublasComesFromTheTurnsWhenBothTookThem) {
  ProblemTiming t;
  t.baseline = timed("cublas", 1.3797, 1.4715);
  t.entries = {timed(candidate_id(4, 32), 1.3692, 1.4455, 0.01)};
  EXPECT_DOUBLE_EQ(t.ratio_vs_baseline(), 1.4715 / 1.4455);
  t.baseline.interleaved_median_ms = 0;  // cuBLAS not in the turns: both sequential medians
  EXPECT_DOUBLE_EQ(t.ratio_vs_baseline(), 1.3797 / 1.3692);
  t.baseline.status = "refused";
  EXPECT_EQ(t.ratio_vs_baseline(), 0);
}

int run_tune(const std::string& args, std::string& output) {
  const std::string command = TUNEFUZZ_BINARY_DIR "/bin/tune " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The committed H100 table with each template hash set to the tree's: current as far as `tune check` can tell
// without a GPU, whatever has changed in the templates since it was measured. Its winners' code digests are
// left out, as in a table written before tables recorded them: a changed template then stales its rows.
fs::path table_current_for_the_tree() {
  std::string text;
  std::istringstream lines(read(kH100Table));
  for (std::string line; std::getline(lines, line);)
    if (line.find("code_sha256: ") == std::string::npos) text += line + "\n";
  for (const KernelTemplate* t : all_templates()) {
    const std::string key = "    " + t->name + ": ";
    const size_t at = text.find(key);
    if (at == std::string::npos) continue;
    const std::string hash = KernelSource::load(TUNEFUZZ_SOURCE_DIR "/templates", t->source_file).hash();
    text.replace(at + key.size(), text.find('\n', at) - at - key.size(), hash);
  }
  const fs::path out = fs::temp_directory_path() / ("tunefuzz-current-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(out) << text;
  return out;
}

TEST(TuneCheck, ACurrentTablePassesAStaleOneFails) {
  const std::string current = table_current_for_the_tree().string();
  std::string output;
  EXPECT_EQ(run_tune("check " + current, output), 0) << output;
  std::string text = read(current);
  const size_t wgmma = text.find("    gemm_wgmma: ") + std::string("    gemm_wgmma: ").size();
  std::string old_wgmma = text;
  old_wgmma.replace(wgmma, 6, "000000");  // a table measured before gemm_wgmma.cu last changed
  const fs::path before = fs::temp_directory_path() / ("tunefuzz-before-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(before) << old_wgmma;
  output.clear();
  EXPECT_EQ(run_tune("check " + before.string(), output), 1) << output;
  EXPECT_NE(output.find("template gemm_wgmma changed"), std::string::npos) << output;
  fs::remove(before);
  // A template no winner is of: its change leaves every row as it was (the table says so and stays current).
  std::string no_winner = text;
  const size_t mma = no_winner.find("gemm_mma: ") + std::string("gemm_mma: ").size();
  no_winner.replace(mma, 6, "000000");
  const fs::path unused =
      fs::temp_directory_path() / ("tunefuzz-unused-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(unused) << no_winner;
  output.clear();
  EXPECT_EQ(run_tune("check " + unused.string(), output), 0) << output;
  EXPECT_NE(output.find("template gemm_mma changed (table 000000"), std::string::npos) << output;
  EXPECT_NE(output.find("no winner of the table is of it"), std::string::npos) << output;
  fs::remove(unused);
  // gemm_skinny's winners (two distinct, in three rows) record no code digest (the table predates it): stale.
  const size_t at = text.find("gemm_skinny: ") + std::string("gemm_skinny: ").size();
  text.replace(at, 6, "000000");
  const fs::path stale = fs::temp_directory_path() / ("tunefuzz-stale-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(stale) << text;
  output.clear();
  EXPECT_EQ(run_tune("check " + stale.string(), output), 1) << output;
  EXPECT_NE(output.find("template gemm_skinny changed"), std::string::npos) << output;
  EXPECT_NE(output.find("2 of its 2 winners"), std::string::npos) << output;
  std::ofstream(stale) << "format: tunefuzz-results/1\ngpu: [1, 2]\n";
  output.clear();
  EXPECT_EQ(run_tune("check " + stale.string(), output), 2) << output;
  fs::remove(stale);
  fs::remove(current);
}

}  // namespace
}  // namespace tunefuzz

namespace tunefuzz {
namespace {

// Regression: the fuzz test above once ran the config loader out of memory (24 GB, OOM-killed). yaml-cpp
// 0.7's LoadAll never stops producing empty documents after a plain scalar with an unclosed parenthesis; the
// loader now asks the parser for at most two documents. Run in a child process with a 1 GB address-space
// limit, so a regression fails this test instead of the machine.
TEST(MalformedInput, AnUnclosedParenthesisDoesNotRunTheConfigLoaderOutOfMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory defeats the memory limit; the plain build runs this test";
#endif
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit limit{1u << 30, 1u << 30};
    setrlimit(RLIMIT_AS, &limit);
    alarm(20);
    int code = 3;  // accepted: not a config either
    try {
      parse_config("- a: (b in (\n\"c\",\n    \"d\"\n    )  )  \n    )", "runaway.yaml");
    } catch (const Error& e) {
      code = e.kind() == ErrorKind::bad_input ? 0 : 1;
    } catch (...) {
      code = 2;
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    _exit(usage.ru_maxrss > 256 * 1024 ? 4 : code);  // a runaway reaches the limit before failing
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the loader died (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tunefuzz
