// Hostile input, as a hostile-but-fair user hands it in: generated configs, tables, journals, reproducers,
// cache entries and command lines (valid documents mutated byte by byte and field by field, alias bombs,
// truncations, huge numbers, directories, fifos with no writer, endless devices), driven through the real
// entry points in-process: tune's and fuzz's command lines (tunefuzz::cli::tune_main, fuzz_main) and the
// readers behind the steps no command reaches without a GPU (Journal::resume, read_reproducer,
// KernelCache::load). Laws:
//  - nothing crashes (a signal, an escaped exception) and nothing hangs (a time limit per input);
//  - every rejection by a command exits 2 and names the file it blames (or, for a flag, the flag);
//  - devices are never replaced by outputs.
// Inputs run in batches in child processes, each input under a time limit (alarm) and the batch under a
// memory limit (RLIMIT_AS; under AddressSanitizer its hard RSS limit), so a crash or hang is pinned on the
// input that caused it. CI runs this under ASan and UBSan (setup.sh); the counts are printed at the end.
// The regression tests of issue 17's command-line items come first.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/cli/fuzz_main.hpp"
#include "tests/support/mutate.hpp"
#include "runtime/backend/kernel_cache.hpp"
#include "tuner/campaign/journal.hpp"
#include "tuner/campaign/reproducer.hpp"
#include "tuner/cli/tune_main.hpp"
#include "tuner/common/error.hpp"
#include "runtime/templates/kernel_template.hpp"

// Under AddressSanitizer, a process past 3 GiB resident is stopped with a report: the per-batch memory limit
// (RLIMIT_AS cannot be used beside ASan's shadow memory).
extern "C" const char* __asan_default_options() {
  return "hard_rss_limit_mb=3072";
}

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- running a command in-process ------------------------------------------------------------------------

struct Outcome {
  int code = 0;
  std::string message;  ///< what the command wrote to standard error
};

/// Runs `tool` (tune_main or fuzz_main) on `args` with standard output discarded and standard error captured.
Outcome call(int (*tool)(int, char**), const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), name);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = ::dup(STDOUT_FILENO), saved_err = ::dup(STDERR_FILENO);
  const int null = ::open("/dev/null", O_WRONLY);
  FILE* capture = std::tmpfile();
  ::dup2(null, STDOUT_FILENO);
  ::dup2(::fileno(capture), STDERR_FILENO);
  Outcome out;
  out.code = tool(static_cast<int>(args.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  ::close(saved_out);
  ::close(saved_err);
  ::close(null);
  std::rewind(capture);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, capture)) > 0;) out.message.append(buffer, n);
  std::fclose(capture);
  return out;
}

Outcome tune(const std::vector<std::string>& args) {
  return call(cli::tune_main, "tune", args);
}
Outcome fuzz(const std::vector<std::string>& args) {
  return call(cli::fuzz_main, "fuzz", args);
}

const fs::path kSource = TUNEFUZZ_SOURCE_DIR;

class Scratch : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("tunefuzz-hostile-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(directory_ / name, std::ios::binary) << text;
    return directory_ / name;
  }
  fs::path directory_;
};

// ---- regression tests of issue 17's command-line items -----------------------------------------------------

// Flags that ask for nothing (no cases, no budget) or for the impossible are refused before any compile or
// GPU probe: they once compiled every candidate first and then failed on the GPU check (exit 3).
TEST_F(Scratch, BadFlagsAreRefusedUpFrontWithExitTwo) {
  const std::string config = (kSource / "configs" / "smoke.yaml").string();
  const std::vector<std::vector<std::string>> cases = {
      {"run", config, "--cases", "0"},      {"run", config, "--cases", "-5"},
      {"run", config, "--budget", "0"},     {"run", config, "--seed", "-1"},
      {"run", config, "--rounds", "0"},     {"run", config, "--rounds", "-1"},
      {"run", config, "--seed", "18446744073709551616"},
      {"mutants", config, "--timeout", "-1"}, {"replay", config, "--sanitize", "bogus"},
      {"mutants", config, "--sanitize", "bogus"}, {"run", config, "-j", "100000"}};
  for (const auto& args : cases) {
    const Outcome out = fuzz(args);
    EXPECT_EQ(out.code, 2) << args[2] << " " << args[3] << ": " << out.message;
    EXPECT_EQ(out.message.find("compiling"), std::string::npos) << out.message;
  }
  const Outcome jobs = tune({"compile", config, "-j", "100000"});
  EXPECT_EQ(jobs.code, 2) << jobs.message;
  EXPECT_NE(jobs.message.find("--jobs"), std::string::npos) << jobs.message;
}

