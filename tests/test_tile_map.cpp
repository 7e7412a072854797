// Laws of the CTA-to-tile mapping (templates/tile_map.h), which the kernels run on the device and these
// tests run on the host. The law: for every grid, the indices [0, tiles_m * tiles_n) map one to one onto
// the (m, n) tiles. Its mutant (clamp_last_group = 0, the "assume the last group is full" bug) breaks the
// law exactly when the last group of rows is short and there is more than one tile column, which shows the
// law can fail. RapidCheck prints the seed of a failing run; replay it with RC_PARAMS="seed=...".
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "templates/tile_map.h"
#include "runtime/templates/gemm_mma.hpp"
#include "runtime/templates/gemm_rules.hpp"
#include "runtime/templates/gemm_wgmma.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace {

/// Visits of every tile when indices [0, tiles_m * tiles_n) are mapped; `out_of_range` counts indices that
/// land outside the grid.
struct Visits {
  std::vector<int> count;  // (tiles_m, tiles_n) row-major
  int64_t out_of_range = 0;

  bool each_exactly_once() const {
    if (out_of_range) return false;
    for (int c : count)
      if (c != 1) return false;
    return true;
  }
};

Visits map_grid(int64_t tiles_m, int64_t tiles_n, int64_t group_m, int clamp_last_group) {
  Visits v;
  v.count.assign(static_cast<size_t>(tiles_m * tiles_n), 0);
  for (int64_t index = 0; index < tiles_m * tiles_n; ++index) {
    const TfTile tile = tf_tile_map(index, tiles_m, tiles_n, group_m, clamp_last_group);
    if (tile.m < 0 || tile.m >= tiles_m || tile.n < 0 || tile.n >= tiles_n)
      ++v.out_of_range;
    else
      ++v.count[static_cast<size_t>(tile.m * tiles_n + tile.n)];
  }
  return v;
}

RC_GTEST_PROP(TileMap, EveryTileIsVisitedExactlyOnceAndInRange, ()) {
  const int64_t tiles_m = *rc::gen::inRange<int64_t>(1, 301).as("tiles_m");
  const int64_t tiles_n = *rc::gen::inRange<int64_t>(1, 301).as("tiles_n");
  const int64_t group_m = *rc::gen::inRange<int64_t>(1, 41).as("group_m");
  const Visits v = map_grid(tiles_m, tiles_n, group_m, 1);
  RC_ASSERT(v.out_of_range == 0);
  for (size_t i = 0; i < v.count.size(); ++i)
    if (v.count[i] != 1) {
      RC_FAIL("tile (" + std::to_string(i / tiles_n) + ", " + std::to_string(i % tiles_n) + ") visited " +
              std::to_string(v.count[i]) + " times");
    }
}

// The mutant: without clamping, the last group is assumed to hold group_m rows. That is harmless when it
// really does (tiles_m % group_m == 0) or when there is one tile column (each index of the short group then
// still lands on its own row); otherwise index `rows_in_last_group` of that group lands on row tiles_m.
RC_GTEST_PROP(TileMap, TheUnclampedMutantBreaksTheLawExactlyWhenTheLastGroupIsShort, ()) {
  const int64_t tiles_m = *rc::gen::inRange<int64_t>(1, 301).as("tiles_m");
  const int64_t tiles_n = *rc::gen::inRange<int64_t>(1, 301).as("tiles_n");
  const int64_t group_m = *rc::gen::inRange<int64_t>(1, 41).as("group_m");
  const bool short_last_group = tiles_m % group_m != 0 && tiles_n > 1;
  RC_ASSERT(map_grid(tiles_m, tiles_n, group_m, 0).each_exactly_once() == !short_last_group);
}

