// The cuBLAS baseline, on the tuned kernels' device operands in the same process. Row-major C = A·B is
// column-major Cᵀ = Bᵀ·Aᵀ: cuBLAS's first operand is our B, its second our A, and M and N swap.
// fp16/bf16/fp32/tf32 inputs go through cublasGemmEx; fp8 inputs through cuBLASLt (cublasLtMatmul), whose
// FP8 kernels want the "TN" form (layout RC here), 16-byte sizes and addresses, and no E5M2 x E5M2, and
// whose E4M3 D comes with a C in bf16 or fp16: an fp8 C_out = alpha·A·B + beta·C is served for beta == 0.
#include <cublasLt.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "runtime/cuda/runner.hpp"

namespace tunefuzz::device {

namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::launch, std::string(what) + ": " + cublasGetStatusName(status) + " (" +
                                       cublasGetStatusString(status) + ")");
}

cudaDataType data_type(Precision p) {
  switch (p) {
    case Precision::fp16:
      return CUDA_R_16F;
    case Precision::bf16:
      return CUDA_R_16BF;
    case Precision::fp32:
    case Precision::tf32:  // tf32 values live in fp32 storage
      return CUDA_R_32F;
    case Precision::fp8e4m3:
      return CUDA_R_8F_E4M3;
    case Precision::fp8e5m2:
      return CUDA_R_8F_E5M2;
  }
  return CUDA_R_32F;
}

// fp16/bf16/fp8 inputs: fp32 accumulation, on tensor cores where cuBLAS likes. fp32 inputs: pedantic fp32, so
// that the baseline is a true fp32 GEMM on CUDA cores, never TF32 or a BF16x9 emulation on tensor cores.
// tf32 inputs already hold tf32 values, so TF32 tensor cores compute their products exactly.
cublasComputeType_t compute_type(Precision input) {
  switch (input) {
    case Precision::fp32:
      return CUBLAS_COMPUTE_32F_PEDANTIC;
    case Precision::tf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Precision::fp16:
    case Precision::bf16:
    case Precision::fp8e4m3:
    case Precision::fp8e5m2:
      return CUBLAS_COMPUTE_32F;
  }
  return CUBLAS_COMPUTE_32F;
}

/// How cuBLAS (column-major) reads an operand stored in `order`: a row-major matrix is the transpose.
cublasOperation_t operation(Order order) {
  return order == Order::row ? CUBLAS_OP_N : CUBLAS_OP_T;
}

std::string version_text(const char* library, size_t version) {
  return std::string(library) + " " + std::to_string(version / 10000) + "." +
         std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
}

// ---- cuBLASLt ------------------------------------------------------------------------------------------

constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;  // cuMemAlloc's 256-byte alignment suits cuBLASLt

struct LtDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* desc) const { cublasLtMatmulDescDestroy(desc); }
  void operator()(cublasLtMatrixLayoutOpaque_t* layout) const { cublasLtMatrixLayoutDestroy(layout); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* preference) const {
    cublasLtMatmulPreferenceDestroy(preference);
  }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, LtDeleter>;
using MatrixLayout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LtDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, LtDeleter>;

/// A column-major `rows` × `cols` matrix with leading dimension `ld`.
MatrixLayout matrix_layout(cudaDataType type, int64_t rows, int64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_cublas(
      cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
      "cublasLtMatrixLayoutCreate");
  return MatrixLayout(layout);
}

template <typename Value>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const Value& value) {
  check_cublas(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)),
               "cublasLtMatmulDescSetAttribute");
}

template <typename Value>
void set_preference(cublasLtMatmulPreference_t preference, cublasLtMatmulPreferenceAttributes_t attribute,
                    const Value& value) {
  check_cublas(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof(value)),
               "cublasLtMatmulPreferenceSetAttribute");
}

/// Byte alignment the heuristic may assume of an operand (cuBLASLt's default, and most, is 256).
uint32_t alignment_preference(int64_t alignment) {
  return static_cast<uint32_t>(std::clamp<int64_t>(alignment, 1, 256));
}

using ShapeKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

/// Everything cuBLASLt's choice of algorithm depends on: sizes, leading dimensions and alignments.
ShapeKey shape_key(const GemmShape& s) {
  return {s.m, s.n, s.k, s.lda, s.ldb, s.ldc, s.a_alignment, s.b_alignment, s.c_alignment};
}

/// One shape's cublasLtMatmul: descriptors and the heuristic's algorithm, or why there is none. cuBLAS's
/// A is our B, its B our A, and its C = D our C (in place), except for an fp8 D: its C is bf16 (cuBLASLt's
/// FP8 table: E4M3 x E4M3 with D in E4M3 takes C in BF16 or FP16), never read (beta == 0).
struct LtPlan {
  MatmulDesc operation;
  MatrixLayout first, second, output;
  MatrixLayout unread_c;  ///< fp8 D only: C's layout, bf16 of D's shape
  cublasLtMatmulAlgo_t algorithm{};
  std::optional<std::string> refusal;

  cublasLtMatrixLayout_t c_layout() const { return unread_c ? unread_c.get() : output.get(); }
};

