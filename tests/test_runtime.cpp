// The runtime's host side, without a GPU: argument checks (a clear error before anything can launch), the
// quick return, the lookup rule over the committed H100 table, the walk to the next candidate when the chosen
// one refuses, the fallback or the error when none accepts, and cuBLAS-shaped arguments read column-major.
// The device is the H100 of configs/h100.yaml, the table results/h100.yaml: real inputs, no GPU needed.
#include <gtest/gtest.h>

#include "runtime/dispatch/dispatch.hpp"
#include "runtime/dispatch/requests.hpp"
#include "runtime/dispatch/results_reader.hpp"
#include "runtime/templates/gemm_wgmma.hpp"
#include "tuner/config/config.hpp"

namespace tunefuzz::dispatch {
namespace {

const std::string kSource = TUNEFUZZ_SOURCE_DIR;

DeviceInfo h100() {
  const Config config = load_config(kSource + "/configs/h100.yaml");
  DeviceInfo device;
  device.name = config.gpu.name;
  device.arch = config.gpu.arch;
  device.limits = config.gpu.limits;
  return device;
}

std::vector<Row> h100_rows() {
  const ResultsTable table = read_results_table(kSource + "/results/h100.yaml");
  std::vector<Row> rows;
  for (const TableRow& r : table.rows)
    if (r.winner)
      rows.push_back(make_row(table.gpu_name, table.gpu_arch, r.problem.name, r.problem.m, r.problem.n,
                              r.problem.k, to_string(r.problem.input), to_string(r.problem.output),
                              to_string(r.problem.layout), r.winner->id));
  return rows;
}

/// A bf16 RR GEMM with packed leading dimensions and 256-byte aligned operands.
Request bf16(int64_t m, int64_t n, int64_t k) {
  Request r;
  r.m = m;
  r.n = n;
  r.k = k;
  r.lda = k;
  r.ldb = n;
  r.ldc = n;
  r.a = 0x100000;
  r.b = 0x200000;
  r.c = 0x300000;
  return r;
}

/// The error `check` throws for `r`, or a failure when it accepts it.
Error rejection(const Request& r) {
  try {
    check(r);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "check() accepted the request";
  return Error(ErrorKind::internal, "accepted");
}

TEST(RuntimeArguments, ACleanRequestPasses) {
  EXPECT_NO_THROW(check(bf16(64, 64, 64)));
}

TEST(RuntimeArguments, ShortLeadingDimensionsAreBadInputNamingTheArgument) {
  Request r = bf16(64, 48, 32);
  r.lda = 31;  // row-major A spans K = 32
  EXPECT_EQ(rejection(r).kind(), ErrorKind::bad_input);
  EXPECT_EQ(rejection(r).where().field, "lda");
  r = bf16(64, 48, 32);
  r.layout.a = Order::col;
  r.lda = 32;  // column-major A spans M = 64
  EXPECT_EQ(rejection(r).where().field, "lda");
  r = bf16(64, 48, 32);
  r.ldb = 47;
  EXPECT_EQ(rejection(r).where().field, "ldb");
  r = bf16(64, 48, 32);
  r.ldc = 0;
  EXPECT_EQ(rejection(r).where().field, "ldc");
  EXPECT_NE(std::string(rejection(r).what()).find("ldc = 0"), std::string::npos) << rejection(r).what();
}

TEST(RuntimeArguments, NullOperandsAreRefusedWhereTheGemmUsesThem) {
  Request r = bf16(8, 8, 8);
  r.a = 0;
  EXPECT_EQ(rejection(r).where().field, "A");
  r = bf16(8, 8, 8);
  r.c = 0;
  EXPECT_EQ(rejection(r).where().field, "C");
  // K = 0 reads neither A nor B; M = 0 touches nothing.
  r = bf16(8, 8, 0);
  r.a = r.b = 0;
  r.lda = 1;
  EXPECT_NO_THROW(check(r));
  r = bf16(0, 8, 8);
  r.a = r.b = r.c = 0;
  EXPECT_NO_THROW(check(r));
}

TEST(RuntimeArguments, NegativeSizesAndMisalignedAddressesAreBadInput) {
  Request r = bf16(8, 8, 8);
  r.n = -1;
  EXPECT_EQ(rejection(r).where().field, "n");
  r = bf16(8, 8, 8);
  r.b += 1;  // bf16 elements are 2 bytes
  EXPECT_EQ(rejection(r).kind(), ErrorKind::bad_input);
  EXPECT_EQ(rejection(r).where().field, "B");
}

TEST(RuntimeArguments, TypePairsNoKernelComputesAreUnsupported) {
  Request r = bf16(8, 8, 8);
  r.b_type = Precision::fp16;
  EXPECT_EQ(rejection(r).kind(), ErrorKind::unsupported);
  r = bf16(8, 8, 8);
  r.a_type = r.b_type = Precision::tf32;
  r.c_type = Precision::bf16;  // tf32 inputs write fp32 only
  EXPECT_EQ(rejection(r).kind(), ErrorKind::unsupported);
}

TEST(RuntimeDispatch, AnEmptyOutputIsAQuickReturnWithoutAnyCandidateOrFallback) {
  const Target target{h100(), {}, "cuBLAS", "none here"};
  for (const Request& r : {bf16(0, 64, 64), bf16(64, 0, 64)}) {
    const Decision d = decide({}, target, r);
    EXPECT_EQ(d.step, Step::quick_return);
    EXPECT_FALSE(d.candidate);
  }
}

TEST(RuntimeDispatch, KZeroStillRunsAKernelForBetaTimesC) {
  const Decision d = decide(h100_rows(), {h100(), {}}, bf16(4096, 4096, 0));
  EXPECT_NE(d.step, Step::quick_return);
  ASSERT_TRUE(d.candidate);
}

TEST(RuntimeDispatch, ATunedProblemGetsItsOwnRowsWinner) {
  const std::vector<Row> rows = h100_rows();
  const Decision d = decide(rows, {h100(), {}}, bf16(4096, 4096, 4096));
  EXPECT_EQ(d.step, Step::exact);
  ASSERT_TRUE(d.row);
  EXPECT_EQ(d.row->problem, "square_4096");
  EXPECT_EQ(d.candidate->id(), d.row->candidate.id());
  EXPECT_TRUE(d.passed_over.empty());
}

TEST(RuntimeDispatch, AnUntunedShapeTakesTheNearestRowOfItsCardThenOfItsArch) {
  const std::vector<Row> rows = h100_rows();
  Decision d = decide(rows, {h100(), {}}, bf16(4000, 4096, 4096));
  EXPECT_EQ(d.step, Step::nearest_shape);
  ASSERT_TRUE(d.row);
  EXPECT_EQ(d.row->problem, "square_4096");
  DeviceInfo other = h100();
  other.name = "NVIDIA H100 PCIe";  // another card of sm_90: the H100 rows serve it through its arch
  d = decide(rows, {other, {}}, bf16(4096, 4096, 4096));
  EXPECT_EQ(d.step, Step::same_arch);
  ASSERT_TRUE(d.row);
  EXPECT_EQ(d.row->problem, "square_4096");
}

TEST(RuntimeDispatch, AnotherArchGetsTheSafeDefault) {
  DeviceInfo a100 = h100();
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.arch = "sm_80";
  const Decision d = decide(h100_rows(), {a100, {}}, bf16(4096, 4096, 4096));
  EXPECT_EQ(d.step, Step::safe_default);
  EXPECT_EQ(d.candidate->kernel_template->name, "gemm_mma");
}

// The law of the walk: every candidate passed over refuses the problem on this GPU, in the rule's order, and
// the one chosen accepts it.
TEST(RuntimeDispatch, WhenTheChosenCandidateRefusesTheNextThatAcceptsRuns) {
  const std::vector<Row> rows = h100_rows();
  Request r = bf16(4096, 4096, 4096);
  r.a += 2;  // A off its 16-byte boundary: TMA (gemm_wgmma) and 8-wide vector loads refuse it
  const Decision d = decide(rows, {h100(), {}}, r);
  ASSERT_TRUE(d.candidate);
  ASSERT_FALSE(d.passed_over.empty());
  const std::vector<Ranked> ranked = ranked_candidates(rows, h100().name, "sm_90", shape_of(r), types_of(r));
  EXPECT_EQ(d.passed_over.front().rfind(ranked.front().candidate.id() + ": ", 0), 0u) << d.passed_over.front();
  for (size_t i = 0; i < d.passed_over.size(); ++i) {
    EXPECT_EQ(d.passed_over[i].rfind(ranked[i].candidate.id(), 0), 0u);
    EXPECT_TRUE(refusal_on(ranked[i].candidate, h100(), shape_of(r)));
  }
  EXPECT_EQ(ranked[d.passed_over.size()].candidate.id(), d.candidate->id());
  EXPECT_FALSE(refusal_on(*d.candidate, h100(), shape_of(r)));
}

// A row whose winner would be compiled from a template other than the one it was tuned with (the handle marks
// it) is passed over with that reason, as a refusing candidate is.
TEST(RuntimeDispatch, ARowMarkedUnusableIsPassedOverWithItsReason) {
  std::vector<Row> rows = h100_rows();
  for (Row& row : rows)
    if (row.problem == "square_4096") row.unusable = "its template changed since the table was tuned";
  const Decision d = decide(rows, {h100(), {}}, bf16(4096, 4096, 4096));
  ASSERT_FALSE(d.passed_over.empty());
  EXPECT_NE(d.passed_over.front().find("its template changed since the table was tuned"), std::string::npos);
  ASSERT_TRUE(d.row);
  EXPECT_NE(d.row->problem, "square_4096");
}

TEST(RuntimeDispatch, WhenNoCandidateAcceptsTheFallbackServesOrTheErrorSaysWhy) {
  Request r = bf16(64, 64, 64);
  r.a_type = r.b_type = Precision::fp8e5m2;  // no H100 row: only the untuned defaults could serve it
  r.c_type = Precision::fp8e5m2;
  EXPECT_EQ(decide(h100_rows(), {h100(), {}}, r).step, Step::safe_default);
  // On a card with 8 KiB of shared memory per block no template's default point fits.
  DeviceInfo small = h100();
  small.limits.shared_memory_per_block_optin = 8192;
  small.limits.shared_memory_per_sm = 8192;
  const auto takes_it = [](const GemmShape&, TypePair, float) { return std::optional<std::string>(); };
  EXPECT_EQ(decide(h100_rows(), {small, takes_it}, r).step, Step::fallback);
  try {
    decide(h100_rows(), {small, {}, "cuBLAS", "the handle was made with cublas_fallback off"}, r);
    FAIL() << "decide() found a kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("cublas_fallback off"), std::string::npos) << e.what();
  }
  const auto refuses = [](const GemmShape&, TypePair, float) { return std::optional<std::string>("no E5M2 x E5M2"); };
  try {
    decide(h100_rows(), {small, refuses}, r);
    FAIL() << "decide() found a kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuBLAS: no E5M2 x E5M2"), std::string::npos) << e.what();
  }
}

// A type pair the table never saw, on a shape the templates' default points refuse (K off the 16-byte
// unit): the untuned defaults that pack their operands serve it rather than an error.
TEST(RuntimeDispatch, AnUntunedTypePairOnAnOddShapeGetsAPackingDefault) {
  Request r = bf16(97, 131, 1031);
  r.a_type = r.b_type = Precision::fp8e4m3;
  const Decision d = decide({}, {h100(), {}}, r);
  ASSERT_TRUE(d.candidate);
  EXPECT_EQ(d.step, Step::safe_default);
  EXPECT_EQ(d.candidate->point["PACK"], 1) << d.candidate->id();
  EXPECT_FALSE(d.passed_over.empty());  // the unpacked defaults refused it first, saying why
}

TEST(RuntimeTables, RowsWithInjectedBugsOrWrongTypesAreRefused) {
  const std::string id = "gemm_simt/fp32-fp32/BM=64,BN=64,BK=8,TM=4,TN=4,STAGES=2,VEC=4,MIN_BLOCKS=1,GROUP_M=8";
  EXPECT_NO_THROW(make_row("card", "sm_90", "p", 1, 1, 1, "fp32", "fp32", "RR", id));
  EXPECT_THROW(make_row("card", "sm_90", "p", 1, 1, 1, "fp32", "fp32", "RR", id + "/mutant=1"), Error);
  EXPECT_THROW(make_row("card", "sm_90", "p", 1, 1, 1, "bf16", "bf16", "RR", id), Error);
  EXPECT_THROW(make_row("card", "sm_90", "p", 1, 1, 1, "fp32", "fp32", "XX", id), Error);
}

// cublasGemmEx's column-major C (m × n) = op(A) op(B) is row-major Cᵀ (n × m) = op(B)ᵀ op(A)ᵀ.
TEST(RuntimeGemmEx, ColumnMajorArgumentsBecomeTheTransposedRowMajorProblem) {
  const float alpha = 2, beta = 0.5f;
  alignas(256) char a[1] = {}, b[1] = {}, c[1] = {};  // host stand-ins: only their addresses are read
  const GemmEx call = gemm_ex(/*transa N*/ 0, /*transb T*/ 1, 100, 200, 300, &alpha, a, CUDA_R_16BF, 100, b,
                              CUDA_R_16BF, 200, &beta, c, CUDA_R_32F, 100, /*CUBLAS_COMPUTE_32F*/ 68);
  const runtime::Problem& p = call.problem;
  EXPECT_EQ(p.m, 200);
  EXPECT_EQ(p.n, 100);
  EXPECT_EQ(p.k, 300);
  EXPECT_EQ(p.a_order, runtime::Order::col);  // B transposed: stored n × k column-major
  EXPECT_EQ(p.b_order, runtime::Order::row);  // A not transposed: column-major m × k is row-major k × m
  EXPECT_EQ(p.lda, 200);
  EXPECT_EQ(p.ldb, 100);
  EXPECT_EQ(p.ldc, 100);
  EXPECT_EQ(p.c, runtime::Type::fp32);
  EXPECT_EQ(p.alpha, 2);
  EXPECT_EQ(p.beta, 0.5f);
  EXPECT_EQ(call.operands.a, b);
  EXPECT_EQ(call.operands.b, a);
  EXPECT_EQ(call.operands.c, c);
  EXPECT_NO_THROW(check(request_of(p, {b, a, c})));
}

TEST(RuntimeGemmEx, Tf32ComputeReadsFp32InputsAsTf32AndOtherArgumentsAreRefused) {
  const float one = 1;
  char x[4] = {};
  const auto call = [&](int transa, cudaDataType_t type, int compute) {
    return gemm_ex(transa, 0, 4, 4, 4, &one, x, type, 4, x, type, 4, &one, x, CUDA_R_32F, 4, compute);
  };
  EXPECT_EQ(call(0, CUDA_R_32F, 77).problem.a, runtime::Type::tf32);
  EXPECT_EQ(call(0, CUDA_R_32F, 68).problem.a, runtime::Type::fp32);
  EXPECT_THROW(call(7, CUDA_R_32F, 68), Error);     // no such transpose
  EXPECT_THROW(call(0, CUDA_R_64F, 68), Error);     // no fp64 kernels
  EXPECT_THROW(call(0, CUDA_R_16F, 64), Error);     // CUBLAS_COMPUTE_16F: the kernels accumulate in fp32
  EXPECT_THROW(gemm_ex(0, 0, 4, 4, 4, nullptr, x, CUDA_R_32F, 4, x, CUDA_R_32F, 4, &one, x, CUDA_R_32F, 4, 68),
               Error);
}

// Every registered template can be launched: a template added without a launcher for its source (as
// gemm_wgmma_tf32 once was) would compile and pass every host check, then fail every fuzz case on the GPU.
TEST(RuntimeLaunchers, EveryTemplateHasALauncherForItsSource) {
  for (const KernelTemplate* t : all_templates())
    EXPECT_TRUE(launcher_kind(*t).has_value()) << t->name << " (source " << t->source_file << ")";
  EXPECT_EQ(launcher_kind(gemm_wgmma_tf32_template()), launcher_kind(gemm_wgmma_template()));
  KernelTemplate unknown = gemm_wgmma_tf32_template();
  unknown.source_file = "gemm_unknown.cu";
  EXPECT_FALSE(launcher_kind(unknown).has_value());
}

}  // namespace
}  // namespace tunefuzz::dispatch
