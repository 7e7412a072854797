// Loads a tuning campaign's YAML config into tunefuzz::Config. Every defect (syntax, unknown or repeated
// key, wrong type, out-of-range value, missing key) becomes Error{bad_input} naming the file, the 1-based
// line and column of the offending node and its dotted field path. Schema: docs/configs.md.
#include "tuner/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>

#include "tuner/common/input_file.hpp"
#include "tuner/config/yaml_input.hpp"

namespace tunefuzz {
namespace {

// ---------------------------------------------------------------------------------------------------
// Locations and failures

/// A node and the dotted path it is reported under. `key_mark` is where the node's mapping key stands:
/// an empty value has no useful mark of its own (yaml-cpp points it at the next token), so it is
/// reported at its key.
struct Field {
  YAML::Node node;
  std::string path;
  std::optional<YAML::Mark> key_mark;
};

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string index_path(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

/// The file name every location of one document carries.
struct Context {
  std::string file;
};

SourceLocation locate(const Context& context, const YAML::Mark& mark, const std::string& path) {
  SourceLocation where{context.file, 0, 0, path};
  if (!mark.is_null() && mark.line >= 0) {  // yaml-cpp marks are 0-based
    where.line = mark.line + 1;
    where.column = mark.column + 1;
  }
  return where;
}

SourceLocation locate(const Context& context, const Field& field) {
  const bool empty_value = field.node.IsNull() && field.key_mark.has_value();
  return locate(context, empty_value ? *field.key_mark : field.node.Mark(), field.path);
}

[[noreturn]] void fail(const SourceLocation& where, const std::string& message) {
  throw Error(ErrorKind::bad_input, message, where);
}

[[noreturn]] void fail(const Context& context, const Field& field, const std::string& message) {
  fail(locate(context, field), message);
}

/// What a node holds, for "expected X, got Y" messages.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") return "the quoted string \"" + node.Scalar() + "\"";
      return "'" + node.Scalar() + "'";
    default:
      return "an empty value";
  }
}

std::string join(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view word : words) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Scalars. Numbers are decimal; a quoted scalar is a string, never a number or a bool.

/// Sign and magnitude of a decimal integer literal; nullopt when the text is not one.
struct IntegerText {
  bool negative = false;
  uint64_t magnitude = 0;
  bool overflow = false;
};

std::optional<IntegerText> parse_integer_text(std::string_view text) {
  IntegerText out;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    out.negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const auto result = std::from_chars(text.data(), text.data() + text.size(), out.magnitude);
  out.overflow = result.ec == std::errc::result_out_of_range;
  return out;
}

const std::string& plain_scalar(const Context& context, const Field& field, const std::string& expected) {
  if (!field.node.IsScalar() || field.node.Tag() == "!") {
    std::string message = "expected " + expected + ", got " + describe(field.node);
    if (field.node.IsScalar()) message += " (remove the quotes)";
    fail(context, field, message);
  }
  return field.node.Scalar();
}

int64_t read_integer(const Context& context, const Field& field) {
  const std::string& text = plain_scalar(context, field, "an integer");
  const auto parsed = parse_integer_text(text);
  if (!parsed) fail(context, field, "expected an integer, got '" + text + "'");
  constexpr uint64_t max_positive = std::numeric_limits<int64_t>::max();
  if (parsed->overflow || parsed->magnitude > max_positive + (parsed->negative ? 1 : 0)) {
    fail(context, field, "integer out of range: '" + text + "' does not fit in a signed 64-bit integer");
  }
  // Negate in unsigned arithmetic so that -2^63 converts without overflow.
  return parsed->negative ? static_cast<int64_t>(0 - parsed->magnitude)
                          : static_cast<int64_t>(parsed->magnitude);
}

/// An integer in [minimum, maximum]: every numeric field has a range, so no figure downstream overflows.
int64_t read_integer_in(const Context& context, const Field& field, int64_t minimum, int64_t maximum) {
  const int64_t value = read_integer(context, field);
  if (value < minimum) {
    fail(context, field, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(value));
  }
  if (value > maximum) {
    fail(context, field, "must be <= " + std::to_string(maximum) + ", got " + std::to_string(value));
  }
  return value;
}

uint64_t read_unsigned(const Context& context, const Field& field) {
  const std::string& text = plain_scalar(context, field, "an unsigned integer");
  const auto parsed = parse_integer_text(text);
  if (!parsed) fail(context, field, "expected an unsigned integer, got '" + text + "'");
  if (parsed->negative && (parsed->magnitude != 0 || parsed->overflow)) {
    fail(context, field, "must be >= 0, got " + text);
  }
  if (parsed->overflow) {
    fail(context, field, "integer out of range: '" + text + "' does not fit in an unsigned 64-bit integer");
  }
  return parsed->magnitude;
}

bool is_decimal_number(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  size_t i = 0, digits = 0;
  auto skip_digits = [&] {
    size_t count = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++count;
    return count;
  };
  digits += skip_digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    digits += skip_digits();
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (skip_digits() == 0) return false;
  }
  return i == text.size();
}