/// The FP8 kernels' rules on sizes, leading dimensions and addresses (cuBLAS "Tensor Core Usage", which
/// cublasLtMatmul requires of FP8), in our terms for layout RC: cuBLAS's m = N, n = M, k = K; its A is our B
/// (op T), its B our A (op N), both 1-byte elements; C has `c_bytes` per element.
std::optional<std::string> fp8_alignment_refusal(const GemmShape& s, int c_bytes) {
  std::vector<std::string> broken;
  const auto need = [&](bool holds, const std::string& what) {
    if (!holds) broken.push_back(what);
  };
  need(s.k % 16 == 0, "K = " + std::to_string(s.k));
  need(s.lda % 16 == 0, "lda = " + std::to_string(s.lda));
  need(s.ldb % 16 == 0, "ldb = " + std::to_string(s.ldb));
  need(s.n * c_bytes % 16 == 0,
       "N = " + std::to_string(s.n) + " (" + std::to_string(s.n * c_bytes) + " bytes)");
  need(s.ldc * c_bytes % 16 == 0,
       "ldc = " + std::to_string(s.ldc) + " (" + std::to_string(s.ldc * c_bytes) + " bytes)");
  need(s.a_alignment % 16 == 0, "A on a " + std::to_string(s.a_alignment) + "-byte boundary");
  need(s.b_alignment % 16 == 0, "B on a " + std::to_string(s.b_alignment) + "-byte boundary");
  need(s.c_alignment % 16 == 0, "C on a " + std::to_string(s.c_alignment) + "-byte boundary");
  if (broken.empty()) return std::nullopt;
  std::string list;
  for (const std::string& item : broken) list += (list.empty() ? "" : ", ") + item;
  return "cuBLASLt FP8 needs K, lda and ldb multiples of 16, N and ldc multiples of 16 bytes of C, and A, B "
         "and C on 16-byte boundaries; here " +
         list;
}

}  // namespace

/// The cuBLASLt side of the runner (fp8 inputs): its handle, a workspace it owns, and one plan per shape,
/// made on first use (the heuristic runs once per shape).
struct CublasRunner::Lt {
  cublasLtHandle_t handle = nullptr;
  DeviceBuffer workspace{kLtWorkspaceBytes};
  std::map<ShapeKey, LtPlan> plans;

  Lt() { check_cublas(cublasLtCreate(&handle), "cublasLtCreate"); }
  ~Lt() {
    plans.clear();  // descriptors before the handle
    if (handle) cublasLtDestroy(handle);
  }
  Lt(const Lt&) = delete;
  Lt& operator=(const Lt&) = delete;

  const LtPlan& plan(const GemmShape& s, TypePair types) {
    const ShapeKey key = shape_key(s);
    if (auto found = plans.find(key); found != plans.end()) return found->second;
    return plans.emplace(key, make_plan(s, types)).first->second;
  }

  LtPlan make_plan(const GemmShape& s, TypePair types) const {
    LtPlan plan;
    cublasLtMatmulDesc_t desc = nullptr;
    check_cublas(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    plan.operation.reset(desc);
    // Per-tensor scales stay unset (1): our kernels fold scales into alpha. Fast accumulation stays off, so
    // partial sums are promoted to fp32 at intervals.
    const cublasOperation_t first_op = operation(s.layout.b), second_op = operation(s.layout.a);
    set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(first_op));
    set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(second_op));
    // Stored shapes, before the operation: cuBLAS's A is N×K (op N) or K×N (op T), its B K×M or M×K.
    const bool first_n = first_op == CUBLAS_OP_N, second_n = second_op == CUBLAS_OP_N;
    plan.first = matrix_layout(data_type(types.input), first_n ? s.n : s.k, first_n ? s.k : s.n, s.ldb);
    plan.second = matrix_layout(data_type(types.input), second_n ? s.k : s.m, second_n ? s.m : s.k, s.lda);
    plan.output = matrix_layout(data_type(types.output), s.n, s.m, s.ldc);
    const bool fp8_output = is_fp8(types.output);
    if (fp8_output) plan.unread_c = matrix_layout(CUDA_R_16BF, s.n, s.m, s.ldc);

    cublasLtMatmulPreference_t raw_preference = nullptr;
    check_cublas(cublasLtMatmulPreferenceCreate(&raw_preference), "cublasLtMatmulPreferenceCreate");
    const Preference preference(raw_preference);
    set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t{kLtWorkspaceBytes});
    set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                   alignment_preference(s.b_alignment));
    set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                   alignment_preference(s.a_alignment));
    set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                   alignment_preference(fp8_output ? s.a_alignment : s.c_alignment));  // run() passes A as C
    set_preference(raw_preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                   alignment_preference(s.c_alignment));

    cublasLtMatmulHeuristicResult_t result{};
    int count = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(handle, desc, plan.first.get(), plan.second.get(), plan.c_layout(),
                                       plan.output.get(), raw_preference, 1, &result, &count);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && count == 0)) {
      const std::string why = count == 0 && status == CUBLAS_STATUS_SUCCESS ? "its heuristic returned none"
                                                                            : cublasGetStatusName(status);
      plan.refusal = std::string("cuBLASLt has no algorithm for this ") + to_string(types.input) + " -> " +
                     to_string(types.output) + " GEMM on this GPU (" + why + ")";
      return plan;
    }
    check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
    plan.algorithm = result.algo;
    return plan;
  }
};

