// Laws of the fuzz case generator (fuzz/generators) over case spaces without probed steps: every record it
// makes is one the candidate accepts (sizes >= 0, K, N and the A/B paddings multiples of the candidate's
// units, m·n·k within the cap whenever the cap can be met, a valid distribution), for every kind of case
// space; over a fuzzing budget it hits every bug class named by case_tags(); and shrinking moves a failing
// case towards a smaller one. Properties print their RapidCheck seed on failure; the sampled tests name their
// fixed seed.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/generators.hpp"

namespace tunefuzz::fuzz {
namespace {

std::string describe(const CaseSpace& s) {
  std::ostringstream out;
  out << "CaseSpace{k_unit=" << s.k_unit << " n_unit=" << s.n_unit << " tile=" << s.tile_m << "x" << s.tile_n
      << "x" << s.tile_k << " stages=" << s.stages << " sm_count=" << s.sm_count << " max_macs=" << s.max_macs
      << "}";
  return out.str();
}

/// Case spaces as candidates produce them (units 1 or the vector width; tiles of 64/128/256; 2-4 stages),
/// plus a small m·n·k cap that makes the cap bind often, with and without the opt-in huge cases.
rc::Gen<CaseSpace> gen_space() {
  return rc::gen::apply(
      [](int64_t k_unit, int64_t n_unit, int64_t tile_m, int64_t tile_n, int64_t tile_k, int64_t stages,
         int64_t sm_count, int64_t max_macs, int huge_weight) {
        CaseSpace s;
        s.k_unit = k_unit;
        s.n_unit = n_unit;
        s.tile_m = tile_m;
        s.tile_n = tile_n;
        s.tile_k = tile_k;
        s.stages = stages;
        s.sm_count = sm_count;
        s.max_macs = max_macs;
        s.huge_weight = huge_weight;
        s.varies_splits = s.varies_grid = tile_m != 64;
        if (tile_n != 64)
          s.layouts = {{Order::row, Order::row},
                       {Order::row, Order::col},
                       {Order::col, Order::row},
                       {Order::col, Order::col}};
        return s;
      },
      rc::gen::element<int64_t>(1, 2, 4, 8), rc::gen::element<int64_t>(1, 2, 4, 8),
      rc::gen::element<int64_t>(64, 128, 256), rc::gen::element<int64_t>(64, 128, 256),
      rc::gen::element<int64_t>(32, 64), rc::gen::element<int64_t>(2, 3, 4),
      rc::gen::element<int64_t>(108, 132), rc::gen::element<int64_t>(int64_t{1} << 27, int64_t{1} << 20),
      rc::gen::element(0, 0, 1));
}

const int64_t huge_elements = int64_t{1} << 31;

/// Why the candidate of `space` would not accept `r`, or "" when it would.
std::string violation(const CaseRecord& r, const CaseSpace& space) {
  if (r.m < 0 || r.n < 0 || r.k < 0) return "a negative size";
  if (std::find(space.layouts.begin(), space.layouts.end(), r.layout) == space.layouts.end())
    return "a layout the candidate does not compute";
  if (r.k % space.k_unit != 0) return "K is not a multiple of k_unit";
  if (r.n % space.n_unit != 0) return "N is not a multiple of n_unit";
  if (r.layout.a == Order::col && r.m % space.k_unit != 0)
    return "column-major A with M not a multiple of k_unit";
  if (r.layout.b == Order::col && r.k % space.n_unit != 0)
    return "column-major B with K not a multiple of n_unit";
  const int64_t k_tiles = (r.k + space.tile_k - 1) / space.tile_k;
  if (!space.varies_splits ? r.splits != 0
                           : !(r.splits <= 3 || r.splits == k_tiles || r.splits == k_tiles + 1))
    return "a split count other than 0 (the candidate's), 1, 2, 3, the K tiles or one more";
  if (r.splits < 0 || r.grid < 0 || (!space.varies_grid && r.grid != 0))
    return "a grid the candidate cannot take";
  if (r.lda_pad < 0 || r.ldb_pad < 0 || r.ldc_pad < 0) return "a negative padding";
  if (r.lda_pad % space.k_unit != 0) return "lda_pad is not a multiple of k_unit";
  if (r.ldb_pad % space.n_unit != 0) return "ldb_pad is not a multiple of n_unit";
  // The smallest K the layout allows: a column-major B is stored along K.
  const int64_t k_unit = r.layout.b == Order::col ? std::max(space.k_unit, space.n_unit) : space.k_unit;
  if (r.m * r.n > huge_elements) {
    // Huge cases (C offsets beyond 2^31) come only when the space opts in, and their C is write-only.
    if (space.huge_weight <= 0) return "a huge case in a space that did not opt in";
    if (r.beta != 0.0 || r.ldc_pad != 0) return "a huge case that reads C";
  } else if (r.m * r.n * k_unit <= space.max_macs) {
    // A column-major A may round M up to one unit; the cap then holds for the M it had.
    if (r.m * r.n * r.k > space.max_macs && !(r.layout.a == Order::col && r.m == space.k_unit))
      return "m*n*k above max_macs although one K unit fits";
  } else if (r.k != k_unit && r.k != 0) {
    return "m*n*k above max_macs and K is not its smallest";
  }
  // A distribution the rest of the system can name and read back.
  Distribution parsed{};
  if (std::string(to_string(r.distribution)) == "?" ||
      !parse_distribution(to_string(r.distribution), parsed) || parsed != r.distribution)
    return "a distribution without a name";
  return "";
}

RC_GTEST_PROP(Generators, EveryRecordIsOneTheCandidateAccepts, ()) {
  const CaseSpace space = *gen_space();
  RC_LOG() << describe(space) << "\n";
  const CaseRecord r = *gen_case(space);
  RC_LOG() << to_string(r) << "\n";
  const std::string why = violation(r, space);
  if (!why.empty()) RC_FAIL(why);
}

/// `count` records as a fuzz job of `count` cases sees them: sizes sweep 0..100 as RapidCheck's do.
std::vector<rc::Shrinkable<CaseRecord>> sample(const CaseSpace& space, int count, uint64_t seed) {
  rc::Random random(seed);
  const rc::Gen<CaseRecord> gen = gen_case(space);
  std::vector<rc::Shrinkable<CaseRecord>> out;
  for (int i = 0; i < count; ++i) out.push_back(gen(random.split(), i % 101));
  return out;
}

const std::vector<std::string> intended_tags = {"tiny",
                                                "m_tail",
                                                "n_tail",
                                                "k_lt_tile",
                                                "k_eq_tile",
                                                "k_tail",
                                                "k_pipeline_edge",
                                                "large_k",
                                                "multi_wave",
                                                "padded_ld",
                                                "beta_nonzero",
                                                "alpha_not_one",
                                                "dist_small_int",
                                                "dist_normal",
                                                "dist_ones",
                                                "dist_sequential",
                                                "dist_alternating",
                                                "dist_large",
                                                "dist_denormal",
                                                "dist_sparse_nonfinite",
                                                "dist_identity",
                                                "offset_pointers",
                                                "layout_RC",
                                                "layout_CR",
                                                "layout_CC",
                                                "split_k",
                                                "empty_splits",
                                                "persistent_grid"};

std::vector<CaseSpace> coverage_spaces() {
  std::vector<CaseSpace> spaces;
  for (int64_t unit : {1, 8})
    for (int64_t tile : {64, 128, 256})
      for (int64_t stages : {2, 3, 4}) {
        CaseSpace s;
        s.k_unit = s.n_unit = unit;
        s.tile_m = s.tile_n = tile;
        s.tile_k = tile == 64 ? 64 : 32;
        s.stages = stages;
        s.varies_splits = s.varies_grid = true;
        s.layouts = {{Order::row, Order::row},
                     {Order::row, Order::col},
                     {Order::col, Order::row},
                     {Order::col, Order::col}};
        spaces.push_back(s);
      }
  return spaces;
}

// Law: over a fuzz budget of 2000 cases, every bug class the generator aims at is hit at least once.
TEST(Generators, TwoThousandCasesHitEveryIntendedTag) {
  const uint64_t seed = 20240611;
  SCOPED_TRACE("sample seed " + std::to_string(seed));
  for (const CaseSpace& space : coverage_spaces()) {
    SCOPED_TRACE(describe(space));
    std::map<std::string, int> counts;
    for (const auto& shrinkable : sample(space, 2000, seed))
      for (const std::string& tag : case_tags(shrinkable.value(), space)) ++counts[tag];
    std::string seen;
    for (const auto& [tag, count] : counts) seen += " " + tag + "=" + std::to_string(count);
    for (const std::string& tag : intended_tags)
      EXPECT_GT(counts[tag], 0) << tag << " never hit; hit:" << seen;
  }
}

// Law: where the candidate's refusal accepts a single packed row of A or column of B and C that its steps
// skip (a kernel that runs such a problem in another form, canonical_form), the fuzz budget reaches both.
TEST(Generators, ASingleRowOrColumnIsDrawnWhereTheRefusalAcceptsItBetweenSteps) {
  const uint64_t seed = 11;
  for (CaseSpace space : coverage_spaces()) {
    if (space.n_unit == 1) continue;  // unit steps reach 1 without help
    SCOPED_TRACE(describe(space));
    // A candidate that takes N in steps of n_unit, or N = 1 with a packed C; M = 1 in any layout.
    space.accepts = [n_unit = space.n_unit](const CaseRecord& r) {
      return r.n % n_unit == 0 || (r.n == 1 && r.ldc_pad == 0);
    };
    std::map<std::string, int> counts;
    for (const auto& shrinkable : sample(space, 2000, seed)) {
      const CaseRecord r = shrinkable.value();
      ASSERT_TRUE(space.accepts(r)) << to_string(r);
      for (const std::string& tag : case_tags(r, space)) ++counts[tag];
    }
    EXPECT_GT(counts["m_one"], 0);
    EXPECT_GT(counts["n_one"], 0);
  }
}

// Law: shrinking only ever proposes cases the candidate accepts (a shrunk case that the candidate refuses
// would fail differently), and a record with a large M offers a shrink with a smaller M.
TEST(Generators, EveryShrinkIsACaseTheCandidateAcceptsAndLargeMShrinks) {
  const uint64_t seed = 7;
  SCOPED_TRACE("sample seed " + std::to_string(seed));
  int large_m_with_smaller_shrink = 0;
  for (const CaseSpace& space : coverage_spaces()) {
    SCOPED_TRACE(describe(space));
    for (const auto& shrinkable : sample(space, 200, seed)) {
      const CaseRecord r = shrinkable.value();
      bool smaller_m = false;
      auto shrinks = rc::seq::take(200, shrinkable.shrinks());
      while (const auto shrink = shrinks.next()) {
        const CaseRecord s = shrink->value();
        EXPECT_EQ(violation(s, space), "") << to_string(r) << " shrank to " << to_string(s);
        smaller_m = smaller_m || s.m < r.m;
      }
      if (r.m > 2 * space.tile_m + 1 && smaller_m) ++large_m_with_smaller_shrink;
    }
  }
  EXPECT_GT(large_m_with_smaller_shrink, 0);
}

// The cases replayed under compute-sanitizer are cases the candidate accepts, with several tiles per CTA,
// partial tiles in every dimension and, where the candidate takes them, a small grid and K splits.
TEST(Generators, SanitizerCasesAreAcceptedAndReachTheRacyPaths) {
  for (const CaseSpace& space : coverage_spaces()) {
    SCOPED_TRACE(describe(space));
    const std::vector<CaseRecord> cases = sanitizer_cases(space);
    ASSERT_EQ(cases.size(), 3u);
    for (const CaseRecord& c : cases) EXPECT_EQ(violation(c, space), "") << to_string(c);
    const auto tags = [&](const CaseRecord& c) {
      const std::vector<std::string> t = case_tags(c, space);
      return std::set<std::string>(t.begin(), t.end());
    };
    const int64_t tiles =
        ((cases[0].m + space.tile_m - 1) / space.tile_m) * ((cases[0].n + space.tile_n - 1) / space.tile_n);
    EXPECT_GE(tiles, 4);
    EXPECT_GE(cases[0].k, 2 * space.stages * space.tile_k) << "K goes round the pipeline more than once";
    EXPECT_EQ(cases[0].grid, space.varies_grid ? 2 : 0);
    for (const char* tag : {"m_tail", "n_tail", "k_tail", "beta_nonzero"})
      EXPECT_TRUE(tags(cases[1]).count(tag)) << tag << " in " << to_string(cases[1]);
    EXPECT_EQ(cases[2].splits, space.varies_splits ? 3 : 0);
  }
}

/// Keeps these deliberately failing runs out of RapidCheck's end-of-program "reproduce" report.
class SilentListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// What RapidCheck, as a fuzz job runs it, makes of a property that fails when `fails`: the first failing
/// record and the counterexample it shrinks that to.
struct ShrinkRun {
  bool failed = false;
  CaseRecord first, shrunk;
};

ShrinkRun rapidcheck_shrink(const CaseSpace& space, uint64_t seed,
                            const std::function<bool(const CaseRecord&)>& fails) {
  ShrinkRun run;
  bool seen_failure = false;
  const auto property = [&]() {
    const CaseRecord r = *gen_case(space);
    if (fails(r)) {
      if (!seen_failure) run.first = r;
      seen_failure = true;
      run.shrunk = r;  // the last failing run RapidCheck makes is on the final counterexample
      RC_FAIL("fails");
    }
  };
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = 1000;
  params.maxSize = 100;
  rc::detail::TestMetadata metadata;
  metadata.id = "shrink";
  SilentListener listener;
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, params, listener);
  rc::detail::FailureResult failure;
  run.failed = result.match(failure);
  return run;
}

/// Shrinks `current` the way RapidCheck does: repeatedly move to the first shrink that still fails.
CaseRecord shrink_greedily(rc::Shrinkable<CaseRecord> current,
                           const std::function<bool(const CaseRecord&)>& fails) {
  for (int step = 0; step < 100000; ++step) {
    auto shrinks = current.shrinks();
    bool moved = false;
    while (const auto next = shrinks.next()) {
      if (fails(next->value())) {
        current = *next;
        moved = true;
        break;
      }
    }
    if (!moved) break;
  }
  return current.value();
}

/// Passes when everything a failure on M alone does not need is at its simplest in `r`: K one unit, no
/// padding, alpha = 1, beta = 0, small integers, element seed 0.
::testing::AssertionResult rest_at_its_simplest(const CaseRecord& r, const CaseSpace& space) {
  if (r.k == space.k_unit && r.lda_pad == 0 && r.ldb_pad == 0 && r.ldc_pad == 0 && r.alpha == 1.0 &&
      r.beta == 0.0 && r.distribution == Distribution::small_int && r.seed == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "shrunk to " << to_string(r);
}

/// Passes when `r` is where shrinking a failure that needs m > 100 should end: M just above 100 (101 from a
/// plain range, or the smallest tile edge, at most tile_m + 1), N one unit and the rest at its simplest.
::testing::AssertionResult shrunk_to_just_above_100(const CaseRecord& r, const CaseSpace& space) {
  if (r.m <= 100 || r.m > space.tile_m + 1 || r.n != space.n_unit)
    return ::testing::AssertionFailure() << "shrunk to " << to_string(r);
  return rest_at_its_simplest(r, space);
}

// Law: shrinking moves a failure towards the smallest case that still fails. For "fails when m > 100":
// RapidCheck, run as a fuzz job runs it (30 seeds), ends just above 100 with everything else at its
// simplest; and from every sampled record with m > 100 at sizes 0..100 (most fields far from their
// simplest), shrinking ends with everything but the shape at its simplest. Waves shapes (M = 1088...) have
// their own shrinks (halve, step down), so they end just above 100 too.
// This test found that RapidCheck's element/oneOf choices never shrink; the generators now draw every
// choice through inRange at full size (fuzz/generators.cpp: choice, weighted_choice, weighted_one_of).
TEST(Generators, ShrinkingALargeMFailureEndsJustAbove100WithTheRestAtItsSimplest) {
  const CaseSpace space;
  const auto fails = [](const CaseRecord& r) { return r.m > 100; };
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("RapidCheck seed " + std::to_string(seed));
    const ShrinkRun run = rapidcheck_shrink(space, seed, fails);
    ASSERT_TRUE(run.failed);
    EXPECT_TRUE(shrunk_to_just_above_100(run.shrunk, space)) << "\nfirst failure " << to_string(run.first);
  }
  const uint64_t seed = 11;
  SCOPED_TRACE("sample seed " + std::to_string(seed));
  int starts = 0;
  for (const auto& start : sample(space, 300, seed)) {
    if (!fails(start.value())) continue;
    ++starts;
    const CaseRecord shrunk = shrink_greedily(start, fails);
    EXPECT_TRUE(fails(shrunk));
    EXPECT_TRUE(rest_at_its_simplest(shrunk, space)) << "\nstart " << to_string(start.value());
  }
  EXPECT_GT(starts, 50);
}

}  // namespace
}  // namespace tunefuzz::fuzz

namespace tunefuzz::fuzz {
namespace {

// Law: a progress line reads back as the record that wrote it (the watchdog names a crashing case so).
RC_GTEST_PROP(CaseLines, ReadBackAsTheRecordThatWroteThem, ()) {
  CaseSpace space;
  space.huge_weight = 1;
  space.varies_splits = space.varies_grid = true;
  space.layouts = {{Order::row, Order::row}, {Order::row, Order::col}, {Order::col, Order::col}};
  const CaseRecord record = *gen_case(space);
  const auto parsed = parse_case_line("case " + to_string(record));
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(*parsed == record);
  RC_ASSERT(!parse_case_line("verify gemm_mma/bf16-bf16/BM=128").has_value());
}

}  // namespace
}  // namespace tunefuzz::fuzz