bool is_yaml_infinity_or_nan(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return text == ".inf" || text == ".Inf" || text == ".INF" || text == ".nan" || text == ".NaN" ||
         text == ".NAN";
}

double read_finite_number(const Context& context, const Field& field) {
  const std::string& text = plain_scalar(context, field, "a number");
  if (is_yaml_infinity_or_nan(text)) fail(context, field, "must be finite, got " + text);
  if (!is_decimal_number(text)) fail(context, field, "expected a number, got '" + text + "'");
  const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
  double value = 0;
  const auto result = std::from_chars(begin, text.data() + text.size(), value);
  if (result.ec != std::errc() || !std::isfinite(value)) {
    fail(context, field, "must be finite, got " + text);
  }
  return value;
}

bool read_bool(const Context& context, const Field& field) {
  const std::string& text = plain_scalar(context, field, "true or false");
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail(context, field, "expected true or false, got '" + text + "'");
}

std::string read_string(const Context& context, const Field& field) {
  if (!field.node.IsScalar()) fail(context, field, "expected a string, got " + describe(field.node));
  if (field.node.Scalar().empty()) fail(context, field, "must not be empty");
  return field.node.Scalar();
}

// ---------------------------------------------------------------------------------------------------
// Maps and lists

/// The entries of one YAML map. Construction rejects a node that is not a map, a key outside `allowed`
/// (when given) and a key given twice (yaml-cpp keeps both and would silently use the first).
class Section {
 public:
  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    Field value;
  };

  Section(const Context& context, Field field, std::optional<std::vector<std::string_view>> allowed)
      : context_(context), field_(std::move(field)) {
    if (!field_.node.IsMap()) fail(context_, field_, "expected a map, got " + describe(field_.node));
    for (auto it = field_.node.begin(); it != field_.node.end(); ++it) {
      add(it->first, it->second, allowed);
    }
  }

  const std::vector<Entry>& entries() const { return entries_; }

  std::optional<Field> find(std::string_view key) const {
    for (const Entry& entry : entries_) {
      if (entry.key == key) return entry.value;
    }
    return std::nullopt;
  }

  /// The value of `key`; when absent, fails at the map that lacks it.
  Field require(std::string_view key) const {
    if (auto value = find(key)) return *value;
    fail(locate(context_, field_.node.Mark(), child_path(field_.path, key)),
         "missing required key '" + std::string(key) + "'");
  }

 private:
  void add(const YAML::Node& key, const YAML::Node& value,
           const std::optional<std::vector<std::string_view>>& allowed) {
    if (!key.IsScalar()) {
      fail(locate(context_, key.Mark(), field_.path), "expected a key name, got " + describe(key));
    }
    const std::string& name = key.Scalar();
    const SourceLocation where = locate(context_, key.Mark(), child_path(field_.path, name));
    if (allowed && std::find(allowed->begin(), allowed->end(), name) == allowed->end()) {
      fail(where, "unknown key '" + name + "' (expected one of: " + join(*allowed) + ")");
    }
    for (const Entry& entry : entries_) {
      if (entry.key == name) {
        fail(where, "duplicate key '" + name + "' (first given at line " +
                        std::to_string(entry.key_mark.line + 1) + ")");
      }
    }
    entries_.push_back({name, key.Mark(), Field{value, where.field, key.Mark()}});
  }

  const Context& context_;
  Field field_;
  std::vector<Entry> entries_;
};

