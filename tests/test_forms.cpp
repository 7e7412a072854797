// The form a kernel runs a GEMM in (canonical_form, launch_form in runtime/templates/kernel_template.hpp): a
// matrix-vector product as Cᵀ = Bᵀ·Aᵀ, a contiguous single row or column read along K. The rewrites are laws
// about bytes, checked here on the host: the rewritten GEMM reads and writes the same elements as the one
// stated, a second rewrite changes nothing, and the templates and the space stage serve what the rewrite
// reaches.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "runtime/templates/gemm_skinny.hpp"
#include "runtime/templates/kernel_template.hpp"
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

/// C = A·B + C over integer-valued data, element by element as `s` lays the operands out (C row-major).
void reference_gemm(const GemmShape& s, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                    std::vector<int64_t>& c) {
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      int64_t sum = 0;
      for (int64_t l = 0; l < s.k; ++l)
        sum += a.at(static_cast<size_t>(at(s.layout.a, s.lda, i, l))) *
               b.at(static_cast<size_t>(at(s.layout.b, s.ldb, l, j)));
      c.at(static_cast<size_t>(i * s.ldc + j)) += sum;
    }
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
    // Buffers as large as the stated layout addresses, filled with distinct small integers.
    const auto extent = [](Order o, int64_t ld, int64_t rows, int64_t cols) {
      return rows == 0 || cols == 0 ? 1 : at(o, ld, rows - 1, cols - 1) + 1;
    };
    std::vector<int64_t> a(static_cast<size_t>(extent(s.layout.a, s.lda, s.m, s.k))),
        b(static_cast<size_t>(extent(s.layout.b, s.ldb, s.k, s.n))),
        c(static_cast<size_t>(s.m == 0 || s.n == 0 ? 1 : (s.m - 1) * s.ldc + s.n));
    for (auto* v : {&a, &b, &c})
      for (int64_t& x : *v) x = static_cast<int64_t>(random() % 19) - 9;
    std::vector<int64_t> stated = c, formed = c;
    reference_gemm(s, a, b, stated);
    const GemmForm form = canonical_form(s);
    if (!(form.shape == s)) ++rewritten;
    if (form.swapped) {
      ++swapped;
      EXPECT_EQ(form.shape.a_alignment, s.b_alignment);
      EXPECT_EQ(form.shape.b_alignment, s.a_alignment);
    }
    // The rewritten GEMM may only address the elements the stated one does: a rewrite that invents a leading
    // dimension reaches past the buffers here (vector::at throws).
    ASSERT_NO_THROW(reference_gemm(form.shape, form.swapped ? b : a, form.swapped ? a : b, formed))
        << s.m << "x" << s.n << "x" << s.k << " " << to_string(s.layout);
    EXPECT_EQ(formed, stated) << s.m << "x" << s.n << "x" << s.k << " " << to_string(s.layout) << " lda "
                              << s.lda << " ldb " << s.ldb << " ldc " << s.ldc;
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

TEST(CanonicalForm, TheSpaceCompilesTheOrderAProblemRunsIn) {
  std::ifstream file(TUNEFUZZ_SOURCE_DIR "/configs/h200.yaml");
  const std::string shipped((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string gpu = shipped.substr(0, shipped.find("\nproblems:"));
  // One RR matrix-vector product: gemm_skinny serves it only as Cᵀ = Bᵀ·Aᵀ, in RC.
  const Config config = parse_config(gpu +
                                         "\noutput: forms.yaml\nproblems:\n"
                                         "  - {name: gemv, m: 8192, n: 1, k: 8192, precision: bf16}\n"
                                         "templates:\n"
                                         "  - name: gemm_skinny\n    space: {VEC: [8]}\n",
                                     "forms.yaml");
  const SpaceStage stage = space_stage(config);
  ASSERT_FALSE(stage.candidates.empty());
  for (const Candidate& c : stage.candidates) {
    EXPECT_EQ(c.point["LAYOUTS"], 1 | 2) << c.id();  // RR as asked, RC as run
    EXPECT_FALSE(c.kernel_template->refusal(c.point, shape_of(config.problems.front()))) << c.id();
  }
}

}  // namespace
}  // namespace tunefuzz
