#include "fuzz/generators.hpp"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace tunefuzz::fuzz {

namespace {

using rc::Gen;
namespace gen = rc::gen;

int64_t round_down(int64_t value, int64_t unit) {
  return std::max(unit, value / unit * unit);
}

constexpr int kFullSize = 100;  // RapidCheck's nominal full size

// RapidCheck's element/oneOf choices never shrink. These draw with inRange, which shrinks toward its lower
// bound, so a failing case's choices shrink toward the first alternative: list the simplest first. inRange
// also narrows with the test size; at a fixed full size the draw is uniform over the whole run.
template <class T>
Gen<T> choice(std::vector<T> values) {
  return gen::map(gen::resize(kFullSize, gen::inRange<size_t>(0, values.size())),
                  [values](size_t i) { return values[i]; });
}

template <class T>
Gen<T> weighted_choice(std::vector<std::pair<int, T>> options) {
  int total = 0;
  for (const auto& option : options) total += option.first;
  return gen::map(gen::resize(kFullSize, gen::inRange(0, total)), [options](int draw) {
    for (const auto& [weight, value] : options) {
      if (draw < weight) return value;
      draw -= weight;
    }
    return options.back().second;
  });
}

template <class T>
Gen<T> weighted_one_of(std::vector<std::pair<int, Gen<T>>> options) {
  std::vector<std::pair<int, size_t>> indices;
  std::vector<Gen<T>> generators;
  for (size_t i = 0; i < options.size(); ++i) {
    indices.emplace_back(options[i].first, i);
    generators.push_back(options[i].second);
  }
  return gen::mapcat(weighted_choice(indices), [generators](size_t i) { return generators[i]; });
}

// A size in multiples of `unit`, aimed at the edges of `tile`.
Gen<int64_t> gen_dimension(int64_t tile, int64_t unit) {
  const int64_t small_units = std::max<int64_t>(1, 20 / unit);
  return weighted_one_of<int64_t>({
      {3, gen::map(gen::inRange<int64_t>(1, small_units + 1), [unit](int64_t u) { return u * unit; })},
      {3, gen::apply([tile, unit](int64_t tiles,
                                  int64_t offset) { return std::max(unit, tiles * tile + offset * unit); },
                     gen::inRange<int64_t>(1, 4), choice<int64_t>({0, -1, 1}))},
      {2, gen::map(gen::inRange<int64_t>(1, 4 * tile / unit + 2), [unit](int64_t u) { return u * unit; })},
  });
}

// K aimed at the pipeline: below one tile, exactly one, around the prologue depth, and moderate sizes.
Gen<int64_t> gen_depth(const CaseSpace& s) {
  const int64_t u = s.k_unit, bk = s.tile_k;
  const int64_t pipeline = bk * (s.stages + 1);
  return weighted_one_of<int64_t>({
      {2, gen::map(gen::inRange<int64_t>(1, std::max<int64_t>(1, 20 / u) + 1),
                   [u](int64_t x) { return x * u; })},
      {3, gen::map(choice<int64_t>({bk, bk - u, bk + u, pipeline - u, pipeline, bk * s.stages, 2 * bk - u}),
                   [u](int64_t k) { return std::max(u, k); })},
      {2, gen::map(gen::inRange<int64_t>(1, 2048 / u + 1), [u](int64_t x) { return x * u; })},
  });
}

struct Shape {
  int64_t m, n, k;
};

// Mostly general shapes; sometimes large K with small M, N; sometimes a grid of a fractional number of waves.
Gen<Shape> gen_shape(const CaseSpace& s) {
  const Gen<Shape> general = gen::apply(
      [](int64_t m, int64_t n, int64_t k) {
        return Shape{m, n, k};
      },
      gen_dimension(s.tile_m, 1), gen_dimension(s.tile_n, s.n_unit), gen_depth(s));
  const int64_t u = s.k_unit;
  const Gen<Shape> large_k = gen::apply(
      [](int64_t m, int64_t n, int64_t k) {
        return Shape{m, n, k};
      },
      gen::inRange<int64_t>(1, 33),
      gen::map(gen::inRange<int64_t>(1, 5), [nu = s.n_unit](int64_t x) { return x * nu; }),
      gen::map(gen::inRange<int64_t>(65536 / u, 70000 / u), [u](int64_t x) { return x * u; }));
  // Waves: tiles ≈ 0.5, 1.25 or 2.5 × SMs, as a near-square grid with partial tiles at the edges. These
  // shapes come from a formula, not a range, so they get their own shrinks: halve M, N or K, or step them
  // down by one unit, which leads a failure that needs a big grid to the smallest grid that still fails.
  const CaseSpace copy = s;
  const auto waves_shape = [copy](int tenths, int64_t k) {
    const int64_t tiles = std::max<int64_t>(1, copy.sm_count * tenths / 10);
    int64_t tiles_m = 1;
    while (tiles_m * tiles_m < tiles) ++tiles_m;
    const int64_t tiles_n = (tiles + tiles_m - 1) / tiles_m;
    const int64_t m = tiles_m * copy.tile_m - copy.tile_m / 2;
    const int64_t n = round_down(tiles_n * copy.tile_n - copy.tile_n / 2, copy.n_unit);
    return Shape{std::max<int64_t>(1, m), n, k};
  };
  const auto smaller_shapes = [copy](const Shape& x) {
    std::vector<Shape> out;
    if (x.m > 1) out.push_back({x.m / 2 > 0 ? x.m / 2 : 1, x.n, x.k});
    if (x.n > copy.n_unit) out.push_back({x.m, round_down(x.n / 2, copy.n_unit), x.k});
    if (x.k > copy.k_unit) out.push_back({x.m, x.n, round_down(x.k / 2, copy.k_unit)});
    if (x.m > 1) out.push_back({x.m - 1, x.n, x.k});
    if (x.n > copy.n_unit) out.push_back({x.m, x.n - copy.n_unit, x.k});
    if (x.k > copy.k_unit) out.push_back({x.m, x.n, x.k - copy.k_unit});
    return rc::seq::fromContainer(std::move(out));
  };
  const Gen<Shape> waves = [waves_shape, smaller_shapes, u](const rc::Random& random, int) {
    rc::Random r(random);
    static constexpr int kTenths[] = {5, 12, 25};
    const int tenths = kTenths[r.next() % 3];
    const int64_t k = static_cast<int64_t>(1 + r.next() % 7) * u;
    return rc::shrinkable::shrinkRecur(waves_shape(tenths, k), smaller_shapes);
  };
  // Huge: C's element offsets cross 2^31 (row·ldc), with K small so the work stays modest. Not capped by
  // max_macs: the executor checks such cases with projections instead of a full reference.
  const int64_t nu = s.n_unit;
  const Gen<Shape> huge = gen::apply(
      [nu](int64_t extra_rows, int64_t n_units, int64_t k) {
        const int64_t n = n_units * nu;
        const int64_t m = (int64_t{1} << 31) / n + extra_rows;
        return Shape{m, n, k};
      },
      gen::inRange<int64_t>(1, 300), gen::inRange<int64_t>(32768 / nu, 32768 / nu + 8),
      gen::map(gen::inRange<int64_t>(1, 5), [u](int64_t x) { return x * u; }));
  if (s.huge_weight > 0)
    return weighted_one_of<Shape>({{6, general}, {1, large_k}, {1, waves}, {s.huge_weight, huge}});
  return weighted_one_of<Shape>({{6, general}, {1, large_k}, {1, waves}});
}

}  // namespace

