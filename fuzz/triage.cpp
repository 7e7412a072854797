#include "fuzz/triage.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>
#include <vector>

namespace tunefuzz::fuzz {

namespace {
constexpr std::array<const char*, 10> kClassNames = {
    "compile_failed", "not_supported",       "launch_error",     "crash",   "hang",
    "incorrect",      "out_of_bounds_write", "nondeterministic", "timeout", "sanitizer"};
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
  // The mask holds m·n bits, 2^31 for the largest cases: the scan is split across cores by tile rows, each
  // thread counting into its own rows of failed_in_tile.
  std::vector<int64_t> failed_in_tile(tiles_m * tiles_n, 0);
  std::atomic<bool> failed_in_full_tile{false};
  std::atomic<int64_t> next_tile_row{0};
  const auto count = [&] {
    for (int64_t tile_row = next_tile_row++; tile_row < tiles_m; tile_row = next_tile_row++) {
      bool in_full_tile = false;
      for (int64_t i = tile_row * tile_m; i < std::min(m, (tile_row + 1) * tile_m); ++i)
        for (int64_t j = 0; j < n; ++j)
          if (v.failed_mask[i * n + j]) {
            in_full_tile = in_full_tile || (i < full_m && j < full_n);
            ++failed_in_tile[tile_row * tiles_n + j / tile_n];
          }
      if (in_full_tile) failed_in_full_tile = true;
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = host_threads();
  for (unsigned t = 1; t < std::min<int64_t>(threads, tiles_m); ++t) pool.emplace_back(count);
  count();
  for (auto& thread : pool) thread.join();
  if (failed_in_full_tile) tail_only = false;
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
