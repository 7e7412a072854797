// The form a kernel runs a GEMM in (canonical_form, transposed_form, launch_form in
// runtime/templates/kernel_template.hpp): a matrix-vector product as Cᵀ = Bᵀ·Aᵀ, a contiguous single row or
// column read along K, and any GEMM as Cᵀ = Bᵀ·Aᵀ with C stored transposed for a point that swaps its
// operands. The rewrites are laws about bytes, checked here on the host: the rewritten GEMM reads and writes
// the same elements as the one stated, a second rewrite changes nothing, and the templates and the space
// stage serve what the rewrite reaches.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/templates/gemm_skinny.hpp"
#include "runtime/templates/gemm_wgmma.hpp"
#include "runtime/templates/kernel_template.hpp"
#include "tests/support/shipped_gpu.hpp"
#include "tuner/campaign/stages.hpp"
#include "tuner/config/config.hpp"
#include "tuner/strategy/cost_model.hpp"

namespace tunefuzz {
namespace {

constexpr Layout kLayouts[] = {
    {Order::row, Order::row}, {Order::row, Order::col}, {Order::col, Order::row}, {Order::col, Order::col}};

/// Offset of element (row, column) of a matrix stored in `order` with leading dimension `ld`.
int64_t at(Order order, int64_t ld, int64_t row, int64_t column) {
  return order == Order::row ? row * ld + column : row + column * ld;
}

/// C = A·B + C over integer-valued data, element by element as `s` lays the operands and C out.
void reference_gemm(const GemmShape& s, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                    std::vector<int64_t>& c) {
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      int64_t sum = 0;
      for (int64_t l = 0; l < s.k; ++l)
        sum += a.at(static_cast<size_t>(at(s.layout.a, s.lda, i, l))) *
               b.at(static_cast<size_t>(at(s.layout.b, s.ldb, l, j)));
      c.at(static_cast<size_t>(at(s.c_order, s.ldc, i, j))) += sum;
    }
}

/// The stated GEMM and `form` of it on the same random integer buffers (as large as the stated layout
/// addresses): the C each computes. The form may only address the elements the stated GEMM does: one that
/// invents a leading dimension reaches past the buffers (vector::at throws).
std::pair<std::vector<int64_t>, std::vector<int64_t>> both_products(const GemmShape& s, const GemmForm& form,
                                                                    std::mt19937_64& random) {
  const auto extent = [](Order o, int64_t ld, int64_t rows, int64_t cols) {
    return rows == 0 || cols == 0 ? 1 : at(o, ld, rows - 1, cols - 1) + 1;
  };
  std::vector<int64_t> a(static_cast<size_t>(extent(s.layout.a, s.lda, s.m, s.k))),
      b(static_cast<size_t>(extent(s.layout.b, s.ldb, s.k, s.n))),
      c(static_cast<size_t>(extent(s.c_order, s.ldc, s.m, s.n)));
  for (auto* v : {&a, &b, &c})
    for (int64_t& x : *v) x = static_cast<int64_t>(random() % 19) - 9;
  std::vector<int64_t> stated = c, formed = c;
  reference_gemm(s, a, b, stated);
  reference_gemm(form.shape, form.swapped ? b : a, form.swapped ? a : b, formed);
  return {stated, formed};
}

std::string str(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
         to_string(s.layout) + " lda " + std::to_string(s.lda) + " ldb " + std::to_string(s.ldb) + " ldc " +
         std::to_string(s.ldc);
}

/// Shapes near the rewrites' edges: sizes 0, 1, 2 and 5, every layout, leading dimensions packed or padded (C
/// apart from A and B).
std::vector<GemmShape> edge_shapes() {
  std::vector<GemmShape> shapes;
  for (const Layout& layout : kLayouts)
    for (int64_t m : {0, 1, 2, 5})
      for (int64_t n : {0, 1, 2, 5})
        for (int64_t k : {0, 1, 3})
          for (int64_t pad : {0, 2})
            for (int64_t c_pad : {0, 3}) {
              GemmShape s;
              s.m = m, s.n = n, s.k = k, s.layout = layout;
              s.lda = (layout.a == Order::row ? k : m) + pad;
              s.ldb = (layout.b == Order::row ? n : k) + pad;
              s.ldc = n + c_pad;
              s.a_alignment = 16, s.b_alignment = 4, s.c_alignment = 2;
              shapes.push_back(s);
            }
  return shapes;
}

TEST(CanonicalForm, ComputesTheSameProductOnTheSameBytes) {
  std::mt19937_64 random(7);
  int rewritten = 0, swapped = 0;
  for (const GemmShape& s : edge_shapes()) {
    const GemmForm form = canonical_form(s);
    if (!(form.shape == s)) ++rewritten;
    if (form.swapped) {
      ++swapped;
      EXPECT_EQ(form.shape.a_alignment, s.b_alignment);
      EXPECT_EQ(form.shape.b_alignment, s.a_alignment);
    }
    EXPECT_EQ(form.shape.c_order, Order::row) << "the canonical form keeps C row-major: " << str(s);
    std::pair<std::vector<int64_t>, std::vector<int64_t>> products;
    ASSERT_NO_THROW(products = both_products(s, form, random)) << str(s);
    EXPECT_EQ(products.second, products.first) << str(s);
  }
  // The sweep reaches both rewrites (a law that never applies proves nothing).
  EXPECT_GT(swapped, 0);
  EXPECT_GT(rewritten, swapped);
}

TEST(CanonicalForm, ASecondRewriteChangesNothing) {
  for (const GemmShape& s : edge_shapes()) {
    const GemmForm once = canonical_form(s);
    const GemmForm twice = canonical_form(once.shape);
    EXPECT_TRUE(twice.shape == once.shape) << s.m << "x" << s.n << "x" << s.k << " " << to_string(s.layout);
    EXPECT_FALSE(twice.swapped);
  }
}

// transposed_form: every non-empty GEMM as Cᵀ = Bᵀ·Aᵀ on the same bytes, C read as the column-major N×M
// matrix it also is. The law the swapped kernels (SWAP_AB) rest on.
TEST(TransposedForm, ComputesTheSameProductOnTheSameBytes) {
  std::mt19937_64 random(11);
  int swapped = 0;
  for (const GemmShape& s : edge_shapes()) {
    const GemmForm form = transposed_form(s);
    EXPECT_TRUE(form.swapped) << str(s);
    swapped += s.m > 0 && s.n > 0 && s.k > 0;
    EXPECT_EQ(form.shape.m, s.n);
    EXPECT_EQ(form.shape.n, s.m);
    EXPECT_EQ(form.shape.c_order, Order::col);
    EXPECT_EQ(form.shape.ldc, s.ldc);
    EXPECT_EQ(form.shape.a_alignment, s.b_alignment);
    EXPECT_EQ(form.shape.b_alignment, s.a_alignment);
    std::pair<std::vector<int64_t>, std::vector<int64_t>> products;
    ASSERT_NO_THROW(products = both_products(s, form, random)) << str(s);
    EXPECT_EQ(products.second, products.first) << str(s);
  }
  EXPECT_GT(swapped, 100);  // non-empty ones
}

TEST(TransposedForm, ASecondRewriteChangesNothingAndTheLayoutsTradeAsTheyShould) {
  for (const GemmShape& s : edge_shapes()) {
    const GemmForm once = transposed_form(s);
    const GemmForm twice = transposed_form(once.shape);
    EXPECT_TRUE(twice.shape == once.shape) << str(s);
    EXPECT_FALSE(twice.swapped);
  }
  // A row-major A (M×K) is Aᵀ stored along K: the kernel's B, column-major; a row-major B (K×N) is Bᵀ stored
  // along N: the kernel's A, column-major. So RR runs as CC, RC as RC, CR as CR and CC as RR.
  const std::pair<const char*, const char*> trades[] = {
      {"RR", "CC"}, {"RC", "RC"}, {"CR", "CR"}, {"CC", "RR"}};
  for (const auto& [stated, run] : trades) {
    GemmShape s;
    s.m = 24, s.n = 4096, s.k = 4096;
    for (const Layout& l : kLayouts)
      if (to_string(l) == stated) s.layout = l;
    s.lda = s.layout.a == Order::row ? s.k : s.m;
    s.ldb = s.layout.b == Order::row ? s.n : s.k;
    s.ldc = s.n;
    EXPECT_EQ(to_string(transposed_form(s).shape.layout), run) << stated;
  }
}

// A point that swaps its operands (gemm_wgmma's SWAP_AB) runs every problem transposed and is judged, laid
// out and tiled in that form; every other point refuses a column-major C, which only that form has.
TEST(TransposedForm, ASwappingPointRunsEveryProblemTransposedAndOthersRefuseAColumnMajorC) {
  const KernelTemplate& wgmma = gemm_wgmma_template();
  std::vector<std::pair<std::string, int64_t>> values = wgmma.default_point().values();
  for (auto& [name, value] : values) {
    if (name == "SWAP_AB") value = 1;
    if (name == "BN") value = 24;
    if (name == "CLUSTER_M") value = 1;
  }
  const Point swap(values);
  GemmShape decode;  // 24 rows of activations against a row-major 4096×8192 weight
  decode.m = 24, decode.n = 8192, decode.k = 4096, decode.lda = 4096, decode.ldb = 8192, decode.ldc = 8192;
  ASSERT_FALSE(wgmma.refusal(swap, decode)) << *wgmma.refusal(swap, decode);
  const GemmForm run = launch_form(wgmma, swap, decode);
  EXPECT_TRUE(run.swapped);
  EXPECT_TRUE(run.shape == transposed_form(decode).shape);
  EXPECT_EQ(describe_form(decode, run), "as Cᵀ = Bᵀ·Aᵀ: 8192×24×4096 CC, C stored transposed");
  // One tile along the 24 rows (BN = 24), 64 along N (BM = 128): the geometry of the form, as the runner gets
  // it.
  EXPECT_EQ(wgmma.geometry(swap, decode).grid_x, 64);
  EXPECT_EQ(wgmma.geometry(swap, run.shape).grid_x, 64)
      << "the form's own geometry: a second transposition is none";
  EXPECT_EQ(stated_tile(wgmma, swap).rows, 24);
  EXPECT_EQ(stated_tile(wgmma, swap).cols, 128);
  // BN = 24 reads B K-major only: the transposed form of a CC problem is RR, which it does not compute.
  GemmShape cc = decode;
  cc.layout = {Order::col, Order::col}, cc.lda = 24, cc.ldb = 4096;
  const auto refused = wgmma.refusal(swap, cc);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("column-major (K-major) B only"), std::string::npos) << *refused;
  // The same point without SWAP_AB runs the problem as stated, and refuses the column-major C of the form.
  const Point plain = wgmma.default_point();
  EXPECT_FALSE(launch_form(wgmma, plain, decode).swapped);
  EXPECT_EQ(stated_tile(wgmma, plain).rows, plain["BM"]);
  const auto column = wgmma.refusal(plain, run.shape);
  ASSERT_TRUE(column);
  EXPECT_NE(column->find("stores C row-major"), std::string::npos) << *column;
  EXPECT_TRUE(gemm_skinny_template().refusal(gemm_skinny_template().default_point(), run.shape));
  // The swapped form is for skinny M: one tile across M, so M = 25 is another point's.
  GemmShape wider = decode;
  wider.m = 25;
  const auto one_tile = wgmma.refusal(swap, wider);
  ASSERT_TRUE(one_tile);
  EXPECT_NE(one_tile->find("M in one tile of BN = 24"), std::string::npos) << *one_tile;
  // A column-major A is the form's B, its rows M long: TMA takes it where a row is whole 16 bytes, and
  // refuses it otherwise (the PACK=1 twin serves), on a point whose BN reads every order (whole 64-column
  // slabs).
  std::vector<std::pair<std::string, int64_t>> slab_values = values;
  for (auto& [name, value] : slab_values)
    if (name == "BN") value = 64;
  const Point slabs(slab_values);
  GemmShape cr = decode;
  cr.m = 23, cr.layout = {Order::col, Order::row}, cr.lda = 24;
  EXPECT_FALSE(wgmma.refusal(slabs, cr)) << *wgmma.refusal(slabs, cr);
  cr.lda = 23;
  const auto stride = wgmma.refusal(slabs, cr);
  ASSERT_TRUE(stride);
  EXPECT_NE(stride->find("TMA needs 16-byte row strides"), std::string::npos) << *stride;
  // A quick return runs as stated, C row-major, even on a point that swaps; it is judged in the storage order
  // the point's kernels see (RR as CC), so the point takes it as it takes the non-empty problem.
  GemmShape empty = decode;
  empty.k = 0;
  EXPECT_FALSE(launch_form(wgmma, swap, empty).swapped);
  EXPECT_FALSE(wgmma.refusal(swap, empty));
  empty.m = 0;
  EXPECT_FALSE(launch_form(wgmma, swap, empty).swapped);
  EXPECT_FALSE(wgmma.refusal(swap, empty));
}