// `arch: sm_35` once exited 0 after one NVRTC_ERROR_INVALID_OPTION per candidate: a target the compiler does
// not support is one error at gpu.arch, before anything compiles.
TEST_F(Scratch, AnArchTheCompilerDoesNotSupportIsOneErrorAtGpuArch) {
  std::string text = read_text(kSource / "configs" / "smoke.yaml");
  text.replace(text.find("arch: sm_90"), 11, "arch: sm_35");
  const fs::path config = write("old.yaml", text);
  const Outcome out = tune({"compile", config.string()});
  EXPECT_EQ(out.code, 2) << out.message;
  EXPECT_NE(out.message.find(config.string() + ":5:9: gpu.arch: "), std::string::npos) << out.message;
  EXPECT_NE(out.message.find("cannot compile for sm_35"), std::string::npos) << out.message;
}

TEST_F(Scratch, TuneVersionPrintsTheVersion) {
  const Outcome out = tune({"--version"});
  EXPECT_EQ(out.code, 0) << out.message;
}

// A reproducer is checked whole before a GPU is looked for: each of these once reached the GPU check and
// exited 3. The error names the file and the field.
TEST_F(Scratch, InvalidReproducersAreRefusedBeforeTheGpuNamingTheField) {
  const std::string id =
      "gemm_mma/bf16-bf16/BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3,VEC=8,GROUP_M=8,SWIZZLE=1,PACK=0,SPLIT_K=1,"
      "PERSISTENT=0";
  const auto reproducer = [&](const std::string& candidate, const std::string& arch, const std::string& seed,
                              const std::string& m, const std::string& pad) {
    return "format: tunefuzz-reproducer/1\ncandidate: \"" + candidate + "\"\narch: \"" + arch +
           "\"\nfailure: {class: incorrect, subtype: \"\", message: x}\ncase: {m: " + m +
           ", n: 8, k: 8, lda_pad: " + pad + ", seed: 1}\nseed: " + seed + "\n";
  };
  ASSERT_NO_THROW(read_reproducer(write("good.yaml", reproducer(id, "sm_90", "7", "8", "0"))));
  struct Bad {
    std::string text, field;
  };
  std::string mutant = id + "/mutant=999", negative = id, fp32 = id;
  negative.replace(negative.find("BM=128"), 6, "BM=-128");
  fp32.replace(fp32.find("bf16-bf16"), 9, "fp32-fp32");
  const std::vector<Bad> bad = {
      {reproducer(id, "sm_1000", "7", "8", "0"), "arch"},
      {reproducer(id, "sm_90 --foo", "7", "8", "0"), "arch"},
      {reproducer(mutant, "sm_90", "7", "8", "0"), "candidate"},
      {reproducer(negative, "sm_90", "7", "8", "0"), "candidate"},
      {reproducer(fp32, "sm_90", "7", "8", "0"), "candidate"},
      {reproducer(id, "sm_90", "-1", "8", "0"), "seed"},
      {reproducer(id, "sm_90", "18446744073709551616", "8", "0"), "seed"},
      {reproducer(id, "sm_90", "7", "9223372036854775807", "0"), "case.m"},
      {reproducer(id, "sm_90", "7", "8", "4611686018427387904"), "case.lda_pad"},
  };
  for (const Bad& b : bad) {
    const fs::path file = write("bad.yaml", b.text);
    const Outcome out = fuzz({"replay", file.string()});
    EXPECT_EQ(out.code, 2) << b.text << out.message;
    EXPECT_NE(out.message.find(file.string() + ":"), std::string::npos) << out.message;
    EXPECT_NE(out.message.find(": " + b.field + ": "), std::string::npos) << b.field << ": " << out.message;
    EXPECT_EQ(out.message.find("GPU"), std::string::npos) << out.message;
  }
}

