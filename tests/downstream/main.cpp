// A downstream program asking the exported tables for GEMM configurations. Each check states what the
// lookup rule promises for results/h200.yaml: which step answers and which row (by its problem's name), and
// that the answer carries that row's winner as kRows holds it, so a new campaign's winners need no edit
// here; the safe default's point is named. A failed check prints what it got and the program returns 1.
#ifdef TUNEFUZZ_HEADER_PATH
#include TUNEFUZZ_HEADER_PATH  // the header exported directly
#else
#include <tunefuzz/tables.hpp>  // the installed package (tunefuzz::tables)
#endif

#include <iostream>
#include <string_view>

namespace {

using tunefuzz_tables::Choice;
using tunefuzz_tables::lookup;
using tunefuzz_tables::Source;

constexpr std::string_view kH200 = "NVIDIA H200";

// The tables are usable at compile time.
static_assert(lookup(kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16").source == Source::exact);
static_assert(lookup(kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16").parameter("BM") == 128);
// A parameter the winner's template does not have reads as -1 (gemm_wgmma has no warp tile WM).
static_assert(lookup(kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16").parameter("WM") == -1);
// The layout is part of the key: odd_1000 (RR) and odd_1000_cc (CC) share shape and types, and each answers
// only for its own layout; a lookup without a layout means RR.
static_assert(lookup(kH200, "sm_90", 1000, 1000, 1000, "bf16", "bf16", "CC").problem == "odd_1000_cc");
static_assert(lookup(kH200, "sm_90", 1000, 1000, 1000, "bf16", "bf16").problem == "odd_1000");

struct Expected {
  Source source;
  std::string_view problem;  ///< the table row answering; empty for safe_default
  std::string_view template_name;  ///< safe_default's; a row's answer carries the row's own
};

// An answer from the table: the step and the row, whose winner (template, candidate, parameters) it carries.
Expected row(Source source, std::string_view problem) {
  return {source, problem, ""};
}

int failures = 0;

// Whether `got` carries the winner of the row of kH200 named `problem` (its candidate and every parameter).
bool carries_row(const Choice& got, std::string_view problem) {
  for (const tunefuzz_tables::Row& row : tunefuzz_tables::kRows) {
    if (row.card != kH200 || row.problem != problem) continue;
    if (got.template_name != row.template_name || got.candidate != row.candidate ||
        got.parameter_count != row.parameter_count)
      return false;
    for (std::size_t i = 0; i < row.parameter_count; ++i)
      if (got.parameter(row.parameters[i].name) != row.parameters[i].value) return false;
    return true;
  }
  return false;  // no such row
}

void check(const char* what, const Choice& got, const Expected& want) {
  const bool winner = want.source == Source::safe_default
                          ? got.template_name == want.template_name && got.parameter("BM") == 128 &&
                                got.parameter("BN") == 128 && got.parameter("STAGES") == 3
                          : carries_row(got, want.problem);
  const bool ok = got.source == want.source && got.problem == want.problem && winner;
  std::cout << (ok ? "ok     " : "FAILED ") << what << ": " << got.template_name << " " << got.candidate
            << " (" << to_string(got.source) << ", row '" << got.problem << "')\n";
  if (!ok) ++failures;
}

}  // namespace

int main() {
  // Known problems of the H200 table answer with their tuned winners.
  check("square_4096 on H200", lookup(kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16"),
        row(Source::exact, "square_4096"));
  check("odd_4097x4095x4099 on H200", lookup(kH200, "sm_90", 4097, 4095, 4099, "bf16", "bf16"),
        row(Source::exact, "odd_4097x4095x4099"));
  // Each layout of one shape answers with its own row; without a layout, RR.
  check("odd_1000 RR on H200", lookup(kH200, "sm_90", 1000, 1000, 1000, "bf16", "bf16", "RR"),
        row(Source::exact, "odd_1000"));
  check("odd_1000 CC on H200", lookup(kH200, "sm_90", 1000, 1000, 1000, "bf16", "bf16", "CC"),
        row(Source::exact, "odd_1000_cc"));
  check("square_4096 RC on H200", lookup(kH200, "sm_90", 4096, 4096, 4096, "bf16", "bf16", "RC"),
        row(Source::exact, "square_4096_rc"));
  // fp8 rows are RC (fp8 tensor cores read row-major A, column-major B), so an fp8 lookup says so.
  check("square_4096_fp8 RC on H200", lookup(kH200, "sm_90", 4096, 4096, 4096, "fp8e4m3", "bf16", "RC"),
        row(Source::exact, "square_4096_fp8"));
  // An unknown shape takes the nearest tuned shape of its layout on the card (1024x1000x1000 is nearest
  // odd_1000 in RR, odd_1000_cc in CC).
  check("1024x1000x1000 on H200", lookup(kH200, "sm_90", 1024, 1000, 1000, "bf16", "bf16"),
        row(Source::nearest_shape, "odd_1000"));
  check("1024x1000x1000 CC on H200", lookup(kH200, "sm_90", 1024, 1000, 1000, "bf16", "bf16", "CC"),
        row(Source::nearest_shape, "odd_1000_cc"));
  // An unknown card of a known arch borrows that arch's tables.
  check("square_4096 on H100", lookup("NVIDIA H100 80GB HBM3", "sm_90", 4096, 4096, 4096, "bf16", "bf16"),
        row(Source::same_arch, "square_4096"));
  // An unknown arch falls back to gemm_mma's defaults, with the candidate id for the element types.
  const Choice fallback = lookup("NVIDIA A100-SXM4-80GB", "sm_80", 4096, 4096, 4096, "bf16", "bf16");
  check("square_4096 on A100", fallback, {Source::safe_default, "", "gemm_mma"});
  if (fallback.candidate !=
      "gemm_mma/bf16-bf16/"
      "BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3,VEC=8,GROUP_M=8,SWIZZLE=1,PACK=0,SPLIT_K=1,"
      "PERSISTENT=0,LAYOUTS=15") {
    std::cout << "FAILED the default candidate id: " << fallback.candidate << "\n";
    ++failures;
  }
  // No table has a CR row, so CR gets the defaults even where other layouts of the very shape are tuned.
  check("odd_1000 CR on H200", lookup(kH200, "sm_90", 1000, 1000, 1000, "bf16", "bf16", "CR"),
        {Source::safe_default, "", "gemm_mma"});
  std::cout << (failures ? "downstream lookups FAILED\n" : "downstream lookups passed\n");
  return failures ? 1 : 0;
}