TEST(CanonicalForm, OnlyAContiguousColumnOfCIsTransposed) {
  GemmShape s;
  s.m = 4096, s.n = 1, s.k = 4096, s.lda = 4096, s.ldb = 1, s.ldc = 1;
  const GemmForm vector = canonical_form(s);
  EXPECT_TRUE(vector.swapped);
  EXPECT_EQ(vector.shape.m, 1);
  EXPECT_EQ(vector.shape.n, 4096);
  EXPECT_EQ(to_string(vector.shape.layout), "RC");  // Bᵀ a contiguous row, Aᵀ read down its columns
  s.ldc = 8;  // C's one column strided: Cᵀ would not be a row-major matrix
  EXPECT_FALSE(canonical_form(s).swapped);
}

TEST(CanonicalForm, TheSkinnyTemplateServesAMatrixVectorProductAndAOneRowCC) {
  const KernelTemplate& skinny = gemm_skinny_template();
  const Point point = skinny.default_point();
  GemmShape gemv;  // 8192×1×8192 RR: N = 1 is not a multiple of the point's vector width
  gemv.m = 8192, gemv.n = 1, gemv.k = 8192, gemv.lda = 8192, gemv.ldb = 1, gemv.ldc = 1;
  EXPECT_FALSE(skinny.refusal(point, gemv));
  const GemmForm run = launch_form(skinny, point, gemv);
  EXPECT_TRUE(run.swapped);
  EXPECT_EQ(run.shape.m, 1);
  // The launch geometry is the one of the form the point runs.
  EXPECT_EQ(skinny.geometry(point, gemv).grid_x, skinny.geometry(point, run.shape).grid_x);

  GemmShape row;  // 1×12288×3072 CC with lda = 1: A is one contiguous row
  row.m = 1, row.n = 12288, row.k = 3072, row.layout = {Order::col, Order::col}, row.lda = 1, row.ldb = 3072,
  row.ldc = 12288;
  EXPECT_FALSE(skinny.refusal(point, row));
  EXPECT_EQ(to_string(launch_form(skinny, point, row).shape.layout), "RC");
  EXPECT_EQ(describe_form(gemv, run), "as Cᵀ = Bᵀ·Aᵀ: 1×8192×8192 RC");
  EXPECT_EQ(describe_form(row, launch_form(skinny, point, row)), "as 1×12288×3072 RC");
  EXPECT_EQ(describe_form(row, GemmForm{row, false}), "");
  row.lda = 3;  // a strided row is not contiguous: no rewrite, and the point's own refusal stands
  EXPECT_TRUE(skinny.refusal(point, row));
}