// An output is written by rename, which once replaced /dev/full with a regular file. A target that is not a
// regular file is refused.
TEST_F(Scratch, OutputsNeverReplaceADevice) {
  const std::string table = (kSource / "results" / "h100.yaml").string();
  const Outcome out = tune({"export", table, "--format", "json", "-o", "/dev/full"});
  EXPECT_EQ(out.code, 2) << out.message;
  EXPECT_NE(out.message.find("not a regular file"), std::string::npos) << out.message;
  struct stat status {};
  ASSERT_EQ(::stat("/dev/full", &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode)) << "/dev/full was replaced";
  fs::create_directories(directory_ / "a-directory");
  EXPECT_EQ(tune({"merge", table, table, "-o", (directory_ / "a-directory").string()}).code, 2);
}

/// The h100 table with its first problem renamed to `name` (a valid table: the end line still counts).
std::string table_with_name(const std::string& name) {
  std::string text = read_text(kSource / "results" / "h100.yaml");
  text.replace(text.find("  - name: square_2048"), 21, "  - name: \"" + name + "\"");
  return text;
}

// JSON output is valid UTF-8 whatever the names hold, and `tune show` escapes control characters instead of
// sending them to the terminal (a newline broke the columns, escape codes reached the terminal).
TEST_F(Scratch, NamesReachJsonAsUtf8AndTheTerminalEscaped) {
  // A raw 0xff byte (not UTF-8), then YAML escapes for ESC and a newline.
  const fs::path table = write("t.yaml", table_with_name("bad\xff\\e[31mred\\nline"));
  const fs::path json = directory_ / "t.json";
  ASSERT_EQ(tune({"export", table.string(), "--format", "json", "-o", json.string()}).code, 0);
  const std::string text = read_text(json);
  EXPECT_NE(text.find("bad\\ufffd\\u001b[31mred\\nline"), std::string::npos) << text.substr(0, 2000);
  EXPECT_EQ(text.find('\xff'), std::string::npos);
  fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  FILE* capture = std::tmpfile();
  ::dup2(::fileno(capture), STDOUT_FILENO);
  std::vector<std::string> args = {"tune", "show", table.string()};
  std::vector<char*> argv = {args[0].data(), args[1].data(), args[2].data(), nullptr};
  const int code = cli::tune_main(3, argv.data());
  fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::rewind(capture);
  std::string shown;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, capture)) > 0;) shown.append(buffer, n);
  std::fclose(capture);
  EXPECT_EQ(code, 0);
  EXPECT_NE(shown.find("bad\\xff\\x1b[31mred\\x0aline"), std::string::npos) << shown;
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
}

// ---- the harness ---------------------------------------------------------------------------------------------

/// One generated input: files to create (content, or a kind of odd file) and what to run on them.
struct Input {
  std::string kind;                          ///< config, explain, table, journal, reproducer, cache, odd, argv
  std::map<std::string, std::string> files;  ///< name → content
  std::string odd;                           ///< for kind odd: directory, fifo, zero, huge, bomb
  std::vector<std::string> args;             ///< for commands; "@name" stands for a file's path
  std::string tool;                          ///< tune, fuzz or library
};

/// A value a field may be given instead of its own.
const std::vector<std::string>& hostile_values() {
  static const std::vector<std::string> values = {
      "0", "-1", "-9223372036854775808", "9223372036854775807", "18446744073709551616", "72057594037927936",
      "1e999", ".nan", "-.inf", "\"\"", "''", "[]", "{}", "[1, [2, [3]]]", "~", "true", "\"\\x00\"",
      "\"sm_90 --foo\"", "sm_1000", "fp32", "gfx942", "&x [*x]", "*nope", "\"\\xff\\xfe\"", "!!binary AAAA",
      "|\n  multi\n  line", "2147483648", "65537", "\"unclosed", "a: b: c", "@", "%TAG", "\t", "null"};
  return values;
}