/// The items of a non-empty list, each with its indexed path; `item` names one item in the message for
/// an empty list.
std::vector<Field> read_list(const Context& context, const Field& field, const std::string& item) {
  if (!field.node.IsSequence()) fail(context, field, "expected a list, got " + describe(field.node));
  if (field.node.size() == 0) fail(context, field, "empty list: give at least one " + item);
  std::vector<Field> items;
  for (size_t i = 0; i < field.node.size(); ++i) {
    items.push_back(Field{field.node[i], index_path(field.path, i), std::nullopt});
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------
// Names

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_letter(char c) {
  return is_upper(c) || (c >= 'a' && c <= 'z');
}

/// ^sm_[0-9]+a?$ (NVIDIA) or an AMD target (is_amd_arch)
bool is_arch(std::string_view text) {
  if (is_amd_arch(text)) return true;
  if (text.substr(0, 3) != "sm_") return false;
  text.remove_prefix(3);
  if (!text.empty() && text.back() == 'a') text.remove_suffix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_digit(c)) return false;
  }
  return true;
}

/// ^[A-Za-z0-9_.-]+$
bool is_problem_name(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_letter(c) && !is_digit(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

/// ^[A-Z][A-Z0-9_]*$
bool is_parameter_name(std::string_view text) {
  if (text.empty() || !is_upper(text.front())) return false;
  for (char c : text) {
    if (!is_upper(c) && !is_digit(c) && c != '_') return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------
// Sections

struct LimitKey {
  std::string_view key;
  int64_t GpuLimits::*member;
  bool required;
  int64_t minimum;
  int64_t maximum;  ///< far above any GPU, low enough that the occupancy arithmetic cannot overflow
};

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr LimitKey limit_keys[] = {
    {"shared_memory_per_block_optin", &GpuLimits::shared_memory_per_block_optin, true, 1, kGiB},
    {"shared_memory_per_sm", &GpuLimits::shared_memory_per_sm, true, 1, kGiB},
    {"registers_per_sm", &GpuLimits::registers_per_sm, true, 1, int64_t{1} << 24},
    {"sm_count", &GpuLimits::sm_count, true, 1, int64_t{1} << 16},
    {"shared_memory_reserved_per_block", &GpuLimits::shared_memory_reserved_per_block, false, 0, kGiB},
    {"max_registers_per_thread", &GpuLimits::max_registers_per_thread, false, 1, int64_t{1} << 16},
    {"max_threads_per_block", &GpuLimits::max_threads_per_block, false, 1, int64_t{1} << 16},
    {"max_threads_per_sm", &GpuLimits::max_threads_per_sm, false, 1, int64_t{1} << 20},
    {"max_blocks_per_sm", &GpuLimits::max_blocks_per_sm, false, 1, int64_t{1} << 16},
    {"warp_size", &GpuLimits::warp_size, false, 1, 1024},
};

/// The limits of a GPU of `arch`. The defaults are NVIDIA's; an AMD target must state its wavefront width
/// (`warp_size`: 64 on CDNA, where a default of 32 would silently halve every per-wavefront figure).
GpuLimits read_limits(const Context& context, const Field& field, std::string_view arch) {
  std::vector<std::string_view> keys;
  for (const LimitKey& limit : limit_keys) keys.push_back(limit.key);
  const Section section(context, field, keys);
  GpuLimits limits;
  for (const LimitKey& limit : limit_keys) {
    const bool required = limit.required || (limit.key == "warp_size" && is_amd_arch(arch));
    const std::optional<Field> value = required ? section.require(limit.key) : section.find(limit.key);
    if (value) limits.*limit.member = read_integer_in(context, *value, limit.minimum, limit.maximum);
  }
  return limits;
}

GpuSpec read_gpu(const Context& context, const Field& field) {
  const Section section(context, field, std::vector<std::string_view>{"name", "arch", "limits"});
  GpuSpec gpu;
  gpu.where = locate(context, field);
  gpu.name = read_string(context, section.require("name"));
  const Field arch = section.require("arch");
  gpu.arch = read_string(context, arch);
  gpu.arch_where = locate(context, arch);
  if (!is_arch(gpu.arch)) {
    fail(context, arch,
         "invalid arch '" + gpu.arch + "' (expected sm_ followed by digits and an optional 'a', " +
             "e.g. sm_80, sm_90, sm_90a, or an AMD target such as gfx90a or gfx942)");
  }
  gpu.limits = read_limits(context, section.require("limits"), gpu.arch);
  return gpu;
}

Precision read_input_precision(const Context& context, const Field& field) {
  const std::string text = read_string(context, field);
  const std::optional<Precision> precision = parse_precision(text);
  if (!precision) {
    fail(context, field,
         "unknown precision '" + text + "' (expected fp16, bf16, fp32, tf32, fp8e4m3 or fp8e5m2)");
  }
  return *precision;
}

/// The output type a problem gets without an `output` key: its input type, except fp32 for tf32 inputs and
/// bf16 for fp8 inputs (which may also write their own type).
Precision default_output(Precision input) {
  if (input == Precision::tf32) return Precision::fp32;
  if (is_fp8(input)) return Precision::bf16;
  return input;
}

/// The output types `input` may write (is_output_type), as an error lists them.
std::string expected_outputs(Precision input) {
  if (input == Precision::tf32) return "fp32";
  if (is_fp8(input)) return std::string("fp16, bf16, fp32 or ") + to_string(input);
  return "fp16, bf16 or fp32";
}

/// C is fp16, bf16 or fp32; with tf32 inputs only fp32; with fp8 inputs also the input type.
Precision read_output_precision(const Context& context, const Field& field, Precision input) {
  const std::string text = read_string(context, field);
  const std::optional<Precision> output = parse_precision(text);
  if (!output)
    fail(context, field, "unknown output type '" + text + "' (expected " + expected_outputs(input) + ")");
  if (!is_output_type(input, *output)) {
    std::string why = "output type " + text + " is not supported with " + to_string(input) +
                      " inputs (expected " + expected_outputs(input);
    if (*output == Precision::tf32) why += "; tf32 is an input type only";
    if (is_fp8(*output)) why += "; an fp8 output needs fp8 inputs of the same type";
    fail(context, field, why + ")");
  }
  return *output;
}

Layout read_layout(const Context& context, const Field& field) {
  const std::string text = read_string(context, field);
  const std::optional<Layout> layout = parse_layout(text);
  if (!layout) fail(context, field, "unknown layout '" + text + "' (expected RR, RC, CR or CC)");
  return *layout;
}

/// A dimension fits cuBLAS's int; an operand's element count stays below 2^40 so byte counts cannot overflow.
constexpr int64_t kMaxDimension = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxElements = int64_t{1} << 40;

/// Problem names seen so far, with where each was first given.
using NameRegistry = std::map<std::string, SourceLocation>;

Problem read_problem(const Context& context, const Field& field, NameRegistry& names) {
  const Section section(
      context, field,
      std::vector<std::string_view>{"name", "m", "n", "k", "precision", "output", "layout", "alpha", "beta"});
  Problem problem;
  problem.where = locate(context, field);
  const Field name = section.require("name");
  problem.name = read_string(context, name);
  if (!is_problem_name(problem.name)) {
    fail(context, name,
         "invalid problem name '" + problem.name + "' (expected letters, digits, '_', '.' or '-')");
  }
  if (auto first = names.find(problem.name); first != names.end()) {
    fail(context, name,
         "duplicate problem name '" + problem.name + "' (first used by " + first->second.field + " at line " +
             std::to_string(first->second.line) + ")");
  }
  names.emplace(problem.name, problem.where);
  problem.m = read_integer_in(context, section.require("m"), 1, kMaxDimension);
  problem.n = read_integer_in(context, section.require("n"), 1, kMaxDimension);
  problem.k = read_integer_in(context, section.require("k"), 1, kMaxDimension);
  for (const auto& [a, b, names] : {std::tuple{problem.m, problem.k, "m x k (A)"},
                                    std::tuple{problem.k, problem.n, "k x n (B)"},
                                    std::tuple{problem.m, problem.n, "m x n (C)"}})
    if (a * b > kMaxElements)
      fail(context, field,
           std::string("an operand of ") + names + " = " + std::to_string(a * b) + " elements is more than " +
               std::to_string(kMaxElements) + " (2^40)");
  problem.input = read_input_precision(context, section.require("precision"));
  const std::optional<Field> output = section.find("output");
  problem.output =
      output ? read_output_precision(context, *output, problem.input) : default_output(problem.input);
  if (auto layout = section.find("layout")) problem.layout = read_layout(context, *layout);
  if (auto alpha = section.find("alpha")) problem.alpha = read_finite_number(context, *alpha);
  if (auto beta = section.find("beta")) problem.beta = read_finite_number(context, *beta);
  return problem;
}

std::vector<Problem> read_problems(const Context& context, const Field& field) {
  std::vector<Problem> problems;
  NameRegistry names;
  for (const Field& item : read_list(context, field, "problem")) {
    problems.push_back(read_problem(context, item, names));
  }
  return problems;
}

/// A parameter's values: a scalar integer or a non-empty list of integers. Repeated values are left to
/// the space (tuner/space), which checks values against the template.
std::vector<int64_t> read_values(const Context& context, const Field& field) {
  if (field.node.IsScalar()) return {read_integer(context, field)};
  if (!field.node.IsSequence()) {
    fail(context, field, "expected an integer or a list of integers, got " + describe(field.node));
  }
  if (field.node.size() == 0) fail(context, field, "empty list: give at least one value");
  std::vector<int64_t> values;
  for (size_t i = 0; i < field.node.size(); ++i) {
    const Field item{field.node[i], index_path(field.path, i), std::nullopt};
    values.push_back(read_integer(context, item));
  }
  return values;
}

std::vector<ParameterValues> read_space(const Context& context, const Field& field) {
  const Section section(context, field, std::nullopt);
  std::vector<ParameterValues> space;
  for (const Section::Entry& entry : section.entries()) {
    const SourceLocation where = locate(context, entry.key_mark, entry.value.path);
    if (!is_parameter_name(entry.key)) {
      fail(where, "invalid parameter name '" + entry.key +
                      "' (expected upper-case letters, digits and '_', starting with a letter, e.g. BM)");
    }
    space.push_back(ParameterValues{entry.key, read_values(context, entry.value), where});
  }
  return space;
}

TemplateSearch read_template(const Context& context, const Field& field) {
  const Section section(context, field, std::vector<std::string_view>{"name", "space"});
  TemplateSearch search;
  search.where = locate(context, field);
  search.name = read_string(context, section.require("name"));
  if (auto space = section.find("space")) search.space = read_space(context, *space);
  return search;
}

std::vector<TemplateSearch> read_templates(const Context& context, const Field& field) {
  std::vector<TemplateSearch> templates;
  for (const Field& item : read_list(context, field, "template")) {
    templates.push_back(read_template(context, item));
  }
  return templates;
}

Pruning read_pruning(const Context& context, const Field& field) {
  const Section section(context, field, std::vector<std::string_view>{"min_blocks_per_sm", "allow_spills"});
  Pruning pruning;
  if (auto value = section.find("min_blocks_per_sm")) {
    pruning.min_blocks_per_sm = read_integer_in(context, *value, 1, int64_t{1} << 16);
  }
  if (auto value = section.find("allow_spills")) pruning.allow_spills = read_bool(context, *value);
  return pruning;
}

Budgets read_budgets(const Context& context, const Field& field) {
  const Section section(
      context, field,
      std::vector<std::string_view>{"fuzz_cases", "fuzz_screen_cases", "timing_warmup", "timing_repeats",
                                    "timing_screen_repeats", "timing_finalists", "candidate_timeout_s",
                                    "fuzz_workers", "time_workers", "strategy"});
  Budgets budgets;
  if (auto value = section.find("fuzz_cases")) budgets.fuzz_cases = read_integer_in(context, *value, 1, 1'000'000'000);
  if (auto value = section.find("fuzz_screen_cases"))
    budgets.fuzz_screen_cases = read_integer_in(context, *value, 1, 1'000'000'000);
  if (auto value = section.find("timing_warmup")) {
    budgets.timing_warmup = read_integer_in(context, *value, 0, 1'000'000);
  }
  if (auto value = section.find("timing_repeats")) {
    budgets.timing_repeats = read_integer_in(context, *value, 1, 1'000'000);
  }
  if (auto value = section.find("candidate_timeout_s")) {
    budgets.candidate_timeout_s = read_finite_number(context, *value);
    if (budgets.candidate_timeout_s <= 0) fail(context, *value, "must be > 0, got " + value->node.Scalar());
    if (budgets.candidate_timeout_s > 604800)
      fail(context, *value, "must be <= 604800 (a week), got " + value->node.Scalar());
  }
  if (auto value = section.find("fuzz_workers"))
    budgets.fuzz_workers = read_integer_in(context, *value, 1, 256);
  if (auto value = section.find("time_workers"))
    budgets.time_workers = read_integer_in(context, *value, 1, 64);
  if (auto value = section.find("timing_screen_repeats"))
    budgets.timing_screen_repeats = read_integer_in(context, *value, 1, 1'000'000);
  if (auto value = section.find("timing_finalists"))
    budgets.timing_finalists = read_integer_in(context, *value, 0, 10'000);
  if (auto value = section.find("strategy")) {
    const auto kind = parse_strategy(read_string(context, *value));
    if (!kind) fail(context, *value, "unknown strategy '" + value->node.Scalar() + "' (expected " + strategy_names() + ")");
    budgets.strategy = *kind;
  }
  return budgets;
}

Config read_config(const Context& context, const YAML::Node& root) {
  const Section section(
      context, Field{root, "", std::nullopt},
      std::vector<std::string_view>{"gpu", "problems", "templates", "pruning", "budgets", "seed", "output"});
  Config config;
  config.file = context.file;
  config.gpu = read_gpu(context, section.require("gpu"));
  config.problems = read_problems(context, section.require("problems"));
  config.templates = read_templates(context, section.require("templates"));
  if (auto pruning = section.find("pruning")) config.pruning = read_pruning(context, *pruning);
  if (auto budgets = section.find("budgets")) config.budgets = read_budgets(context, *budgets);
  if (auto seed = section.find("seed")) config.seed = read_unsigned(context, *seed);
  config.output = read_string(context, section.require("output"));
  return config;
}

/// The one document of the text (load_yaml_text: one document, bounded size); an empty text is an error.
YAML::Node load_document(const Context& context, const std::string& text) {
  const YAML::Node document = load_yaml_text(text, context.file, kDocumentNodeLimit);
  if (document.IsNull()) {
    fail(SourceLocation{context.file, 1, 1, ""},
         "empty config: expected a map with at least the keys gpu, problems, templates and output");
  }
  return document;
}

}  // namespace

bool is_amd_arch(std::string_view arch) {
  if (arch.substr(0, 3) != "gfx") return false;
  arch.remove_prefix(3);
  if (arch.size() < 3 || arch.size() > 4 || !is_digit(arch.front())) return false;
  for (size_t i = 0; i + 1 < arch.size(); ++i) {
    if (!is_digit(arch[i])) return false;
  }
  return is_digit(arch.back()) || (arch.back() >= 'a' && arch.back() <= 'z');
}

bool is_arch_name(std::string_view arch) {
  return is_arch(arch);
}

Config parse_config(const std::string& text, const std::string& file_name) {
  const Context context{file_name};
  try {
    return read_config(context, load_document(context, text));
  } catch (const Error&) {
    throw;
  } catch (const YAML::ParserException& error) {
    fail(locate(context, error.mark, ""), "YAML syntax error: " + error.msg);
  } catch (const YAML::Exception& error) {
    fail(locate(context, error.mark, ""), "invalid YAML: " + error.msg);
  } catch (const std::exception& error) {
    fail(SourceLocation{file_name, 0, 0, ""}, std::string("cannot read config: ") + error.what());
  }
}

Config load_config(const std::filesystem::path& file) {
  Config config = parse_config(read_input_file(file, "config file", kDocumentByteLimit), file.string());
  config.file = file;
  return config;
}

}  // namespace tunefuzz