TEST(CanonicalForm, APointThatRefusesTheRewriteRunsTheProblemAsStated) {
  // A gemm_mma image of the RR kernel alone (LAYOUTS=1): the rewritten matrix-vector product (RC) is not its
  // to run, the RR problem as stated is.
  const KernelTemplate& mma = find_template("gemm_mma");
  std::vector<std::pair<std::string, int64_t>> values = mma.default_point().values();
  for (auto& [name, value] : values) {
    if (name == "VEC") value = 1;      // scalar loads: N = 1 as stated is the point's to run
    if (name == "LAYOUTS") value = 1;  // RR only
  }
  const Point point(values);
  GemmShape gemv;
  gemv.m = 256, gemv.n = 1, gemv.k = 256, gemv.lda = 256, gemv.ldb = 1, gemv.ldc = 1;
  ASSERT_FALSE(mma.refusal(point, gemv));
  ASSERT_TRUE(canonical_form(gemv).swapped);
  const GemmForm run = launch_form(mma, point, gemv);
  EXPECT_TRUE(run.shape == gemv);
  EXPECT_FALSE(run.swapped);
}

TEST(CanonicalForm, TheCostModelRanksTheFormACandidateRuns) {
  // gemm_skinny runs 8192×1×8192 as 1×8192×8192: the model counts that form's tiles, not 1024 tiles of 8
  // rows.
  const KernelTemplate& skinny = gemm_skinny_template();
  const SearchCandidate c{Candidate{&skinny, skinny.default_point(), {}}, "skinny", 0};
  GemmShape gemv;
  gemv.m = 8192, gemv.n = 1, gemv.k = 8192, gemv.lda = 8192, gemv.ldb = 1, gemv.ldc = 1;
  const GemmShape run = launch_form(skinny, c.candidate.point, gemv).shape;
  ASSERT_EQ(run.m, 1);
  const GpuLimits limits = load_config(TUNEFUZZ_SOURCE_DIR "/configs/h200.yaml").gpu.limits;
  EXPECT_DOUBLE_EQ(estimate_cost(c, gemv, limits).total_ms(), estimate_cost(c, run, limits).total_ms());
  GemmShape rows = gemv;  // the same sizes without the rewrite (C's column strided) cost more
  rows.ldc = 8;
  EXPECT_GT(estimate_cost(c, rows, limits).total_ms(), estimate_cost(c, gemv, limits).total_ms());
}