CublasRunner::CublasRunner(TypePair types, double beta, CUstream stream) : types_(types), beta_(beta) {
  if (is_fp8(types.input)) lt_ = std::make_unique<Lt>();
  check_cublas(cublasCreate(&handle_), "cublasCreate");
  check_cublas(cublasSetStream(handle_, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
}

CublasRunner::~CublasRunner() {
  if (handle_) cublasDestroy(handle_);
}

std::string CublasRunner::name() const {
  return "cublas";
}

std::string CublasRunner::version() const {
  if (lt_) return version_text("cuBLASLt", cublasLtGetVersion());
  int version = 0;
  cublasGetVersion(handle_, &version);
  return version_text("cuBLAS", static_cast<size_t>(version));
}

std::optional<std::string> CublasRunner::fp8_refusal(const GemmShape& s) const {
  const Precision output = types_.output;
  if (types_.input == Precision::fp8e5m2)
    return std::string(
        "cuBLASLt has no E5M2 x E5M2 GEMM (its FP8 kernels take E4M3 x E4M3, E4M3 x E5M2 and E5M2 x E4M3)");
  if (output != Precision::bf16 && output != Precision::fp16 && output != Precision::fp32 &&
      output != Precision::fp8e4m3)
    return std::string("cuBLASLt's E4M3 x E4M3 GEMMs write bf16, fp16, fp32 or fp8e4m3, not ") +
           to_string(output);
  if (is_fp8(output) && beta_ != 0)
    return std::string(
        "cuBLASLt's fp8-output GEMM takes C in bf16 or fp16, not fp8: it serves beta == 0 only");
  if (s.layout != Layout{Order::row, Order::col})
    return "cuBLASLt FP8 needs A row-major and B column-major (layout RC, its \"TN\" form), not layout " +
           to_string(s.layout);
  if (auto why = fp8_alignment_refusal(s, size_of(output))) return why;
  return lt_->plan(s, types_).refusal;
}

std::optional<std::string> CublasRunner::refusal(const GemmShape& s) const {
  if (lt_) return fp8_refusal(s);
  const bool supported = types_.output == Precision::fp32 || types_.output == types_.input;
  if (!supported)
    return std::string("cublasGemmEx has no ") + to_string(types_.input) + " -> " + to_string(types_.output) +
           " GEMM";
  if (s.m > INT_MAX || s.n > INT_MAX || s.k > INT_MAX || s.lda > INT_MAX || s.ldb > INT_MAX ||
      s.ldc > INT_MAX)
    return std::string("sizes beyond 2^31 - 1");
  return std::nullopt;
}

void CublasRunner::run(const DeviceGemm& g, CUdeviceptr, CUstream stream) const {
  const float alpha = g.alpha, beta = g.beta;
  const auto& s = g.shape;
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands and M with N.
  if (lt_) {
    const LtPlan& plan = lt_->plan(s, types_);
    if (plan.refusal) throw Error(ErrorKind::launch, "cublasLtMatmul: " + *plan.refusal);
    const auto d = reinterpret_cast<void*>(g.c);
    // An fp8 D's bf16 C is not read (beta == 0), but cuBLASLt takes neither null nor D for it: A stands in.
    const bool fp8_output = is_fp8(types_.output);
    if (fp8_output && beta != 0.0f)
      throw Error(ErrorKind::internal, "cublasLtMatmul: an fp8 output with beta != 0 (refused by refusal())");
    const void* c = fp8_output ? reinterpret_cast<const void*>(g.a) : d;
    check_cublas(cublasLtMatmul(lt_->handle, plan.operation.get(), &alpha, reinterpret_cast<const void*>(g.b),
                                plan.first.get(), reinterpret_cast<const void*>(g.a), plan.second.get(),
                                &beta, c, plan.c_layout(), d, plan.output.get(), &plan.algorithm,
                                reinterpret_cast<void*>(lt_->workspace.get()), kLtWorkspaceBytes,
                                reinterpret_cast<cudaStream_t>(stream)),
                 "cublasLtMatmul");
    return;
  }
  check_cublas(cublasSetStream(handle_, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  check_cublas(
      cublasGemmEx(handle_, operation(s.layout.b), operation(s.layout.a), static_cast<int>(s.n),
                   static_cast<int>(s.m), static_cast<int>(s.k), &alpha, reinterpret_cast<const void*>(g.b),
                   data_type(types_.input), static_cast<int>(s.ldb), reinterpret_cast<const void*>(g.a),
                   data_type(types_.input), static_cast<int>(s.lda), &beta, reinterpret_cast<void*>(g.c),
                   data_type(types_.output), static_cast<int>(s.ldc), compute_type(types_.input),
                   CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

}  // namespace tunefuzz::device