std::vector<CaseRecord> sanitizer_cases(const CaseSpace& space) {
  const int64_t unit = std::lcm(space.k_unit, space.n_unit);
  const auto round_up = [unit](int64_t value) { return (value + unit - 1) / unit * unit; };
  const int64_t m = round_up(space.tile_m), n = round_up(space.tile_n), k = round_up(space.tile_k);
  const int64_t ring = round_up(space.stages * space.tile_k);
  std::vector<CaseRecord> cases(3);
  for (CaseRecord& c : cases) {
    c.layout = space.layouts.front();
    c.distribution = Distribution::small_int;
    c.seed = 1;
  }
  // A candidate that takes M up to one tile (max_m) gets its tiles along N alone.
  const auto rows = [&space](int64_t m) { return space.max_m > 0 ? std::min(m, space.max_m) : m; };
  cases[0].m = rows(2 * m);
  cases[0].n = 2 * n;
  cases[0].k = 3 * ring;
  cases[0].grid = space.varies_grid ? 2 : 0;
  cases[1].m = rows(m + unit);
  cases[1].n = n + unit;
  cases[1].k = k + unit;
  cases[1].alpha = 2;
  cases[1].beta = 1;
  cases[2].m = rows(3 * m);
  cases[2].n = n;
  cases[2].k = 2 * ring;
  cases[2].grid = space.varies_grid ? 1 : 0;
  cases[2].splits = space.varies_splits ? 3 : 0;
  return cases;
}