/// `text` with the value of its `line`-th `key: value` line replaced by a hostile one: a valid document
/// mutated field by field.
std::string mutate_field(const std::string& text, size_t line, size_t value) {
  std::vector<size_t> starts;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const size_t colon = text.find(": ", at);
    if (colon != std::string::npos && colon < end) starts.push_back(colon + 2);
    at = end + 1;
  }
  if (starts.empty()) return text;
  const size_t from = starts[line % starts.size()];
  size_t to = from;
  while (to < text.size() && text[to] != '\n' && text[to] != ',' && text[to] != '}') ++to;
  std::string out = text;
  out.replace(from, to - from, hostile_values()[value % hostile_values().size()]);
  return out;
}

/// A document's hostile variants: byte edits, a field mutation, or a truncation.
rc::Gen<std::string> variant_of(const std::string& valid) {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::container<test::Edits>(rc::gen::pair(rc::gen::inRange<size_t>(0, 1u << 20),
                                                                 rc::gen::inRange(0, 4))),
                   [valid](const test::Edits& edits) { return test::mutate(valid, edits); }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange<size_t>(0, 4096), rc::gen::inRange<size_t>(0, 1024)),
                   [valid](const std::pair<size_t, size_t>& p) { return mutate_field(valid, p.first, p.second); }),
      rc::gen::map(rc::gen::inRange<size_t>(0, valid.size()),
                   [valid](size_t at) { return valid.substr(0, at); }));
}

/// A billion-laughs document of `levels` levels of `width` aliases each, under an unknown key.
std::string alias_bomb(int levels, int width) {
  std::string text = "bomb0: &a0 [lol, lol]\n";
  for (int level = 1; level < levels; ++level) {
    text += "bomb" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < width; ++i) text += (i ? ", *a" : "*a") + std::to_string(level - 1);
    text += "]\n";
  }
  return text;
}

struct Corpus {
  std::string config, table, journal, reproducer;
};

/// The valid documents mutations start from: small, so that ten thousand inputs run in minutes under ASan.
Corpus corpus() {
  Corpus c;
  c.config = read_text(kSource / "configs" / "smoke.yaml");
  // The first two rows of the H100 table, with their end line.
  const std::string table = read_text(kSource / "results" / "h100.yaml");
  c.table = table.substr(0, table.find("  - name: square_6144")) + "# end: 2 problems\n";
  const std::string id =
      "gemm_mma/bf16-bf16/BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3,VEC=8,GROUP_M=8,SWIZZLE=1,PACK=0,SPLIT_K=1,"
      "PERSISTENT=0";
  c.journal = "{event: campaign, config_sha256: \"abc\"}\n{event: fuzz_started, id: \"" + id +
              "\"}\n{event: fuzzed, id: \"" + id +
              "\", seed: 12, result: {passed: false, cases_run: 3, coverage: {tiny: 1}, failure: {class: "
              "wrong_result, first_case: {m: 3, n: 4, k: 5, seed: 9}, shrunk_case: {m: 1, n: 1, k: 1}}}}\n"
              "{event: time_started, problem: p}\n{event: timed, problem: p, timing: {baseline: {id: cublas, "
              "status: timed, median_ms: 1.5}, entries: [{id: \"" +
              id + "\", status: timed, median_ms: 1.0}]}, candidates: [\"" + id + "\"]}\n";
  c.reproducer = "format: tunefuzz-reproducer/1\ncandidate: \"" + id +
                 "\"\narch: sm_90\nfailure: {class: incorrect, subtype: bits, message: x}\ncase: {m: 17, n: "
                 "8, k: 40, lda_pad: 8, ldb_pad: 0, ldc_pad: 0, alpha: 1, beta: 0, distribution: normal, seed: "
                 "3, layout: RC}\nfirst_case: {m: 90, n: 8, k: 40}\ncases_until_failure: 4\nseed: 99\n";
  return c;
}

