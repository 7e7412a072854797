// The domain law: each candidate's fuzz cases come from exactly the problems it accepts. For a covering
// sample of the shipped configs' candidates (h100, h200, smoke: per template and element type pair, kept
// points until every value of every parameter has appeared: all of them took over a minute on 2 cores) and
// for every template's default point with every element type pair it supports, in every layout it computes:
// (a) no generated case is one the template's refusal (what the launcher applies) refuses, and (b) every
// class of every dimension that the refusal accepts some case of (residues of M, N, K, lda, ldb, ldc and the
// A, B, C offsets modulo 16 bytes of their element; M, N, K zero, whole tiles or a partial tile) is reached:
// among kDraws cases for problems without a zero size, among kEmptyDraws cases with one (a quick return,
// which reads no operand, accepts residues the others do not); and (c) the refusal filters out at most half
// of the draws before it (when written, it kept 199 of 200 at the least); and (d) where the candidate accepts
// problems aligned throughout (fuzz::is_aligned), at least one case in eight is one. "Accepted" is found by probing the
// refusal itself, moving one dimension of generated cases at a time over a range of values; nothing here
// restates a rule. Also: zero sizes are accepted by every template, negative ones and short rows refused,
// and the launch decision for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz/domain.hpp"
#include "fuzz/generators.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/device/fuzzing.hpp"
#include "runtime/templates/gemm_rules.hpp"