Steps default_steps(const CaseSpace& s, const Layout& layout) {
  Steps steps{};
  const auto set = [&steps](Dimension d, int64_t step) { steps[static_cast<size_t>(d)] = step; };
  set(Dimension::m, layout.a == Order::col ? s.k_unit : 1);
  set(Dimension::n, s.n_unit);
  set(Dimension::k, layout.b == Order::col ? std::lcm(s.k_unit, s.n_unit) : s.k_unit);
  set(Dimension::lda, s.k_unit);
  set(Dimension::ldb, s.n_unit);
  set(Dimension::ldc, 1);
  set(Dimension::a_offset, s.k_unit);
  set(Dimension::b_offset, s.n_unit);
  set(Dimension::c_offset, 1);
  return steps;
}

namespace {

// A residue draw per dimension: below kOnUnit the dimension stays as drawn (on its preferred unit); from
// there on it takes one of the residues modulo 16 bytes of its element that its step allows, uniformly.
// Shrinks go back to the value as drawn.
constexpr int kOnUnit = 32, kResidueDraws = 64;

/// The residue `draw` picks modulo `modulus` among the multiples of `step`, or -1 to keep the value.
int64_t residue_of(int draw, int64_t modulus, int64_t step) {
  if (draw < kOnUnit || modulus % step != 0 || modulus / step < 2) return -1;
  return step * ((draw - kOnUnit) % (modulus / step));
}

/// Moves a record drawn on the preferred units onto the steps of its layout, and to other residues where
/// its residue draws say so: sizes move down (to stay within the cap, never to zero), leading dimensions up
/// (to span their rows), offsets within their period.
void apply_steps(CaseRecord& r, const Steps& steps, const CaseSpace& s, const std::vector<int>& draws) {
  const auto step_of = [&](Dimension d) { return steps[static_cast<size_t>(d)]; };
  const auto residue_for = [&](Dimension d) {
    return residue_of(draws[static_cast<size_t>(d)], residue_modulus(d, s), step_of(d));
  };
  for (Dimension d : {Dimension::m, Dimension::n, Dimension::k}) {
    int64_t& v = d == Dimension::m ? r.m : d == Dimension::n ? r.n : r.k;
    if (v == 0) continue;
    const int64_t step = step_of(d), modulus = residue_modulus(d, s);
    v = std::max(step, v / step * step);
    if (const int64_t residue = residue_for(d); residue >= 0) {
      const int64_t below = v - v % modulus + residue - (residue > v % modulus ? modulus : 0);
      v = below > 0 ? below : residue > 0 ? residue : modulus;
    }
  }
  for (Dimension d : {Dimension::lda, Dimension::ldb, Dimension::ldc}) {
    int64_t& pad = d == Dimension::lda ? r.lda_pad : d == Dimension::ldb ? r.ldb_pad : r.ldc_pad;
    const int64_t step = step_of(d), modulus = residue_modulus(d, s);
    const int64_t extent = value_of(r, d) - pad;
    int64_t ld = (extent + pad + step - 1) / step * step;
    if (const int64_t residue = residue_for(d); residue >= 0)
      ld = (ld + modulus - 1) / modulus * modulus + residue;
    pad = ld - extent;
  }
  for (Dimension d : {Dimension::a_offset, Dimension::b_offset, Dimension::c_offset}) {
    int64_t& v = d == Dimension::a_offset ? r.a_offset : d == Dimension::b_offset ? r.b_offset : r.c_offset;
    const int64_t step = step_of(d), modulus = residue_modulus(d, s);
    v = (v + step - 1) / step * step;
    if (const int64_t residue = residue_for(d); residue >= 0) v = v - v % modulus + residue;
  }
}

}  // namespace