// The case named in the mutant's description: more rows than one group, not a multiple of it.
RC_GTEST_PROP(TileMap, TheUnclampedMutantMissesOrRepeatsTilesWhenGroupsDoNotDivideTheRows, ()) {
  const int64_t group_m = *rc::gen::inRange<int64_t>(2, 41).as("group_m");
  const int64_t full_groups = *rc::gen::inRange<int64_t>(1, 300 / group_m + 1).as("full groups");
  const int64_t remainder = *rc::gen::inRange<int64_t>(1, group_m).as("rows in the last group");
  const int64_t tiles_m = full_groups * group_m + remainder;
  const int64_t tiles_n = *rc::gen::inRange<int64_t>(2, 301).as("tiles_n");
  RC_ASSERT(!map_grid(tiles_m, tiles_n, group_m, 0).each_exactly_once());
  RC_ASSERT(map_grid(tiles_m, tiles_n, group_m, 1).each_exactly_once());
}

TEST(TileMap, CeilDivisionCountsPartialTiles) {
  EXPECT_EQ(tf_ceil_div(1, 128), 1);
  EXPECT_EQ(tf_ceil_div(128, 128), 1);
  EXPECT_EQ(tf_ceil_div(129, 128), 2);
  EXPECT_EQ(tf_ceil_div(4097, 256), 17);
  EXPECT_EQ(tf_ceil_div(0, 64), 0);
}

/// An output extent in [1, 1200] for tiles of `tile`: odd (never a whole number of tiles) three times in
/// four, else an exact multiple of the tile, where a floor division would still be right.
rc::Gen<int64_t> gen_extent(int64_t tile) {
  return rc::gen::weightedOneOf<int64_t>(
      {{3, rc::gen::map(rc::gen::inRange<int64_t>(0, 600), [](int64_t half) { return 2 * half + 1; })},
       {1, rc::gen::map(rc::gen::inRange<int64_t>(1, 1200 / tile + 1),
                        [tile](int64_t t) { return t * tile; })}});
}

// The K partition law: for any K tile count and split count (more splits than tiles included), the splits'
// ranges are in order, disjoint, cover [0, k_tiles) exactly, and differ in size by at most one.
RC_GTEST_PROP(KRange, SplitsPartitionTheKTilesInOrder, ()) {
  const int64_t k_tiles = *rc::gen::inRange<int64_t>(1, 5000).as("k_tiles");
  const int64_t splits = *rc::gen::inRange<int64_t>(1, 300).as("splits");
  int64_t next = 0, smallest = k_tiles, largest = 0;
  for (int64_t split = 0; split < splits; ++split) {
    const TfKRange r = tf_k_range(k_tiles, splits, split, 0);
    RC_ASSERT(r.begin == next);
    RC_ASSERT(r.end >= r.begin);
    next = r.end;
    smallest = std::min(smallest, r.end - r.begin);
    largest = std::max(largest, r.end - r.begin);
  }
  RC_ASSERT(next == k_tiles);
  RC_ASSERT(largest - smallest <= 1);
}

// Its mutant (every split gets k_tiles / splits tiles) loses tiles exactly when splits does not divide them.
RC_GTEST_PROP(KRange, TheDropRemainderMutantLosesTilesExactlyWhenSplitsDoNotDivide, ()) {
  const int64_t k_tiles = *rc::gen::inRange<int64_t>(1, 5000).as("k_tiles");
  const int64_t splits = *rc::gen::inRange<int64_t>(1, 300).as("splits");
  int64_t covered = 0;
  for (int64_t split = 0; split < splits; ++split) {
    const TfKRange r = tf_k_range(k_tiles, splits, split, 1);
    covered += r.end - r.begin;
  }
  RC_ASSERT((covered == k_tiles) == (k_tiles % splits == 0));
}

