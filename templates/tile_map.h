// The mapping from a linear work index to an output tile and a K range, shared by the kernels (device) and
// the host-side law tests: for every grid it must visit each (tile_m, tile_n) exactly once, and the K ranges
// of one tile's splits must cover its K tiles exactly once. GROUP_M rasterisation walks
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

// The tile of CTA `rank` (0 or 1) in cluster tile `index` of a launch in clusters of cluster_m x cluster_n
// CTAs (one of them 1, the other 1 or 2): cluster tiles are cluster_m x cluster_n blocks of output tiles,
// walked like tiles by tf_tile_map (group_m counts cluster tile rows), and the CTAs of a cluster take the
// block's tiles in order. Where tiles_m (tiles_n) is not a multiple of cluster_m (cluster_n), the last block
// row (column) reaches past the matrix: the tile returned for rank 1 there has m >= tiles_m (n >= tiles_n),
// and the kernel stores nothing for it. Over all cluster tiles and ranks, the tiles inside the matrix are
// each visited exactly once. With 1 x 1 clusters this is tf_tile_map.
TF_HOST_DEVICE inline TfTile tf_cluster_tile(tf_i64 index, int rank, tf_i64 tiles_m, tf_i64 tiles_n, int cluster_m,
                                             int cluster_n, tf_i64 group_m) {
  const TfTile block =
      tf_tile_map(index, tf_ceil_div(tiles_m, cluster_m), tf_ceil_div(tiles_n, cluster_n), group_m, 1);
  TfTile tile;
  tile.m = block.m * cluster_m + (cluster_m > 1 ? rank : 0);
  tile.n = block.n * cluster_n + (cluster_n > 1 ? rank : 0);
  return tile;
}

// K tiles [begin, end) of one split of a tile's K loop.
struct TfKRange {
  tf_i64 begin;
  tf_i64 end;
};

// Split `split` of `splits` over `k_tiles` K tiles: the splits partition [0, k_tiles) in order, their sizes
// differ by at most one, and when splits > k_tiles the extra splits get empty ranges (they still own a
// partial sum: zero). `drop_remainder` is 0 in every correct kernel; 1 reproduces the classic bug of giving
// every split k_tiles / splits tiles, which loses the last k_tiles % splits tiles (a fuzzing mutant).
TF_HOST_DEVICE inline TfKRange tf_k_range(tf_i64 k_tiles, tf_i64 splits, tf_i64 split, int drop_remainder) {
  TfKRange range;
  if (drop_remainder) {
    range.begin = split * (k_tiles / splits);
    range.end = range.begin + k_tiles / splits;
  } else {
    range.begin = split * k_tiles / splits;
    range.end = (split + 1) * k_tiles / splits;
  }
  return range;
}

// One unit of a (possibly persistent, possibly split-K) launch: units [0, tiles * splits) are walked by
// CTAs with stride gridDim.x. Units of one split are adjacent, so the CTAs running together share operands
// through L2 as in a plain launch.
struct TfUnit {
  TfTile tile;
  tf_i64 split;
};

TF_HOST_DEVICE inline TfUnit tf_unit_map(tf_i64 unit, tf_i64 tiles_m, tf_i64 tiles_n, tf_i64 group_m,
                                         int clamp_last_group) {
  const tf_i64 tiles = tiles_m * tiles_n;
  TfUnit u;
  u.split = unit / tiles;
  u.tile = tf_tile_map(unit % tiles, tiles_m, tiles_n, group_m, clamp_last_group);
  return u;
}

// Unit `unit` of a launch in clusters (tf_cluster_tile) that splits K in `splits`: units
// [0, cluster tiles × splits), those of one split adjacent; both CTAs of a cluster take the same unit, and
// this is CTA `rank`'s tile of it. With 1 x 1 clusters this is tf_unit_map.
TF_HOST_DEVICE inline TfUnit tf_cluster_unit(tf_i64 unit, int rank, tf_i64 tiles_m, tf_i64 tiles_n, int cluster_m,
                                             int cluster_n, tf_i64 group_m) {
  const tf_i64 cluster_tiles = tf_ceil_div(tiles_m, cluster_m) * tf_ceil_div(tiles_n, cluster_n);
  TfUnit u;
  u.split = unit / cluster_tiles;
  u.tile = tf_cluster_tile(unit % cluster_tiles, rank, tiles_m, tiles_n, cluster_m, cluster_n, group_m);
  return u;
}

// Split-K's second pass (templates/split_k.h) runs TF_REDUCE_THREADS threads per CTA and gives each quad of C
// (four columns of a row) a group of `lanes` of them: the largest power of two up to 32, up to `splits`, for
// which a launch of `threads` threads has that many per quad of the `quads`. The host sizes the launch with
// it from TF_REDUCE_BUSY_THREADS (split_k_reduce_geometry) and the kernel reads it back from its launch.
// About 2^15 threads in all kept the pass fastest on an H200 (132 SMs) at every shape
// scripts/reduce_probe.cu timed: one 128x128 tile in 64-128 splits 10.0-16.5 us with one thread per quad,
// 5.6-6.8 us with 8; 64x64 in 128 splits 15.8 us, 5.2 us with 32; 256x256 in 16 splits 5.6, 4.9 with 2;
// 512x512 and larger outputs fastest with one thread per quad, which then walks the splits as before
// (results/reduce-probe-h200-ad3b621/).
#define TF_REDUCE_THREADS 256
#define TF_REDUCE_BUSY_THREADS 32768
TF_HOST_DEVICE inline int tf_reduce_lanes(tf_i64 splits, tf_i64 quads, tf_i64 threads) {
  int lanes = 1;
  while (lanes < 32 && 2 * lanes <= splits && quads * 2 * lanes <= threads) lanes *= 2;
  return lanes;
}

#endif  // TUNEFUZZ_TILE_MAP_H
