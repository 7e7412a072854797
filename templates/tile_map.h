// The mapping from a linear CTA index to an output tile, shared by the kernels (device) and the host-side
// law tests: for every grid it must visit each (tile_m, tile_n) exactly once. GROUP_M rasterisation walks
// GROUP_M tile rows column by column before moving on, so CTAs running together share A rows and B columns
// in L2. The last group is shorter when tiles_m is not a multiple of GROUP_M.
#ifndef TUNEFUZZ_TILE_MAP_H
#define TUNEFUZZ_TILE_MAP_H

#include "tunefuzz_rtc.h"

struct TfTile {
  tf_i64 m;  // tile row index, in [0, tiles_m)
  tf_i64 n;  // tile column index, in [0, tiles_n)
};

// Ceiling division for non-negative operands.
TF_HOST_DEVICE inline tf_i64 tf_ceil_div(tf_i64 a, tf_i64 b) { return (a + b - 1) / b; }

// Tile `index` in [0, tiles_m * tiles_n) of a grid rasterised in groups of `group_m` tile rows.
// `clamp_last_group` is 1 in every correct kernel; 0 reproduces the classic bug of assuming the last group
// is full, which drops or repeats tiles when tiles_m % group_m != 0 (a fuzzing mutant uses it).
TF_HOST_DEVICE inline TfTile tf_tile_map(tf_i64 index, tf_i64 tiles_m, tf_i64 tiles_n, tf_i64 group_m,
                                         int clamp_last_group) {
  const tf_i64 tiles_per_group = group_m * tiles_n;
  const tf_i64 group = index / tiles_per_group;
  const tf_i64 first_m = group * group_m;
  tf_i64 rows_in_group = group_m;
  if (clamp_last_group && tiles_m - first_m < group_m) rows_in_group = tiles_m - first_m;
  const tf_i64 in_group = index % tiles_per_group;
  TfTile tile;
  tile.m = first_m + in_group % rows_in_group;
  tile.n = in_group / rows_in_group;
  return tile;
}

#endif  // TUNEFUZZ_TILE_MAP_H