Gen<CaseRecord> gen_broad_case(const CaseSpace& space) {
  const CaseSpace s = space;
  using Scalars = std::pair<double, double>;
  const Gen<Scalars> scalars =
      choice<Scalars>({{1.0, 0.0}, {1.0, 0.0}, {0.0, 3.0}, {1.0, 1.0}, {2.0, -1.0}, {0.5, 0.0}, {-1.0, 0.5}});
  const Gen<Distribution> distribution = weighted_choice<Distribution>({{4, Distribution::small_int},
                                                                        {1, Distribution::ones},
                                                                        {1, Distribution::sequential},
                                                                        {2, Distribution::normal},
                                                                        {1, Distribution::alternating},
                                                                        {1, Distribution::large},
                                                                        {1, Distribution::denormal},
                                                                        {1, Distribution::sparse_nonfinite},
                                                                        {1, Distribution::identity}});
  // Base-pointer offsets for A, B (in preferred units) and C (any element), mostly zero; apply_steps moves
  // them off the units where the candidate allows.
  const Gen<std::vector<int64_t>> offsets =
      gen::container<std::vector<int64_t>>(3, weighted_choice<int64_t>({{6, 0}, {1, 1}, {1, 3}}));
  const Gen<int64_t> pad_a =
      gen::map(choice<int64_t>({0, 0, 0, 1, 8}), [s](int64_t p) { return p * s.k_unit; });
  const Gen<int64_t> pad_b =
      gen::map(choice<int64_t>({0, 0, 0, 1, 8}), [s](int64_t p) { return p * s.n_unit; });
  // Launch overrides: 0 keeps the candidate's own; a negative split code stands for the K tile count (-1)
  // and one more (-2), resolved once K is known.
  const Gen<int64_t> splits =
      s.varies_splits ? weighted_choice<int64_t>({{4, 0}, {1, 1}, {1, 2}, {1, 3}, {1, -1}, {1, -2}})
                      : gen::just<int64_t>(0);
  const Gen<int64_t> grid = s.varies_grid
                                ? weighted_choice<int64_t>({{4, 0},
                                                            {1, 1},
                                                            {1, 2},
                                                            {1, 3},
                                                            {1, std::max<int64_t>(1, s.sm_count / 3)},
                                                            {1, s.sm_count / 2 + 1}})
                                : gen::just<int64_t>(0);
  std::vector<std::pair<int, size_t>> layout_weights;
  for (size_t i = 0; i < s.layouts.size(); ++i)
    layout_weights.emplace_back(s.layouts[i] == Layout{} ? 3 : 1, i);
  const Gen<size_t> layout = weighted_choice<size_t>(layout_weights);
  // Which size is zero (a quick return: nothing to do, or C = beta·C for K = 0): none most often; listed
  // first, so shrinks leave zero sizes.
  const Gen<int> zero = weighted_choice<int>({{24, -1}, {1, 0}, {1, 1}, {1, 2}});
  const Gen<std::vector<int>> residues = gen::container<std::vector<int>>(
      kDimensions.size(), gen::resize(kFullSize, gen::inRange(0, kResidueDraws)));
  // One case in four is aligned throughout (is_aligned): each dimension's residue drawn apart reaches that
  // conjunction only a few times in a hundred, yet it is the common problem and the only one on which a
  // launcher takes its widest paths (a TMA store of C, say), whose races then went unfuzzed.
  const Gen<bool> whole_rows = weighted_choice<bool>({{3, false}, {1, true}});
  // Where a refusal decides (space.accepts), one case in about fourteen is a single packed row of A (M = 1)
  // or column of B and C (N = 1): problems a launcher may run in another form (canonical_form: Cᵀ = Bᵀ·Aᵀ, or
  // A and B read along K), which sizes rounded to the candidate's steps never reach where those steps skip 1.
  // Listed first, so shrinks drop it.
  const Gen<int> single = weighted_choice<int>({{12, -1}, {1, 0}, {1, 1}});
  const auto record = gen::apply(
      [s](Shape shape, int64_t lda_pad, int64_t ldb_pad, int64_t ldc_pad, Scalars ab, Distribution d,
          uint64_t seed, std::vector<int64_t> offsets, int64_t split_code, int64_t grid, size_t layout_index,
          int zero_size) {
        CaseRecord r;
        // M above the largest the candidate takes, folded into 1..max_m (keeping its distance from a tile
        // edge where max_m is a tile).
        const int64_t m = s.max_m > 0 && shape.m > s.max_m ? 1 + (shape.m - 1) % s.max_m : shape.m;
        r.m = zero_size == 0 ? 0 : m;
        r.n = zero_size == 1 ? 0 : shape.n;
        r.k = zero_size == 2 ? 0 : shape.k;
        // Keep the full reference affordable: shrink K (in units) when m·n·k is too large. Huge cases (C
        // beyond 2^31 elements) keep their K and are checked by projection; their C is write-only (beta = 0).
        const bool huge = r.m * r.n > (int64_t{1} << 31);
        if (!huge && r.m * r.n * r.k > s.max_macs) r.k = round_down(s.max_macs / (r.m * r.n), s.k_unit);
        r.lda_pad = lda_pad;
        r.ldb_pad = ldb_pad;
        r.ldc_pad = ldc_pad;
        r.alpha = ab.first;
        r.beta = huge ? 0.0 : ab.second;
        if (huge) r.ldc_pad = 0;
        r.a_offset = offsets[0] * s.k_unit;
        r.b_offset = offsets[1] * s.n_unit;
        r.c_offset = offsets[2];
        r.distribution = d;
        r.seed = seed;
        r.splits = split_code;  // resolved once K has its final value
        r.grid = grid;
        r.layout = s.layouts[layout_index];
        return r;
      },
      gen_shape(s), pad_a, pad_b, choice<int64_t>({0, 0, 1, 3, 8}), scalars, distribution,
      gen::inRange<uint64_t>(0, 1u << 20), offsets, splits, grid, layout, zero);
  return gen::apply(
      [s](CaseRecord r, std::vector<int> draws, bool whole, int one) {
        const auto at = std::find(s.layouts.begin(), s.layouts.end(), r.layout) - s.layouts.begin();
        const bool empty = r.m == 0 || r.n == 0 || r.k == 0;
        const std::vector<Steps>& probed = empty && !s.zero_steps.empty() ? s.zero_steps : s.steps;
        const Steps steps = probed.empty() ? default_steps(s, r.layout) : probed[static_cast<size_t>(at)];
        apply_steps(r, steps, s, draws);
        // The steps may have moved M and N up a little: the cap holds for the shape as it ends.
        const int64_t k_step = steps[static_cast<size_t>(Dimension::k)];
        if (r.m * r.n <= (int64_t{1} << 31) && r.m * r.n * r.k > s.max_macs) {
          const int64_t lda = r.lda(), ldb = r.ldb();
          r.k = round_down(s.max_macs / (r.m * r.n), k_step);
          if (r.layout.a == Order::row) r.lda_pad = std::max<int64_t>(0, lda - r.k);
          if (r.layout.b == Order::col) r.ldb_pad = std::max<int64_t>(0, ldb - r.k);
        }
        if (r.m * r.n > (int64_t{1} << 31)) r.ldc_pad = 0;  // huge: C write-only and packed
        if (whole && !empty) {  // (a quick return reads no operand)
          const CaseRecord a = aligned(r, steps, s);
          // K moved up to a whole 16 bytes may break the cap of a case whose M·N left one K unit: keep it.
          if (a.m * a.n > (int64_t{1} << 31) || a.m * a.n * a.k <= s.max_macs) r = a;
        }
        if (s.accepts && one == 0 && !empty) {
          r.m = 1;
          if (r.layout.a == Order::col) r.lda_pad = 0;
        }
        if (s.accepts && one == 1 && !empty) {
          r.n = 1;
          r.ldc_pad = 0;
          if (r.layout.b == Order::row) r.ldb_pad = 0;
        }
        const int64_t k_tiles = (r.k + s.tile_k - 1) / s.tile_k;
        r.splits = r.splits == -1 ? k_tiles : r.splits == -2 ? k_tiles + 1 : r.splits;
        return r;
      },
      record, residues, whole_rows, single);
}