// The law on the kernel's own launch: for odd M and N (and whole multiples of the tile), any split count and
// any grid (persistent or not), the CTAs of the grid gemm_mma's launcher requests, each walking units with
// stride grid through tf_unit_map and tf_k_range and skipping out-of-range tiles as the kernel does, cover
// every (output tile, K tile) pair exactly once; and the tiles cover the M x N output exactly.
RC_GTEST_PROP(TileMap, TheKernelWalkCoversEveryTileAndKTileOnce, ()) {
  const int64_t bm = *rc::gen::element<int64_t>(16, 64, 128, 256).as("BM");
  const int64_t bn = *rc::gen::element<int64_t>(64, 128, 256).as("BN");
  const int64_t bk = *rc::gen::element<int64_t>(32, 64).as("BK");
  const int64_t m = *gen_extent(bm).as("M");
  const int64_t n = *gen_extent(bn).as("N");
  const int64_t k = *rc::gen::inRange<int64_t>(1, 1500).as("K");
  const int64_t group_m = *rc::gen::inRange<int64_t>(1, 17).as("GROUP_M");
  const int64_t k_tiles = tf_ceil_div(k, bk);
  const int64_t splits = *rc::gen::inRange<int64_t>(1, k_tiles + 3).as("splits");
  const int64_t tiles_m = tf_ceil_div(m, bm), tiles_n = tf_ceil_div(n, bn);
  const int64_t units = tiles_m * tiles_n * splits;
  const int64_t grid_override = *rc::gen::inRange<int64_t>(0, units + 2).as("grid (0 = one CTA per unit)");

  const tunefuzz::KernelTemplate& gemm = tunefuzz::find_template("gemm_mma");
  std::vector<std::pair<std::string, int64_t>> values = gemm.default_point().values();
  for (auto& [name, value] : values) {
    if (name == "BM") value = bm;
    if (name == "BN") value = bn;
    if (name == "BK") value = bk;
    if (name == "GROUP_M") value = group_m;
  }
  tunefuzz::GemmShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.lda = k;
  shape.ldb = shape.ldc = n;
  const tunefuzz::LaunchGeometry geo =
      tunefuzz::gemm_mma_geometry(tunefuzz::Point(values), shape, {splits, grid_override}, 2);
  const int64_t grid = geo.grid_x;
  RC_ASSERT(grid == (grid_override > 0 ? std::min(units, grid_override) : units));
  if (splits > 1) RC_ASSERT(geo.workspace_bytes >= splits * m * tunefuzz::split_k_partial_ld(shape) * 4);

  RC_ASSERT(tiles_m * bm >= m);
  RC_ASSERT((tiles_m - 1) * bm < m);
  RC_ASSERT(tiles_n * bn >= n);
  RC_ASSERT((tiles_n - 1) * bn < n);

  std::vector<uint8_t> visits(static_cast<size_t>(tiles_m * tiles_n * k_tiles), 0);
  for (int64_t block = 0; block < grid; ++block)
    for (int64_t unit = block; unit < units; unit += grid) {
      const TfUnit u = tf_unit_map(unit, tiles_m, tiles_n, group_m, 1);
      if (u.tile.m >= tiles_m || u.tile.n >= tiles_n) continue;  // the kernel's guard
      RC_ASSERT(u.split < splits);
      const TfKRange r = tf_k_range(k_tiles, splits, u.split, 0);
      for (int64_t kt = r.begin; kt < r.end; ++kt)
        ++visits[static_cast<size_t>((u.tile.m * tiles_n + u.tile.n) * k_tiles + kt)];
    }
  for (size_t i = 0; i < visits.size(); ++i)
    if (visits[i] != 1) {
      const auto tile = static_cast<int64_t>(i) / k_tiles;
      RC_FAIL("tile (" + std::to_string(tile / tiles_n) + ", " + std::to_string(tile % tiles_n) +
              "), K tile " + std::to_string(static_cast<int64_t>(i) % k_tiles) + " visited " +
              std::to_string(visits[i]) + " times");
    }
}