rc::Gen<Input> inputs(const Corpus& c) {
  const auto document = [](std::string kind, std::string tool, rc::Gen<std::string> text,
                           rc::Gen<std::vector<std::string>> args) {
    return rc::gen::map(rc::gen::pair(std::move(text), std::move(args)),
                        [kind, tool](const std::pair<std::string, std::vector<std::string>>& p) {
                          Input in;
                          in.kind = kind;
                          in.tool = tool;
                          in.files["doc"] = p.first;
                          in.args = p.second;
                          return in;
                        });
  };
  using Args = std::vector<std::string>;
  const auto one_of_args = [](std::vector<Args> options) { return rc::gen::elementOf(options); };
  const rc::Gen<std::string> parameter = rc::gen::elementOf(std::vector<std::string>{
      "BM", "BN", "BK", "WM", "WN", "STAGES", "VEC", "SWIZZLE", "PACK", "SPLIT_K", "GROUP_M", "TM", "XX"});
  const rc::Gen<std::string> number =
      rc::gen::oneOf(rc::gen::map(rc::gen::inRange(-300, 300), [](int v) { return std::to_string(v); }),
                     rc::gen::elementOf(hostile_values()),
                     rc::gen::map(rc::gen::arbitrary<int64_t>(), [](int64_t v) { return std::to_string(v); }));
  const rc::Gen<std::string> assignment = rc::gen::map(
      rc::gen::container<std::vector<std::pair<std::string, std::string>>>(rc::gen::pair(parameter, number)),
      [](const std::vector<std::pair<std::string, std::string>>& parts) {
        std::string out;
        for (const auto& [name, value] : parts) out += (out.empty() ? "" : ",") + name + "=" + value;
        return out;
      });
  const rc::Gen<std::string> bomb = rc::gen::map(
      rc::gen::pair(rc::gen::inRange(2, 12), rc::gen::inRange(2, 12)),
      [](const std::pair<int, int>& p) { return alias_bomb(p.first, p.second); });
  return rc::gen::weightedOneOf<Input>({
      {6, document("config", "tune", rc::gen::oneOf(variant_of(c.config), rc::gen::map(bomb, [c](std::string b) {
                                         return c.config + b;
                                       })),
                   one_of_args({{"space", "@doc"}, {"space", "@doc", "--json"}}))},
      {2, rc::gen::map(assignment,
                       [](const std::string& a) {
                         Input in;
                         in.kind = "explain";
                         in.tool = "tune";
                         in.args = {"space", (kSource / "configs" / "smoke.yaml").string(), "--explain", a};
                         return in;
                       })},
      {6, document("table", "tune",
                   rc::gen::oneOf(variant_of(c.table),
                                  rc::gen::map(bomb, [c](std::string b) { return c.table.substr(0, c.table.rfind("# end")) + b + "# end: 2 problems\n"; })),
                   one_of_args({{"show", "@doc"},
                                {"show", "@doc", "--json"},
                                {"export", "@doc", "--format", "json", "-o", "@out"},
                                {"export", "@doc", "--format", "csv", "-o", "@out"},
                                {"export", "@doc", "--format", "header", "-o", "@out"},
                                {"merge", "@doc", "@doc", "-o", "@out"}}))},
      {4, document("journal", "library", variant_of(c.journal), rc::gen::just(Args{}))},
      {4, document("reproducer", "library", variant_of(c.reproducer), rc::gen::just(Args{}))},
      {3, document("cache", "library", rc::gen::arbitrary<std::string>(), rc::gen::just(Args{}))},
      {2, rc::gen::map(rc::gen::pair(rc::gen::elementOf(std::vector<std::string>{"directory", "fifo", "zero",
                                                                                 "huge", "symlink", "empty"}),
                                     rc::gen::elementOf(std::vector<Args>{{"tune", "space", "@odd"},
                                                                          {"tune", "compile", "@odd"},
                                                                          {"tune", "run", "@odd"},
                                                                          {"tune", "show", "@odd"},
                                                                          {"tune", "check", "@odd"},
                                                                          {"tune", "report", "@odd", "-o", "@out"},
                                                                          {"fuzz", "replay", "@odd"},
                                                                          {"fuzz", "run", "@odd"},
                                                                          {"fuzz", "mutants", "@odd"}})),
                       [](const std::pair<std::string, Args>& p) {
                         Input in;
                         in.kind = "odd";
                         in.odd = p.first;
                         in.tool = p.second.front();
                         in.args.assign(p.second.begin() + 1, p.second.end());
                         return in;
                       })},
      {3, rc::gen::map(rc::gen::container<Args>(rc::gen::oneOf(
                           rc::gen::elementOf(std::vector<std::string>{
                               "space", "compile", "run", "show", "export", "merge", "report", "check", "replay",
                               "mutants", "--json", "--explain", "--template", "-j", "--jobs", "--format", "-o",
                               "--cases", "--budget", "--rounds", "--seed", "--timeout", "--sanitize", "--resume", "--help", "--mutant",
                               "--version", "--", "-", "", "@odd", "@doc"}),
                           number)),
                       [](const Args& args) {
                         Input in;
                         in.kind = "argv";
                         in.odd = "directory";
                         in.files["doc"] = "not: [a config";
                         in.tool = args.size() % 2 ? "tune" : "fuzz";
                         in.args = args;
                         return in;
                       })},
  });
}