Gen<CaseRecord> gen_case(const CaseSpace& space) {
  if (!space.accepts) return gen_broad_case(space);
  return gen::suchThat(gen_broad_case(space), space.accepts);
}

std::vector<std::string> case_tags(const CaseRecord& r, const CaseSpace& s) {
  std::vector<std::string> tags;
  if (r.m <= 20 && r.n <= 20) tags.push_back("tiny");
  if (r.m == 1) tags.push_back("m_one");
  if (r.n == 1) tags.push_back("n_one");
  if (r.m % s.tile_m) tags.push_back("m_tail");
  if (r.n % s.tile_n) tags.push_back("n_tail");
  if (r.k < s.tile_k) tags.push_back("k_lt_tile");
  if (r.k == s.tile_k) tags.push_back("k_eq_tile");
  if (r.k % s.tile_k) tags.push_back("k_tail");
  if (r.k > s.tile_k * (s.stages - 1) && r.k <= s.tile_k * (s.stages + 1)) tags.push_back("k_pipeline_edge");
  if (r.k >= 65536) tags.push_back("large_k");
  if (r.m * r.n > (int64_t{1} << 31)) tags.push_back("huge_offsets");
  const int64_t tiles = ((r.m + s.tile_m - 1) / s.tile_m) * ((r.n + s.tile_n - 1) / s.tile_n);
  if (tiles > s.sm_count) tags.push_back("multi_wave");
  if (r.lda_pad || r.ldb_pad || r.ldc_pad) tags.push_back("padded_ld");
  if (r.beta != 0) tags.push_back("beta_nonzero");
  if (r.a_offset || r.b_offset || r.c_offset) tags.push_back("offset_pointers");
  if (r.alpha != 1) tags.push_back("alpha_not_one");
  if (is_aligned(r, s)) tags.push_back("aligned");
  if (r.layout != Layout{}) tags.push_back("layout_" + to_string(r.layout));
  if (r.splits > 1) tags.push_back("split_k");
  if (r.splits > (r.k + s.tile_k - 1) / s.tile_k) tags.push_back("empty_splits");
  if (r.grid > 0 && r.grid < tiles * std::max<int64_t>(1, r.splits)) tags.push_back("persistent_grid");
  tags.push_back(std::string("dist_") + to_string(r.distribution));
  for (std::string& tag : domain_tags(r, s)) tags.push_back(std::move(tag));
  return tags;
}

}  // namespace tunefuzz::fuzz
