#include "fuzz/triage.hpp"

#include <array>

namespace tunefuzz::fuzz {

namespace {
constexpr std::array<const char*, 9> kClassNames = {
    "compile_failed", "not_supported",       "launch_error",     "crash",  "hang",
    "incorrect",      "out_of_bounds_write", "nondeterministic", "timeout"};
}

const char* to_string(FailureClass failure) {
  return kClassNames[static_cast<size_t>(failure)];
}

std::optional<FailureClass> parse_failure_class(const std::string& text) {
  for (size_t i = 0; i < kClassNames.size(); ++i)
    if (text == kClassNames[i]) return static_cast<FailureClass>(i);
  return std::nullopt;
}

const char* to_string(IncorrectKind kind) {
  switch (kind) {
    case IncorrectKind::unwritten:
      return "unwritten";
    case IncorrectKind::nan:
      return "nan";
    case IncorrectKind::all_zero:
      return "all_zero";
    case IncorrectKind::tail_only:
      return "tail_only";
    case IncorrectKind::tile_structured:
      return "tile_structured";
    case IncorrectKind::bound_exceeded:
      return "bound_exceeded";
  }
  return "?";
}

IncorrectKind classify_incorrect(const Verdict& v, int64_t m, int64_t n, int64_t tile_m, int64_t tile_n,
                                 bool output_all_zero) {
  if (v.unwritten > 0 && v.wrong == 0 && v.non_finite == 0) return IncorrectKind::unwritten;
  if (v.non_finite > 0 && v.wrong == 0) return IncorrectKind::nan;
  if (output_all_zero) return IncorrectKind::all_zero;
  if (v.failed_mask.size() != static_cast<size_t>(m * n) || tile_m <= 0 || tile_n <= 0)
    return IncorrectKind::bound_exceeded;
  // Rows/columns at or past these belong to a partial edge tile.
  // "Tail only" and "whole tiles" need something to contrast with: a full tile, or more than one tile.
  const int64_t full_m = m / tile_m * tile_m, full_n = n / tile_n * tile_n;
  bool tail_only = (full_m < m || full_n < n) && full_m > 0 && full_n > 0;
  const int64_t tiles_m = (m + tile_m - 1) / tile_m, tiles_n = (n + tile_n - 1) / tile_n;
  std::vector<int64_t> failed_in_tile(tiles_m * tiles_n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (v.failed_mask[i * n + j]) {
        if (i < full_m && j < full_n) tail_only = false;
        ++failed_in_tile[(i / tile_m) * tiles_n + j / tile_n];
      }
  if (tail_only) return IncorrectKind::tail_only;
  bool whole_tiles = tiles_m * tiles_n > 1;
  for (int64_t t = 0; t < tiles_m * tiles_n && whole_tiles; ++t) {
    const int64_t rows = std::min(tile_m, m - (t / tiles_n) * tile_m);
    const int64_t cols = std::min(tile_n, n - (t % tiles_n) * tile_n);
    whole_tiles = failed_in_tile[t] == 0 || failed_in_tile[t] == rows * cols;
  }
  return whole_tiles ? IncorrectKind::tile_structured : IncorrectKind::bound_exceeded;
}

}  // namespace tunefuzz::fuzz