// ---- running one input ------------------------------------------------------------------------------------

/// What one input did: its exit code (or -1 for a library entry) and its message.
struct Result {
  int code = 0;
  std::string message;
  bool lawful = true;  ///< the rejection obeyed the law (exit 2 naming a file or flag)
};

/// Creates the odd file of kind `odd` at `path`.
void make_odd(const std::string& odd, const fs::path& path) {
  if (odd == "directory") fs::create_directories(path);
  if (odd == "fifo") ::mkfifo(path.c_str(), 0600);
  if (odd == "zero") fs::create_symlink("/dev/zero", path);
  if (odd == "symlink") fs::create_symlink("/dev/full", path);
  if (odd == "empty") std::ofstream(path).flush();
  if (odd == "huge") {
    std::ofstream(path).put('a');
    fs::resize_file(path, int64_t{256} << 20);  // sparse: 256 MiB that cost no disk
  }
}

/// Whether a command's rejection names a file it read or wrote, or the flag it refused.
bool names_its_cause(const Outcome& out, const std::vector<std::string>& paths) {
  for (const std::string& p : paths)
    if (!p.empty() && out.message.find(p) != std::string::npos) return true;
  // CLI11's own: a flag, a missing or excess argument.
  static const std::regex usage(R"((--[a-z]|-[a-z], |required|subcommand|arguments? |Run with --help|not in range))");
  return std::regex_search(out.message, usage);
}

Result run_command(const Input& in, const fs::path& directory) {
  std::vector<std::string> args = in.args, paths;
  for (std::string& a : args) {
    if (a.size() > 1 && a[0] == '@') {
      a = (directory / a.substr(1)).string();
      paths.push_back(a);
    }
  }
  const Outcome out = in.tool == "tune" ? tune(args) : fuzz(args);
  Result r{out.code, out.message.substr(0, out.message.find('\n')), true};
  // Exit codes: 0 (accepted), 2 (rejected); `check` says 1 for a stale table and 3 without a GPU, a replay of a
  // valid reproducer or a campaign on a valid config reaches the GPU check (3) or runs (0, 1).
  const bool reaches_gpu = std::find(args.begin(), args.end(), "check") != args.end() ||
                           std::find(args.begin(), args.end(), "replay") != args.end();
  // A file that does not exist is an I/O error (exit 1) naming it; no GPU is exit 3, said so. A valid config
  // with a problem no candidate accepts fails `tune space` (exit 1) naming the problem: empty work.
  if (out.code == 2)
    r.lawful = names_its_cause(out, paths);
  else if (out.code == 1)
    r.lawful = (reaches_gpu && out.message.find("stale") != std::string::npos) ||
               out.message.find("No such file") != std::string::npos ||
               out.message.find("no candidate accepts it") != std::string::npos;
  else if (out.code == 3)
    r.lawful = out.message.find("GPU") != std::string::npos;
  else
    r.lawful = out.code == 0;
  return r;
}

