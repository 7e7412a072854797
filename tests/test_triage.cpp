// Laws of failure triage: the shape of the failed elements names the kind of bug.
#include <gtest/gtest.h>

#include "fuzz/triage.hpp"

namespace tunefuzz::fuzz {
namespace {

// A failed verdict over an m×n output whose failed elements are those `failed(i, j)` picks.
template <class Pick>
Verdict verdict(int64_t m, int64_t n, Pick failed, bool nan = false, bool unwritten = false) {
  Verdict v;
  v.pass = false;
  v.failed_mask.assign(static_cast<size_t>(m * n), false);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (failed(i, j)) {
        v.failed_mask[static_cast<size_t>(i * n + j)] = true;
        ++(unwritten ? v.unwritten : nan ? v.non_finite : v.wrong);
      }
  return v;
}

TEST(Triage, FailuresOnlyInPartialEdgeTilesAreTailOnly) {
  // 130 x 70 in 64 x 64 tiles: rows 128..129 and columns 64..69 are partial.
  const Verdict v = verdict(130, 70, [](int64_t i, int64_t) { return i >= 128; });
  EXPECT_EQ(classify_incorrect(v, 130, 70, 64, 64, false), IncorrectKind::tail_only);
  const Verdict inside =
      verdict(130, 70, [](int64_t i, int64_t j) { return i >= 128 || (i == 3 && j == 5); });
  EXPECT_EQ(classify_incorrect(inside, 130, 70, 64, 64, false), IncorrectKind::bound_exceeded);
}

TEST(Triage, WholeTilesAreTileStructured) {
  const Verdict v = verdict(128, 128, [](int64_t i, int64_t j) { return i < 64 && j >= 64; });
  EXPECT_EQ(classify_incorrect(v, 128, 128, 64, 64, false), IncorrectKind::tile_structured);
}

TEST(Triage, AProblemSmallerThanATileIsNeitherTailOnlyNorTileStructured) {
  // One partial tile: there is no full tile to contrast with, so the failure is just out of bounds.
  const Verdict v = verdict(1, 8, [](int64_t, int64_t) { return true; });
  EXPECT_EQ(classify_incorrect(v, 1, 8, 128, 128, false), IncorrectKind::bound_exceeded);
}

TEST(Triage, NaNLeftFromThePoisonIsUnwrittenAndZerosAreAllZero) {
  const Verdict unwritten = verdict(
      64, 64, [](int64_t i, int64_t) { return i == 0; }, false, true);
  EXPECT_EQ(classify_incorrect(unwritten, 64, 64, 32, 32, false), IncorrectKind::unwritten);
  const Verdict nan = verdict(
      64, 64, [](int64_t i, int64_t) { return i == 0; }, true);
  EXPECT_EQ(classify_incorrect(nan, 64, 64, 32, 32, false), IncorrectKind::nan);
  const Verdict zeros = verdict(64, 64, [](int64_t, int64_t) { return true; });
  EXPECT_EQ(classify_incorrect(zeros, 64, 64, 32, 32, true), IncorrectKind::all_zero);
}

TEST(Triage, FailureClassNamesRoundTrip) {
  for (int c = 0; c <= static_cast<int>(FailureClass::timeout); ++c) {
    const auto failure = static_cast<FailureClass>(c);
    EXPECT_EQ(parse_failure_class(to_string(failure)), failure);
  }
  EXPECT_FALSE(parse_failure_class("bogus").has_value());
}

}  // namespace
}  // namespace tunefuzz::fuzz