// The same law for gemm_wgmma's clusters and K splits: on the grid its launcher requests (every unit, or a
// persistent grid rounded up to whole clusters), each cluster walking units with stride `clusters` and each
// of its CTAs taking its tile and split through tf_cluster_unit and its K tiles through tf_k_range, skipping
// tiles past the matrix as the kernel does, every K tile of every output tile is computed exactly once; both
// CTAs of a cluster walk the same units (they share a ring, so they must); and a shared operand's half boxes
// add up to the whole box.
RC_GTEST_PROP(TileMap, TheClusterWalkComputesEveryTileOnce, ()) {
  const int64_t bm = *rc::gen::element<int64_t>(64, 128, 256).as("BM");
  const int64_t bn = *rc::gen::element<int64_t>(64, 128, 192, 256).as("BN");
  const auto [cluster_m, cluster_n] =
      *rc::gen::element(std::pair<int64_t, int64_t>{1, 1}, std::pair<int64_t, int64_t>{2, 1},
                        std::pair<int64_t, int64_t>{1, 2})
           .as("CLUSTER_M x CLUSTER_N");
  const int64_t m = *gen_extent(bm).as("M");
  const int64_t n = *gen_extent(bn).as("N");
  const int64_t group_m = *rc::gen::inRange<int64_t>(1, 17).as("GROUP_M");
  const int64_t tiles_m = tf_ceil_div(m, bm), tiles_n = tf_ceil_div(n, bn);
  const int64_t splits = *rc::gen::inRange<int64_t>(1, 6).as("splits");
  const int64_t k_tiles = *rc::gen::inRange<int64_t>(1, 9).as("K tiles");
  const int64_t requested =
      *rc::gen::inRange<int64_t>(0, tiles_m * tiles_n * splits + 4).as("grid (0 = every unit)");

  const tunefuzz::KernelTemplate& wgmma = tunefuzz::find_template("gemm_wgmma");
  std::vector<std::pair<std::string, int64_t>> values = wgmma.default_point().values();
  for (auto& [name, value] : values) {
    if (name == "BM") value = bm;
    if (name == "BN") value = bn;
    if (name == "GROUP_M") value = group_m;
    if (name == "CLUSTER_M") value = cluster_m;
    if (name == "CLUSTER_N") value = cluster_n;
  }
  const tunefuzz::Point point(values);
  tunefuzz::GemmShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = shape.lda = 64;
  shape.ldb = shape.ldc = n;
  const int64_t size = cluster_m * cluster_n;
  const int64_t grid = tunefuzz::gemm_wgmma_grid(point, shape, requested, splits);
  RC_ASSERT(grid % size == 0);
  // never fewer CTAs than asked, units allowing
  RC_ASSERT(grid >= std::min(requested, tiles_m * tiles_n * splits));
  RC_ASSERT(wgmma.geometry(point, shape).cluster_x == size);
  const int64_t clusters = grid / size;
  const int64_t units = tf_ceil_div(tiles_m, cluster_m) * tf_ceil_div(tiles_n, cluster_n) * splits;

  std::vector<int> visits(static_cast<size_t>(tiles_m * tiles_n * k_tiles), 0);
  for (int64_t cluster = 0; cluster < clusters; ++cluster) {
    std::vector<int64_t> walked[2];
    for (int rank = 0; rank < size; ++rank)
      for (int64_t index = cluster; index < units; index += clusters) {
        const TfUnit u = tf_cluster_unit(index, rank, tiles_m, tiles_n, static_cast<int>(cluster_m),
                                         static_cast<int>(cluster_n), group_m);
        const TfKRange kr = tf_k_range(k_tiles, splits, u.split, 0);
        walked[rank].push_back(kr.end - kr.begin);
        RC_ASSERT(u.tile.m >= 0 && u.tile.n >= 0 && u.tile.m < tiles_m + 1 && u.tile.n < tiles_n + 1);
        RC_ASSERT(u.split >= 0 && u.split < splits);
        if (u.tile.m >= tiles_m || u.tile.n >= tiles_n) continue;  // the kernel stores nothing there
        for (int64_t kt = kr.begin; kt < kr.end; ++kt)
          ++visits[static_cast<size_t>((u.tile.m * tiles_n + u.tile.n) * k_tiles + kt)];
      }
    if (size == 2) RC_ASSERT(walked[0] == walked[1]);
  }
  for (size_t i = 0; i < visits.size(); ++i)
    if (visits[i] != 1) {
      const auto tile = static_cast<int64_t>(i) / k_tiles;
      RC_FAIL("tile (" + std::to_string(tile / tiles_n) + ", " + std::to_string(tile % tiles_n) + "), K tile " +
              std::to_string(static_cast<int64_t>(i) % k_tiles) + " computed " + std::to_string(visits[i]) +
              " times");
    }

  for (const bool is_a : {true, false})
    for (const bool along_k : {true, false}) {
      const int64_t parts = is_a ? cluster_n : cluster_m;
      const tunefuzz::TmaBox box = tunefuzz::gemm_wgmma_operand_box(point, is_a, along_k, 2);
      RC_ASSERT(box.inner == 64);
      RC_ASSERT(box.outer * parts == (along_k ? (is_a ? bm : bn) : point["BK"]));
      RC_ASSERT(box.outer % 8 == 0);  // halves start a whole swizzle period (8 rows of 128 bytes) apart
    }
}