/// A library reader on a generated document: it reads it or throws Error{bad_input} naming the file.
Result run_library(const Input& in, const fs::path& directory) {
  const fs::path doc = directory / "doc";
  Result r{-1, "", true};
  try {
    if (in.kind == "journal") {
      const Journal journal = Journal::resume(doc, "abc");
      for (const auto& [id, times] : journal.interrupted_fuzz()) journal.fuzzed(id);
      for (const auto& [problem, times] : journal.interrupted_time()) journal.time_interruptions(problem);
      journal.quarantined();
    } else if (in.kind == "reproducer") {
      const Reproducer reproducer = read_reproducer(doc);
      parse_candidate_id(reproducer.candidate).kernel_template->compile_arch(reproducer.arch);
    } else {  // a cache entry: a valid one, its metadata replaced by the generated text or its image by a directory
      const KernelCache cache(directory / "cache");
      CompiledKernel kernel;
      kernel.key = "k";
      kernel.image = "image";
      kernel.resources["tf_gemm_rr"] = KernelResources{};
      cache.store(kernel);
      const std::string& text = in.files.at("doc");
      if (!text.empty() && text[0] % 3 == 0) {
        fs::remove(cache.image_path("k"));
        fs::create_directories(cache.image_path("k"));
      } else {
        std::ofstream(directory / "cache" / "k.yaml", std::ios::trunc) << text;
      }
      if (cache.load("k")) r.message = "(loaded)";
      cache.store(kernel);  // repairs whatever was put in the entry's place
      if (!cache.load("k")) {
        r.lawful = false;
        r.message = "a stored entry did not load back";
      }
    }
  } catch (const Error& e) {
    r.message = e.what();
    r.lawful = (e.kind() == ErrorKind::bad_input || e.kind() == ErrorKind::unsupported) &&
               r.message.starts_with(doc.string());
  }
  return r;
}

Result run_input(const Input& in, const fs::path& directory) {
  fs::remove_all(directory);
  fs::create_directories(directory);
  for (const auto& [name, text] : in.files) std::ofstream(directory / name, std::ios::binary) << text;
  if (!in.odd.empty()) make_odd(in.odd, directory / "odd");
  return in.tool == "library" ? run_library(in, directory) : run_command(in, directory);
}

// ---- batches in child processes ---------------------------------------------------------------------------

struct Tally {
  int64_t inputs = 0, accepted = 0, rejected = 0, crashes = 0, hangs = 0, unlawful = 0;
  std::set<std::string> messages;  ///< distinct rejection messages, numbers and paths masked
  std::vector<std::string> failures;
};

std::string masked(std::string message, const std::string& directory) {
  for (size_t at; (at = message.find(directory)) != std::string::npos;) message.replace(at, directory.size(), "DIR");
  static const std::regex digits("[0-9]+");
  return std::regex_replace(message, digits, "N");
}

std::string describe(const Input& in) {
  std::string out = in.kind + " " + in.tool;
  for (const std::string& a : in.args) out += " '" + a + "'";
  if (!in.odd.empty()) out += " odd=" + in.odd;
  for (const auto& [name, text] : in.files) out += "\n--- " + name + " ---\n" + text.substr(0, 3000);
  return out;
}

constexpr unsigned kSecondsPerInput = 20;

/// Runs inputs[begin, end) in a child process; fills `tally` and returns the index after the last input the
/// child finished (a crash or hang is charged to that input).
size_t run_batch(const std::vector<Input>& inputs, size_t begin, size_t end, const fs::path& directory,
                 Tally& tally) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe");
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
#ifndef __SANITIZE_ADDRESS__
    const rlimit memory{rlim_t{4} << 30, rlim_t{4} << 30};  // 4 GiB of address space per batch
    ::setrlimit(RLIMIT_AS, &memory);
#endif
    for (size_t i = begin; i < end; ++i) {
      ::alarm(kSecondsPerInput);  // a hang ends the child with SIGALRM
      std::string line;
      try {
        const Result r = run_input(inputs[i], directory);
        line = std::to_string(r.code) + " " + (r.lawful ? "1" : "0") + " ";
        std::string message = r.message;
        std::replace(message.begin(), message.end(), '\n', ' ');
        line += message + "\n";
      } catch (const std::exception& e) {  // an exception the entry point let escape: a crash of the tool
        line = "escaped 0 " + std::string(e.what()) + "\n";
      }
      ::alarm(0);
      if (::write(pipe_fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(3);
    }
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string received;
  char buffer[65536];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) received.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::istringstream lines(received);
  size_t index = begin;
  for (std::string line; std::getline(lines, line); ++index) {
    ++tally.inputs;
    const std::string code = line.substr(0, line.find(' '));
    const bool lawful = line.size() > code.size() + 1 && line[code.size() + 1] == '1';
    const std::string message = line.size() > code.size() + 3 ? line.substr(code.size() + 3) : "";
    if (code == "escaped") {
      ++tally.crashes;
      tally.failures.push_back("exception escaped: " + message + "\n" + describe(inputs[index]));
      continue;
    }
    (code == "0" ? tally.accepted : tally.rejected) += 1;
    if (code != "0" && !message.empty()) tally.messages.insert(masked(message, directory.string()));
    if (!lawful) {
      ++tally.unlawful;
      tally.failures.push_back("exit " + code + ": " + message + "\n" + describe(inputs[index]));
    }
  }
  if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
    ++tally.inputs;
    const bool hang = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
    ++(hang ? tally.hangs : tally.crashes);
    tally.failures.push_back(std::string(hang ? "hang" : "crash") + " (status " + std::to_string(status) +
                             ") on input " + std::to_string(index) + ": " + describe(inputs[index]));
    // The input's files, to replay it by hand: TUNEFUZZ_HOSTILE_KEEP names a folder.
    if (const char* keep = std::getenv("TUNEFUZZ_HOSTILE_KEEP"))
      for (const auto& [name, text] : inputs[index].files)
        std::ofstream(fs::path(keep) / (std::to_string(index) + "-" + name), std::ios::binary) << text;
    return index + 1;
  }
  return index;
}