namespace tunefuzz {
namespace {

constexpr int kDraws = 800;       // cases per candidate and layout, as a fuzz job's first rounds draw them
constexpr int kEmptyDraws = 250;  // cases with a zero size (a quick return): drawn on until this many
constexpr int kBroadDraws = 200;  // draws before the refusal filters, to measure how many it keeps
constexpr int kBases = 12;        // generated cases of each kind whose dimensions are moved one at a time
constexpr int64_t kSmCount = 132;

std::optional<std::string> refusal(const Candidate& c, const fuzz::CaseRecord& r) {
  return c.kernel_template->refusal(c.point, shape_of(r, static_cast<int>(size_of(c.types.input)),
                                                      static_cast<int>(size_of(c.types.output))));
}

/// Candidates that together take every value each parameter has among `all` (greedily, in order): a sample
/// that keeps every switch, vector width, tile and stage count the configs ship.
std::vector<Candidate> covering_sample(const std::vector<Candidate>& all) {
  std::set<std::pair<std::string, int64_t>> uncovered;
  for (const Candidate& c : all)
    for (const auto& value : c.point.values()) uncovered.insert(value);
  std::vector<Candidate> out;
  for (const Candidate& c : all) {
    bool adds = false;
    for (const auto& value : c.point.values()) adds = uncovered.erase(value) > 0 || adds;
    if (adds) out.push_back(c);
  }
  return out;
}

/// The candidates the law is stated for: of each shipped config, template and element type pair, a covering
/// sample of the kept points (every parameter value at least once); and each template's default point with
/// every element type pair it supports.
std::vector<Candidate> candidates_under_law() {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (const char* config : {"h100.yaml", "h200.yaml", "smoke.yaml"}) {
    const Config loaded = load_config(std::string(TUNEFUZZ_SOURCE_DIR) + "/configs/" + config);
    std::map<std::string, std::vector<Candidate>> groups;  // by template and types
    for (const Candidate& c : space_stage(loaded).candidates)
      groups[c.kernel_template->name + "/" + to_string(c.types.input) + to_string(c.types.output)].push_back(
          c);
    for (const auto& [group, members] : groups)
      for (const Candidate& c : covering_sample(members))
        if (seen.insert(c.id()).second) out.push_back(c);
  }
  for (const KernelTemplate* t : all_templates())
    for (const TypePair& types : t->supported_types) {
      const Candidate c{t, t->default_point(), types};
      if (seen.insert(c.id()).second) out.push_back(c);
    }
  return out;
}

/// Values to move one dimension through when probing: 0 to four residue periods, and around one and two
/// tiles (sizes) or around the base's own value.
std::vector<int64_t> probe_values(fuzz::Dimension d, const fuzz::CaseRecord& base, const fuzz::CaseSpace& s) {
  const int64_t period = fuzz::residue_modulus(d, s);
  std::vector<int64_t> values;
  for (int64_t v = 0; v <= 4 * period; ++v) values.push_back(v);
  const int64_t own = fuzz::value_of(base, d);
  const int64_t tile = d == fuzz::Dimension::m ? s.tile_m : d == fuzz::Dimension::n ? s.tile_n : s.tile_k;
  for (int64_t centre : {own, tile, 2 * tile})
    for (int64_t v = centre - period; v <= centre + period; ++v)
      if (v >= 0) values.push_back(v);
  return values;
}

/// The classes (tags) the refusal accepts some case of: each base moved along one dimension at a time. With
/// `empty`, only bases with a zero size (whose moves keep it), else only bases without one (whose sizes move
/// to zero only for the zero classes).
bool has_zero_size(const fuzz::CaseRecord& r) {
  return r.m == 0 || r.n == 0 || r.k == 0;
}

std::set<std::string> probed_classes(const Candidate& c, const fuzz::CaseSpace& s,
                                     const std::vector<fuzz::CaseRecord>& bases, bool empty) {
  std::map<fuzz::Dimension, std::vector<fuzz::DomainClass>> classes;
  for (const fuzz::DomainClass& k : fuzz::domain_classes(s)) classes[k.dimension].push_back(k);
  std::set<std::string> accepted;
  for (const fuzz::CaseRecord& base : bases) {
    if (has_zero_size(base) != empty) continue;
    for (fuzz::Dimension d : fuzz::kDimensions)
      for (int64_t v : probe_values(d, base, s)) {
        const auto moved = fuzz::with_value(base, d, v, s);
        if (!moved || has_zero_size(*moved) != empty || refusal(c, *moved)) continue;
        for (const fuzz::DomainClass& k : classes[d])
          if (k.contains(*moved, s)) accepted.insert(k.tag());
      }
  }
  if (!empty) {
    // The zero classes: each size of a base without one moved to 0.
    for (const fuzz::CaseRecord& base : bases)
      for (fuzz::Dimension d : {fuzz::Dimension::m, fuzz::Dimension::n, fuzz::Dimension::k})
        if (const auto moved = fuzz::with_value(base, d, 0, s);
            moved && !has_zero_size(base) && !refusal(c, *moved))
          accepted.insert(std::string(fuzz::to_string(d)) + "=0");
  }
  return accepted;
}

// with_value moves exactly one dimension: the others, leading dimensions included, keep their values.
TEST(Domain, WithValueMovesOneDimensionAndKeepsTheOthers) {
  fuzz::CaseSpace s;
  fuzz::CaseRecord r;
  r.m = 40, r.n = 24, r.k = 72, r.lda_pad = 8, r.ldb_pad = 3, r.ldc_pad = 1, r.a_offset = 2;
  for (const Layout& layout : all_layouts()) {
    r.layout = layout;
    for (fuzz::Dimension d : fuzz::kDimensions)
      for (int64_t v : {0, 1, 7, 100}) {
        const auto moved = fuzz::with_value(r, d, v, s);
        if (!moved) continue;
        EXPECT_EQ(fuzz::value_of(*moved, d), v) << fuzz::to_string(d);
        for (fuzz::Dimension other : fuzz::kDimensions) {
          if (other == d) continue;
          const int64_t before = fuzz::value_of(r, other), after = fuzz::value_of(*moved, other);
          // A leading dimension below its new row grows by whole periods, keeping its residue.
          const int64_t period = fuzz::residue_modulus(other, s);
          EXPECT_TRUE(after == before || (after > before && (after - before) % period == 0))
              << fuzz::to_string(d) << "=" << v << " moved " << fuzz::to_string(other);
        }
      }
  }
}

TEST(Domain, EveryCaseIsAcceptedAndEveryAcceptedClassIsReached) {
  int checked = 0, lowest_kept = kBroadDraws, lowest_aligned = kDraws;
  for (const Candidate& c : candidates_under_law()) {
    SCOPED_TRACE(c.id());
    const fuzz::CaseSpace space = case_space_for(c, kSmCount);
    ASSERT_EQ(space.layouts.size(), space.steps.size());
    for (size_t l = 0; l < space.layouts.size(); ++l) {
      SCOPED_TRACE("layout " + to_string(space.layouts[l]));
      fuzz::CaseSpace one = space;
      one.layouts = {space.layouts[l]};
      one.steps = {space.steps[l]};
      const rc::Gen<fuzz::CaseRecord> gen = fuzz::gen_case(one);
      rc::Random random(20250715 + l);
      std::vector<fuzz::CaseRecord> bases;
      std::set<std::string> reached, reached_empty;
      int empty_draws = 0, aligned_draws = 0;
      for (int i = 0; i < kDraws || (empty_draws < kEmptyDraws && i < 40 * kDraws); ++i) {
        const fuzz::CaseRecord r = gen(random.split(), i % 101).value();
        if (i < kDraws) aligned_draws += fuzz::is_aligned(r, one);
        if (const auto why = refusal(c, r)) {
          ADD_FAILURE() << "generated a case the candidate refuses: " << fuzz::to_string(r) << ": " << *why;
          break;
        }
        const bool empty = has_zero_size(r);
        empty_draws += empty;
        if (i < kDraws || empty) {
          if (std::count_if(bases.begin(), bases.end(),
                            [&](const auto& b) { return has_zero_size(b) == empty; }) < kBases)
            bases.push_back(r);
          for (const std::string& tag : fuzz::domain_tags(r, one))
            (empty ? reached_empty : reached).insert(tag);
          if (empty)
            for (const std::string& tag : fuzz::domain_tags(r, one)) reached.insert(tag);
        }
      }
      for (const bool empty : {false, true}) {
        std::string missed;
        for (const std::string& tag : probed_classes(c, one, bases, empty))
          if (!(empty ? reached_empty : reached).count(tag)) missed += " " + tag;
        EXPECT_EQ(missed, "") << "accepted but never drawn, in "
                              << (empty ? "problems with" : "problems without") << " a zero size ("
                              << (empty ? empty_draws : kDraws) << " cases)";
      }
      // (d) Problems aligned throughout, the common kind and the only one some launch paths take (a TMA
      // store of C), are a fair share of the cases, not the few a conjunction of independent residues gives.
      // (A candidate that exists for misaligned operands, PACK=1, refuses aligned ones.)
      if (!refusal(c, fuzz::probe_bases(one, one.layouts.front()).front())) {
        EXPECT_GE(aligned_draws, kDraws / 8) << "only " << aligned_draws << " of " << kDraws
                                             << " cases have every row, leading dimension and base aligned";
        lowest_aligned = std::min(lowest_aligned, aligned_draws);
      }
      // The refusal filters few of the broad draws: a fuzz job spends its time on cases, not on redraws.
      const rc::Gen<fuzz::CaseRecord> broad = fuzz::gen_broad_case(one);
      int kept = 0;
      for (int i = 0; i < kBroadDraws; ++i) kept += !refusal(c, broad(random.split(), i % 101).value());
      EXPECT_GE(kept, kBroadDraws / 2) << "the refusal keeps " << kept << " of " << kBroadDraws << " draws";
      lowest_kept = std::min(lowest_kept, kept);
      ++checked;
    }
    // A layout the template declares but the candidate never accepts must really be refused.
    for (const Layout& layout : c.kernel_template->layouts) {
      if (std::find(space.layouts.begin(), space.layouts.end(), layout) != space.layouts.end()) continue;
      fuzz::CaseRecord r;
      r.m = r.n = r.k = 256;
      r.layout = layout;
      EXPECT_TRUE(refusal(c, r).has_value()) << "layout " << to_string(layout) << " left out but accepted";
    }
  }
  EXPECT_GT(checked, 100);
  std::printf("domain law checked on %d candidate layouts; the refusal kept at least %d of %d broad draws; "
              "at least %d of %d cases aligned throughout\n",
              checked, lowest_kept, kBroadDraws, lowest_aligned, kDraws);
}

// The bound on M a candidate's refusal sets, found by probing it: a point that swaps its operands takes M up
// to its BN (one tile across M), gemm_skinny up to 128, the others any M. The fuzz cases of a bounded
// candidate fold M into its range, and its tiles in the problem's terms are BN rows by BM columns.
TEST(Domain, TheLargestMACandidateTakesIsProbedAndTheCasesStayWithinIt) {
  const KernelTemplate& wgmma = find_template("gemm_wgmma");
  std::vector<std::pair<std::string, int64_t>> values = wgmma.default_point().values();
  for (auto& [name, value] : values) {
    if (name == "SWAP_AB") value = 1;
    if (name == "BN") value = 24;
    if (name == "CLUSTER_M") value = 1;
  }
  const Candidate swap{&wgmma, Point(values), {Precision::bf16, Precision::bf16}};
  const fuzz::CaseSpace space = case_space_for(swap, kSmCount);
  EXPECT_EQ(space.max_m, 24);
  EXPECT_EQ(space.tile_m, 24);
  EXPECT_EQ(space.tile_n, swap.point["BM"]);
  ASSERT_FALSE(space.layouts.empty());
  // BN = 24 reads the kernel's B K-major alone, and that B is Aᵀ: the problems of row-major A.
  for (const Layout& layout : space.layouts) EXPECT_EQ(layout.a, Order::row) << to_string(layout);
  EXPECT_EQ(space.layouts.size(), 2u);
  const rc::Gen<fuzz::CaseRecord> broad = fuzz::gen_broad_case(space);
  rc::Random random(20261201);
  int at_most = 0, whole = 0;
  for (int i = 0; i < 400; ++i) {
    const fuzz::CaseRecord r = broad(random.split(), i % 101).value();
    at_most += r.m <= 24;
    whole += r.m == 24;
  }
  EXPECT_EQ(at_most, 400) << "every drawn M folded into 1..24";
  EXPECT_GT(whole, 0) << "the whole tile is drawn too";
  for (const fuzz::CaseRecord& r : fuzz::sanitizer_cases(space))
    EXPECT_FALSE(refusal(swap, r)) << fuzz::to_string(r);

  const Candidate skinny{&find_template("gemm_skinny"),
                         find_template("gemm_skinny").default_point(),
                         {Precision::bf16, Precision::bf16}};
  EXPECT_EQ(case_space_for(skinny, kSmCount).max_m, 128);
  const Candidate plain{&wgmma, wgmma.default_point(), {Precision::bf16, Precision::bf16}};
  EXPECT_EQ(case_space_for(plain, kSmCount).max_m, 0);
}

// Quick return: every template accepts a problem with M, N or K zero in every layout it computes, whatever
// the alignment of its leading dimensions and bases (no operand is read); it refuses a negative size, and a
// leading dimension shorter than its row, saying which. The launch decision: nothing for M or N = 0, the
// template's tf_scale_c for K = 0 only, over every element of C.
TEST(QuickReturn, ZeroSizesAreAcceptedNegativeOnesAndShortRowsRefused) {
  for (const KernelTemplate* t : all_templates()) {
    SCOPED_TRACE(t->name);
    const Point point = t->default_point();
    EXPECT_NE(std::find(t->entry_points.begin(), t->entry_points.end(), kScaleCEntry), t->entry_points.end());
    for (const Layout& layout : t->layouts) {
      GemmShape whole{256, 256, 256, 256, 256, 256, layout};
      if (t->refusal(point, whole)) continue;  // a layout this point does not compute
      SCOPED_TRACE(to_string(layout));
      for (const auto& [m, n, k] : {std::tuple{0, 37, 41}, {37, 0, 41}, {37, 41, 0}, {0, 0, 0}}) {
        // Leading dimensions one past their rows, bases two bytes off: no vector or TMA rule may apply.
        GemmShape s{m, n, k, 0, 0, n + 1, layout, 2, 2, 4};
        s.lda = (layout.a == Order::row ? k : m) + 1;
        s.ldb = (layout.b == Order::row ? n : k) + 1;
        EXPECT_FALSE(t->refusal(point, s).has_value())
            << m << "x" << n << "x" << k << ": " << *t->refusal(point, s);
        EXPECT_EQ(quick_return(s), m == 0 || n == 0 ? QuickReturn::nothing : QuickReturn::scale_c);
        GemmShape negative = s;
        (m == 0 ? negative.m : n == 0 ? negative.n : negative.k) = -1;
        const auto why = t->refusal(point, negative);
        ASSERT_TRUE(why.has_value());
        EXPECT_NE(why->find("negative"), std::string::npos) << *why;
        GemmShape short_rows = s;
        short_rows.ldc = s.n - 1;
        if (short_rows.ldc >= 0) {
          const auto short_why = t->refusal(point, short_rows);
          ASSERT_TRUE(short_why.has_value());
          EXPECT_NE(short_why->find("leading dimension"), std::string::npos) << *short_why;
        }
      }
      EXPECT_EQ(quick_return(whole), QuickReturn::none);
    }
  }
  for (const auto& [m, n] : {std::pair{1, 1}, {300, 7}, {1 << 20, 1 << 10}}) {
    const LaunchGeometry g = scale_c_geometry(GemmShape{m, n, 0, 0, 0, n, Layout{}});
    EXPECT_EQ(g.block_x, 256);
    EXPECT_GE(g.grid_x, 1);
    EXPECT_LE(g.grid_x, 65535);
    EXPECT_GE(g.grid_x * g.block_x, std::min<int64_t>(int64_t{m} * n, 65535 * 256));
  }
}

}  // namespace
}  // namespace tunefuzz