// Split-K's second pass (templates/split_k.h) on the launch split_k_reduce_geometry gives it, walked as the
// kernel walks it: the group size read back from the launch (tf_reduce_lanes) is the one the host sized the
// launch for; with one lane each thread adds every split of quads t, t + threads, ...; with more, each CTA
// takes TF_REDUCE_THREADS / lanes quads a step, lane j of a group adding splits j, j + lanes, ... and lane 0
// adding the group's sums (within the group's slots of the CTA's shared array) and storing the quad. So
// every (quad, split) partial is added exactly once, each quad stored once, and no group reads another's
// slot.
RC_GTEST_PROP(TileMap, TheReduceAddsEveryPartialOnce, ()) {
  tunefuzz::GemmShape shape;
  shape.m = *rc::gen::inRange<int64_t>(1, 600).as("M");
  shape.n = *rc::gen::inRange<int64_t>(1, 600).as("N");
  const int64_t splits = *rc::gen::inRange<int64_t>(1, 200).as("splits");
  const tunefuzz::LaunchGeometry geo = tunefuzz::split_k_reduce_geometry(shape, splits);
  RC_ASSERT(geo.block_x == TF_REDUCE_THREADS);
  RC_ASSERT(geo.grid_x >= 1 && geo.grid_x <= 65535);
  const int64_t quads = shape.m * tunefuzz::split_k_partial_ld(shape) / 4;
  const int64_t threads = geo.grid_x * geo.block_x;
  const int lanes = tf_reduce_lanes(splits, quads, threads);
  RC_ASSERT(lanes == tf_reduce_lanes(splits, quads, TF_REDUCE_BUSY_THREADS));  // the host's choice
  RC_ASSERT(lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0 && (lanes == 1 || lanes <= splits));
  RC_ASSERT(geo.block_x % lanes == 0);
  std::vector<int64_t> added(static_cast<size_t>(quads * splits), 0), stored(static_cast<size_t>(quads), 0);
  if (lanes == 1) {
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t q = t; q < quads; q += threads) {
        for (int64_t s = 0; s < splits; ++s) ++added[static_cast<size_t>(q * splits + s)];
        ++stored[static_cast<size_t>(q)];
      }
  } else {
    const int64_t groups = geo.block_x / lanes;
    for (int64_t block = 0; block < geo.grid_x; ++block)
      for (int64_t first = block * groups; first < quads; first += geo.grid_x * groups)
        for (int64_t t = 0; t < geo.block_x; ++t) {
          const int64_t q = first + t / lanes, lane = t % lanes;
          if (q >= quads) continue;
          for (int64_t s = lane; s < splits; s += lanes) ++added[static_cast<size_t>(q * splits + s)];
          if (lane == 0) {
            RC_ASSERT(t + lanes - 1 < geo.block_x && (t + lanes - 1) / lanes == t / lanes);
            ++stored[static_cast<size_t>(q)];
          }
        }
  }
  RC_ASSERT(std::all_of(added.begin(), added.end(), [](int64_t n) { return n == 1; }));
  RC_ASSERT(std::all_of(stored.begin(), stored.end(), [](int64_t n) { return n == 1; }));
}