TEST(Hostile, TenThousandInputsNeitherCrashNorHangAndEveryRejectionNamesItsCause) {
  const int64_t count = std::getenv("TUNEFUZZ_HOSTILE_INPUTS") ? std::atoll(std::getenv("TUNEFUZZ_HOSTILE_INPUTS"))
                                                                : 10'000;
  const uint64_t seed = std::getenv("TUNEFUZZ_HOSTILE_SEED") ? std::strtoull(std::getenv("TUNEFUZZ_HOSTILE_SEED"), nullptr, 10)
                                                             : 17;
  // No worker, no cache of the user's: a valid replay reaches the probe and stops there (exit 3).
  ::setenv("TUNEFUZZ_CACHE_DIR", (fs::temp_directory_path() / ("tunefuzz-hostile-cache-" + std::to_string(::getpid()))).c_str(), 1);
  ::setenv("TUNEFUZZ_WORKER", "/nonexistent/tunefuzz-worker", 1);
  const Corpus c = corpus();
  const rc::Gen<Input> generator = inputs(c);
  std::vector<Input> all;
  rc::Random random(seed);
  for (int64_t i = 0; i < count; ++i) {
    all.push_back(generator(random.split(), static_cast<int>(i % 100)).value());
  }
  const fs::path directory =
      fs::temp_directory_path() / ("tunefuzz-hostile-" + std::to_string(::getpid()));
  Tally tally;
  constexpr size_t kBatch = 500;
  for (size_t begin = 0; begin < all.size();)
    begin = run_batch(all, begin, std::min(all.size(), begin + kBatch), directory, tally);
  fs::remove_all(directory);
  struct stat status {};
  EXPECT_TRUE(::stat("/dev/full", &status) == 0 && S_ISCHR(status.st_mode)) << "/dev/full was replaced";
  EXPECT_TRUE(::stat("/dev/null", &status) == 0 && S_ISCHR(status.st_mode)) << "/dev/null was replaced";
  std::printf("hostile inputs: %lld (seed %llu), accepted %lld, rejected %lld, crashes %lld, hangs %lld, "
              "rejections not naming their cause %lld, distinct rejection messages %zu\n",
              static_cast<long long>(tally.inputs), static_cast<unsigned long long>(seed),
              static_cast<long long>(tally.accepted), static_cast<long long>(tally.rejected),
              static_cast<long long>(tally.crashes), static_cast<long long>(tally.hangs),
              static_cast<long long>(tally.unlawful), tally.messages.size());
  if (std::getenv("TUNEFUZZ_HOSTILE_MESSAGES"))
    for (const std::string& m : tally.messages) std::printf("  %s\n", m.c_str());
  EXPECT_EQ(tally.inputs, count);
  EXPECT_EQ(tally.crashes, 0);
  EXPECT_EQ(tally.hangs, 0);
  EXPECT_EQ(tally.unlawful, 0);
  for (size_t i = 0; i < std::min<size_t>(tally.failures.size(), 5); ++i) ADD_FAILURE() << tally.failures[i];
}

}  // namespace
}  // namespace tunefuzz