/// A config for the H200 (the shipped config's gpu block) with these problems and template searches.
Config h200_config(const std::string& problems, const std::string& templates) {
  return test::h200_config_with(problems, templates, "forms");
}

TEST(CanonicalForm, TheSpaceCompilesTheOrderAProblemRunsIn) {
  // One RR matrix-vector product: gemm_skinny serves it only as Cᵀ = Bᵀ·Aᵀ, in RC.
  const Config config = h200_config("  - {name: gemv, m: 8192, n: 1, k: 8192, precision: bf16}\n",
                                    "  - name: gemm_skinny\n    space: {VEC: [8]}\n");
  const SpaceStage stage = space_stage(config);
  ASSERT_FALSE(stage.candidates.empty());
  for (const Candidate& c : stage.candidates) {
    EXPECT_EQ(c.point["LAYOUTS"], 1 | 2) << c.id();  // RR as asked, RC as run
    EXPECT_FALSE(c.kernel_template->refusal(c.point, shape_of(config.problems.front()))) << c.id();
  }
}

TEST(TransposedForm, TheSpaceCompilesForSwappingPointsTheOrdersTheirFormsRead) {
  // An RR and an RC skinny problem: points that swap run them as CC and RC; the others as stated.
  const Config config = h200_config(
      "  - {name: rr, m: 24, n: 8192, k: 4096, precision: bf16}\n"
      "  - {name: rc, m: 20, n: 8192, k: 4096, precision: bf16, layout: RC}\n",
      "  - name: gemm_wgmma\n    space: {BN: [24, 128], CLUSTER_M: [1], SWAP_AB: [0, 1]}\n");
  const SpaceStage stage = space_stage(config);
  int swapping = 0, plain = 0;
  for (const Candidate& c : stage.candidates) {
    SCOPED_TRACE(c.id());
    if (c.point["SWAP_AB"]) {
      ++swapping;
      EXPECT_EQ(c.point["LAYOUTS"], 8 | 2);  // CC for the RR problem, RC for the RC one
      for (const Problem& p : config.problems) EXPECT_FALSE(c.kernel_template->refusal(c.point, shape_of(p)));
    } else {
      ++plain;
      EXPECT_EQ(c.point["LAYOUTS"], 1 | 2);
      // BN = 24 reads B K-major only: the RC problem is its, the RR one is not.
      EXPECT_EQ(!c.kernel_template->refusal(c.point, shape_of(config.problems[0])), c.point["BN"] == 128);
      EXPECT_FALSE(c.kernel_template->refusal(c.point, shape_of(config.problems[1])));
    }
  }
  EXPECT_EQ(swapping, 2);  // BN 24 and 128
  EXPECT_EQ(plain, 2);
}

}  // namespace
}  // namespace tunefuzz