// The law above, on every output of up to 2^15 quads (where groups can be wider than one lane) and every
// split count up to 256, rather than on RapidCheck's draws: the launch rounds the host's threads up to whole
// CTAs, and the group size the kernel reads back from it is still the host's (a wider one would need twice
// the quads' threads, more than the rounding adds).
TEST(TileMap, TheKernelReadsBackTheHostsGroupSizeOnEverySmallOutput) {
  int64_t differ = 0, widened = 0;
  for (int64_t quads = 1; quads <= 32768; ++quads)
    for (int64_t splits = 1; splits <= 256; ++splits) {
      tunefuzz::GemmShape row;  // one row of 4·quads columns: `quads` quads
      row.m = 1;
      row.n = 4 * quads;
      const int host = tf_reduce_lanes(splits, quads, TF_REDUCE_BUSY_THREADS);
      const tunefuzz::LaunchGeometry g = tunefuzz::split_k_reduce_geometry(row, splits);
      differ += tf_reduce_lanes(splits, quads, g.grid_x * g.block_x) != host;
      widened += host > 1;
    }
  EXPECT_EQ(differ, 0);
  EXPECT_GT(widened, 0);
  // One row of 64 columns (16 quads) in 32 splits: 32 lanes, on the 2 CTAs the host launches.
  tunefuzz::GemmShape row;
  row.m = 1;
  row.n = 64;
  const tunefuzz::LaunchGeometry g = tunefuzz::split_k_reduce_geometry(row, 32);
  EXPECT_EQ(g.grid_x, 2);
  EXPECT_EQ(tf_reduce_lanes(32, 16, g.grid_x * g.block_x), 32);
}

// The group sizes reduce_probe found fastest on an H200 (tile_map.h): about 2^15 threads in all, one lane per
// quad from 512x512 up.
TEST(TileMap, TheReduceWidensItsGroupsOnlyForSmallOutputs) {
  const auto lanes = [](int64_t m, int64_t n, int64_t splits) {
    tunefuzz::GemmShape s;
    s.m = m;
    s.n = n;
    const tunefuzz::LaunchGeometry g = tunefuzz::split_k_reduce_geometry(s, splits);
    return tf_reduce_lanes(splits, s.m * tunefuzz::split_k_partial_ld(s) / 4, g.grid_x * g.block_x);
  };
  EXPECT_EQ(lanes(128, 128, 128), 8);  // 4096 quads: 128 CTAs instead of 16
  EXPECT_EQ(lanes(128, 128, 64), 8);
  EXPECT_EQ(lanes(64, 64, 128), 32);
  EXPECT_EQ(lanes(128, 128, 4), 4);  // never more lanes than splits
  EXPECT_EQ(lanes(256, 256, 16), 2);
  EXPECT_EQ(lanes(512, 512, 8), 1);  // 65536 quads already fill the GPU: the one-thread walk
  EXPECT_EQ(lanes(4096, 40, 2), 1);
  EXPECT_EQ(lanes(4096, 4096, 64), 1);
  tunefuzz::GemmShape tiny, large;
  tiny.m = tiny.n = 128;
  large.m = large.n = 4096;
  EXPECT_EQ(tunefuzz::split_k_reduce_geometry(tiny, 128).grid_x, 128);
  EXPECT_EQ(tunefuzz::split_k_reduce_geometry(large, 2).grid_x, 16384);
}

}  // namespace
