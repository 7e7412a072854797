// GEMM on CUDA cores (no tensor cores): C = alpha·A·B + beta·C, accumulated with fp32 fused multiply-adds.
// A and B in fp32, or (CUDA only) fp16 or bf16 converted to fp32 as they are staged; C in fp32, or (CUDA only)
// fp16 or bf16. One CTA computes a BM×BN tile with (BM/TM)·(BN/TN) threads, each owning TM×TN outputs.
// A (BM, BK) and B (BK, BN) tiles are loaded VEC elements at a time into registers, then stored as fp32 into
// a STAGES-deep ring in shared memory: A transposed, (BK, BM), so that at each k a thread reads its TM values
// of A as float4 vectors, as it reads its TN values of B. A and B are read in their stored order, row- or
// column-major (one kernel per order, tf_gemm_rr … tf_gemm_cc, those in LAYOUTS), the vectors running along
// the stored rows, and put in the stages' order on the way from registers to shared memory. Every
// M, N, K ≥ 1 is handled (K = 0 by tf_scale_c, scale_c.h); VEC must divide the stored row lengths and leading
// dimensions of A and B, unless the launcher packs them into zero-padded 16-byte rows first (PACK=1, CUDA only:
// tf_pack from pack.h, which this module exports on CUDA). The kernel is small and walks no TMA ring, so a
// problem of a few tiles pays one short launch: the tensor-core templates' candidates for tiny shapes.
// K may be split over p.splits CTAs per output tile (SPLIT_K, the launcher's: units = tiles × splits, one CTA
// each, those of one split adjacent): each split writes its unscaled fp32 partial to the workspace and
// tf_reduce adds them in a fixed order (split_k.h), so the result does not depend on which split ran first.
// With beta == 0, C is never read.
//
// No inline assembly and no warp-level operations: the source compiles under NVRTC, hiprtc and nvcc alike,
// and nothing depends on the warp (wavefront) width, 32 on NVIDIA, 64 on AMD.
//
// Host-side declaration of the same tunables, constraints and shared-memory formula:
// runtime/templates/gemm_simt.cpp.
#include "tunefuzz_rtc.h"
#include "split_k.h"
#include "gemm_params.h"
#include "perturb.h"
#include "tile_map.h"

// ---- Tunables (names match configs and result tables) ----
#ifndef BM
#define BM 128  // CTA tile rows (M)
#endif
#ifndef BN
#define BN 128  // CTA tile columns (N)
#endif
#ifndef BK
#define BK 8  // CTA tile depth (K) per shared-memory stage
#endif
#ifndef TM
#define TM 8  // thread tile rows: each thread computes TM x TN outputs
#endif
#ifndef TN
#define TN 8  // thread tile columns
#endif
#ifndef STAGES
#define STAGES 2  // shared-memory stages: one is read while the next tile, staged in registers, is written
#endif
#ifndef VEC
#define VEC 4  // elements per global load along the stored rows of A and B (at most 16 bytes)
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2  // CTAs per SM the register allocation must leave room for (CUDA only; 1 = no cap)
#endif
#ifndef GROUP_M
#define GROUP_M 8  // CTA raster swizzle: tile rows walked together so concurrent CTAs share L2 lines
#endif
#ifndef LAYOUTS
#define LAYOUTS 15  // storage orders with a kernel in the image: TF_LAYOUT_RR 1, _RC 2, _CR 4, _CC 8
#endif
#ifndef TF_INPUT
#define TF_INPUT TF_TYPE_FP32  // element type of A and B: fp32, or fp16 or bf16 (CUDA)
#endif
#ifndef TF_OUTPUT
#define TF_OUTPUT TF_TYPE_FP32  // element type of C: fp32, or fp16 or bf16 (CUDA)
#endif
#ifndef TF_MUTANT
#define TF_MUTANT 0  // an injected bug (TF_MUTANT_* below) to prove the fuzzer catches it; 0 = none
#endif

// ---- Injected bugs, off by default ----
#define TF_MUTANT_SKIP_LAST_K_TILE 1    // the main loop stops one K tile early
#define TF_MUTANT_DROP_TAIL 2           // the last row and column of a partial tile are not stored
#define TF_MUTANT_BETA0_READS_C 3       // C is read (and scaled by 0) even when beta == 0
#define TF_MUTANT_INT32_OFFSET 4        // row offsets row·ld computed in 32-bit integers
#define TF_MUTANT_NO_STAGE_BARRIER 5    // no barrier between reading a stage and refilling it
#define TF_MUTANT_GROUP_DROP 6          // raster swizzle assumes the last group of tile rows is full
#define TF_MUTANT_NO_K_GUARD 7          // loads along K are not bounds-checked: a partial K tile reads past K
#define TF_MUTANT_SPLIT_DROPS_REMAINDER 8  // every split gets k_tiles / splits tiles: the remainder is lost
#define TF_MUTANT_PARTIAL_SCALED 9      // a split's partial is stored with alpha applied (the reduce applies it again)
#define TF_MUTANT_COL_GUARD_STORED 10   // a column-major A is bounds-checked by its stored (k, m) against (M, K)
#define TF_MUTANT_COL_B_STEP 11         // a column-major B's vector is stored along N, not down K

// ---- Derived values and what the tunables must satisfy ----
namespace tf {
constexpr int kThreadsM = BM / TM;  // threads along M
constexpr int kThreadsN = BN / TN;  // threads along N
constexpr int kThreads = kThreadsM * kThreadsN;
// Floats of padding per row of transposed A: rows stay 16-byte aligned, and the transposed stores of threads
// loading different columns of A land in different banks (for BK/VEC <= 2; two-way conflicts above).
constexpr int kAPad = 4;
constexpr int kARow = BM + kAPad;  // floats per row of A in shared memory: (BK, BM + kAPad) per stage
// The same padding for B: a column-major B goes in transposed, and rows BN + 4 floats apart put the stores
// of threads loading neighbouring k of one column in different banks.
constexpr int kBPad = 4;
constexpr int kBRow = BN + kBPad;  // floats per row of B in shared memory: (BK, BN + kBPad) per stage
constexpr int kAStage = BK * kARow;
constexpr int kBStage = BK * kBRow;
constexpr int kSmemBytes = STAGES * (kAStage + kBStage) * 4;
constexpr int kAVectors = BM * BK / VEC;  // global loads per A tile
constexpr int kBVectors = BK * BN / VEC;  // global loads per B tile
constexpr int kALoadsPerThread = (kAVectors + kThreads - 1) / kThreads;
constexpr int kBLoadsPerThread = (kBVectors + kThreads - 1) / kThreads;
}  // namespace tf

#if defined(__HIPCC_RTC__) && (TF_INPUT != TF_TYPE_FP32 || TF_OUTPUT != TF_TYPE_FP32)
#error "gemm_simt computes fp32 inputs and output on HIP (its 16-bit conversions are PTX)"
#endif
static_assert(TF_INPUT == TF_TYPE_FP32 || TF_INPUT == TF_TYPE_FP16 || TF_INPUT == TF_TYPE_BF16,
              "gemm_simt computes fp32, fp16 or bf16 inputs");
static_assert(TF_OUTPUT == TF_TYPE_FP32 || TF_OUTPUT == TF_TYPE_FP16 || TF_OUTPUT == TF_TYPE_BF16,
              "gemm_simt writes an fp32, fp16 or bf16 C");
static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile TMxTN must divide the CTA tile BMxBN");
static_assert(TM % 4 == 0 && TN % 4 == 0,
              "TM and TN must be multiples of 4 (thread tiles are read as float4 vectors)");
static_assert(tf::kThreads <= 1024, "more than 1024 threads per CTA: (BM/TM)*(BN/TN) > 1024");
static_assert(STAGES >= 2, "STAGES must be at least 2 (one stage read while the next is written)");
static_assert((VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8) && VEC * (TF_INPUT == TF_TYPE_FP32 ? 4 : 2) <= 16,
              "VEC must be 1, 2, 4 or 8 elements, at most 16 bytes");
static_assert(BK % VEC == 0 && BM % VEC == 0 && BN % VEC == 0,
              "VEC must divide BK, BM and BN (a load stays within one stored row of a tile)");
static_assert(MIN_BLOCKS >= 1, "MIN_BLOCKS must be at least 1");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert(LAYOUTS >= 1 && LAYOUTS <= 15, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC");

#if !defined(__HIPCC_RTC__)
#include "input_types.h"   // A's and B's 16-bit elements to fp32 (PTX conversions: CUDA only)
#include "output_types.h"  // C's loads and stores in fp16 or bf16 (likewise)
#endif

// Read back by the host after loading, to check that its launch geometry matches this instantiation.
extern "C" __constant__ tf_i32 tf_kernel_meta[4] = {tf::kThreads, tf::kSmemBytes, BM, BN};

namespace tf {

// Offset of element (row, col) of a row-major matrix with leading dimension ld.
__device__ __forceinline__ tf_i64 element_offset(tf_i64 row, tf_i64 ld, tf_i64 col) {
#if TF_MUTANT == TF_MUTANT_INT32_OFFSET
  return static_cast<tf_i64>(static_cast<tf_i32>(row) * static_cast<tf_i32>(ld)) + col;
#else
  return row * ld + col;
#endif
}

// ---- 16-byte accesses (p 16-byte aligned), global or shared ----
__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

__device__ __forceinline__ void load4_to(float* r, const float* p) {
  const float4 x = load4(p);
  r[0] = x.x;
  r[1] = x.y;
  r[2] = x.z;
  r[3] = x.w;
}

__device__ __forceinline__ void store4(float* p, float x, float y, float z, float w) {
  float4 v;
  v.x = x;
  v.y = y;
  v.z = z;
  v.w = w;
  *reinterpret_cast<float4*>(p) = v;
}

// ---- Vectors of VEC elements: one global load, converted to a register group of VEC floats ----
struct Vec {
  float v[VEC];
};

#if TF_INPUT == TF_TYPE_FP32
typedef float in_t;
#else
typedef tf_u16 in_t;

// Two 16-bit elements of one 32-bit word, the first in the low half (the lower address).
__device__ __forceinline__ void word_to_floats(tf_u32 w, float* r) {
  r[0] = tf_in_to_float(w & 0xffffu);
  r[1] = tf_in_to_float(w >> 16);
}
#endif

__device__ __forceinline__ Vec zero_vec() {
  Vec r;
#pragma unroll
  for (int e = 0; e < VEC; ++e) r.v[e] = 0.f;
  return r;
}

__device__ __forceinline__ Vec load_vec(const in_t* p) {
  Vec r;
#if TF_INPUT == TF_TYPE_FP32
#if VEC == 4
  load4_to(r.v, p);
#elif VEC == 2
  const float2 x = *reinterpret_cast<const float2*>(p);
  r.v[0] = x.x;
  r.v[1] = x.y;
#else
  r.v[0] = *p;
#endif
#else  // 16-bit elements: VEC/2 32-bit words (or one half word)
#if VEC == 8
  const uint4 x = *reinterpret_cast<const uint4*>(p);
  word_to_floats(x.x, r.v);
  word_to_floats(x.y, r.v + 2);
  word_to_floats(x.z, r.v + 4);
  word_to_floats(x.w, r.v + 6);
#elif VEC == 4
  const uint2 x = *reinterpret_cast<const uint2*>(p);
  word_to_floats(x.x, r.v);
  word_to_floats(x.y, r.v + 2);
#elif VEC == 2
  word_to_floats(*reinterpret_cast<const tf_u32*>(p), r.v);
#else
  r.v[0] = tf_in_to_float(*p);
#endif
#endif
  return r;
}

struct TileCoords {
  tf_i64 m0, n0;  // first row and column of this CTA's C tile
};

// ---- Global → registers → shared memory ----
// A tile (BM, BK) at K offset k0, row-major A: vector v covers tile row v / (BK/VEC), columns
// (v % (BK/VEC))·VEC; column-major A: k = v / (BM/VEC), rows (v % (BM/VEC))·VEC. B tile (BK, BN), row-major
// B: k = v / (BN/VEC), columns (v % (BN/VEC))·VEC; column-major B: column v / (BK/VEC), k (v % (BK/VEC))·VEC.
// Consecutive threads read consecutive vectors of a stored row. Since VEC divides the stored row lengths, a
// vector is either wholly inside the matrix or wholly outside (zero); packed copies (PACK=1) are padded to
// whole vectors with zeros. Loads of the next tile are issued before the current one is computed on and stored
// after, so their latency hides behind the arithmetic.
struct Staged {
  Vec a[kALoadsPerThread];
  Vec b[kBLoadsPerThread];
};

// (row, k) of the first element of A's vector v in the tile, and whether it is on this thread's list.
struct VecAt {
  int row, col;
};
__device__ __forceinline__ VecAt a_vector(int v, bool column_major) {
  return column_major ? VecAt{(v % (BM / VEC)) * VEC, v / (BM / VEC)} : VecAt{v / (BK / VEC), (v % (BK / VEC)) * VEC};
}
// (k, column) of the first element of B's vector v in the tile.
__device__ __forceinline__ VecAt b_vector(int v, bool column_major) {
  return column_major ? VecAt{(v % (BK / VEC)) * VEC, v / (BK / VEC)} : VecAt{v / (BN / VEC), (v % (BN / VEC)) * VEC};
}

template <bool kACol, bool kBCol>
__device__ __forceinline__ void fetch(Staged& s, const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const in_t* a = static_cast<const in_t*>(p.a);
  const in_t* b = static_cast<const in_t*>(p.b);
#pragma unroll
  for (int i = 0; i < kALoadsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    const VecAt at = a_vector(v, kACol);
    const tf_i64 row = t.m0 + at.row, col = k0 + at.col;
#if TF_MUTANT == TF_MUTANT_NO_K_GUARD
    const bool inside = row < p.m;
#elif TF_MUTANT == TF_MUTANT_COL_GUARD_STORED
    const bool inside = kACol ? col < p.m && row < p.k : row < p.m && col < p.k;
#else
    const bool inside = row < p.m && col < p.k;
#endif
    const bool mine = kAVectors % kThreads == 0 || v < kAVectors;
    const tf_i64 offset = kACol ? element_offset(col, p.lda, row) : element_offset(row, p.lda, col);
    s.a[i] = mine && inside ? load_vec(a + offset) : zero_vec();
  }
#pragma unroll
  for (int i = 0; i < kBLoadsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    const VecAt at = b_vector(v, kBCol);
    const tf_i64 row = k0 + at.row, col = t.n0 + at.col;
#if TF_MUTANT == TF_MUTANT_NO_K_GUARD
    const bool inside = col < p.n;
#else
    const bool inside = row < p.k && col < p.n;
#endif
    const bool mine = kBVectors % kThreads == 0 || v < kBVectors;
    const tf_i64 offset = kBCol ? element_offset(col, p.ldb, row) : element_offset(row, p.ldb, col);
    s.b[i] = mine && inside ? load_vec(b + offset) : zero_vec();
  }
}

// A goes in transposed, a_stage[k][m]: a row-major A element by element, a column-major A as it came (a
// vector along M). B goes in as b_stage[k][n]: a row-major B as it came, a column-major B element by element.
template <bool kACol, bool kBCol>
__device__ __forceinline__ void store(const Staged& s, float* a_stage, float* b_stage) {
#pragma unroll
  for (int i = 0; i < kALoadsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (kAVectors % kThreads == 0 || v < kAVectors) {
      const VecAt at = a_vector(v, kACol);
      const int step = kACol ? 1 : kARow;  // from one element of the vector to the next
#pragma unroll
      for (int e = 0; e < VEC; ++e) a_stage[at.col * kARow + at.row + e * step] = s.a[i].v[e];
    }
  }
#pragma unroll
  for (int i = 0; i < kBLoadsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (kBVectors % kThreads == 0 || v < kBVectors) {
      const VecAt at = b_vector(v, kBCol);
      float* dst = b_stage + at.row * kBRow + at.col;
#if VEC == 4
      if (!kBCol) {
        store4(dst, s.b[i].v[0], s.b[i].v[1], s.b[i].v[2], s.b[i].v[3]);
        continue;
      }
#endif
      const int step = kBCol && TF_MUTANT != TF_MUTANT_COL_B_STEP ? kBRow : 1;
#pragma unroll
      for (int e = 0; e < VEC; ++e) dst[e * step] = s.b[i].v[e];
    }
  }
}

// ---- Thread tile ----
// Thread (tm, tn) owns rows (i/4·kThreadsM + tm)·4 + i%4 for i < TM and columns (j/4·kThreadsN + tn)·4 + j%4
// for j < TN: groups of 4 spread kThreadsM (kThreadsN) groups apart, so that neighbouring threads read
// neighbouring float4 vectors of shared memory, without bank conflicts, and store neighbouring float4s of C.
__device__ __forceinline__ int tile_row(int tm, int i) { return ((i / 4) * kThreadsM + tm) * 4 + i % 4; }
__device__ __forceinline__ int tile_col(int tn, int j) { return ((j / 4) * kThreadsN + tn) * 4 + j % 4; }

// acc (TM × TN) += A stage (the thread's rows) · B stage (the thread's columns), one k at a time.
__device__ __forceinline__ void compute_stage(float (&acc)[TM][TN], const float* a_stage,
                                              const float* b_stage, int tm, int tn) {
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; i += 4) load4_to(a + i, a_stage + k * kARow + tile_row(tm, i));
#pragma unroll
    for (int j = 0; j < TN; j += 4) load4_to(b + j, b_stage + k * kBRow + tile_col(tn, j));
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

// ---- Epilogue: C = alpha·acc + beta·C on 4 adjacent columns, bounds-checked, a float4 where aligned ----
__device__ __forceinline__ void store_quad(const TfGemmParams& p, tf_i64 row, tf_i64 col, const float* v) {
#if TF_MUTANT == TF_MUTANT_DROP_TAIL
  const tf_i64 m_limit = (p.m % BM) ? p.m - 1 : p.m;
  const tf_i64 n_limit = (p.n % BN) ? p.n - 1 : p.n;
#else
  const tf_i64 m_limit = p.m, n_limit = p.n;
#endif
  if (row >= m_limit || col >= n_limit) return;
#if TF_MUTANT == TF_MUTANT_BETA0_READS_C
  const bool read_c = true;
#else
  const bool read_c = p.beta != 0.0f;
#endif
#if TF_OUTPUT != TF_TYPE_FP32
  unsigned char* const out = static_cast<unsigned char*>(p.c) + element_offset(row, p.ldc, col) * TF_OUT_BYTES;
  tf_epilogue_pair(out, p.alpha, p.beta, v[0], v[1], col + 1 < n_limit, read_c);
  if (col + 2 < n_limit)
    tf_epilogue_pair(out + 2 * TF_OUT_BYTES, p.alpha, p.beta, v[2], v[3], col + 3 < n_limit, read_c);
#else
  float* c = static_cast<float*>(p.c) + element_offset(row, p.ldc, col);
  if (col + 3 < n_limit && reinterpret_cast<tf_u64>(c) % 16 == 0) {
    float4 old;
    old.x = old.y = old.z = old.w = 0.f;
    if (read_c) old = load4(c);
    store4(c, p.alpha * v[0] + p.beta * old.x, p.alpha * v[1] + p.beta * old.y,
           p.alpha * v[2] + p.beta * old.z, p.alpha * v[3] + p.beta * old.w);
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (col + e < n_limit) c[e] = p.alpha * v[e] + (read_c ? p.beta * c[e] : 0.f);
  }
#endif
}

// Split-K: 4 adjacent columns of one split's unscaled partial, as a float4 (col is a multiple of 4, ldw too,
// the workspace 16-byte aligned). Columns of the quad past N are written as well, so that tf_reduce, which
// reads whole quads, reads no uninitialised memory.
__device__ __forceinline__ void store_partial_quad(const TfGemmParams& p, tf_i64 split, tf_i64 row, tf_i64 col,
                                                   const float* v) {
  if (row >= p.m || col >= p.n) return;
#if TF_MUTANT == TF_MUTANT_PARTIAL_SCALED
  const float scale = p.alpha;
#else
  const float scale = 1.f;
#endif
  store4(p.workspace + (split * p.m + row) * p.ldw + col, scale * v[0], scale * v[1], scale * v[2],
         scale * v[3]);
}

// tf_reduce's store: C = alpha·sum + beta·C on columns col and col + 1 of `row`, those below N.
__device__ __forceinline__ void store_pair(const TfGemmParams& p, tf_i64 row, tf_i64 col, float v0, float v1) {
  const bool read_c = p.beta != 0.0f;
  if (col >= p.n) return;
#if TF_OUTPUT != TF_TYPE_FP32
  tf_epilogue_pair(static_cast<unsigned char*>(p.c) + element_offset(row, p.ldc, col) * TF_OUT_BYTES, p.alpha, p.beta,
                   v0, v1, col + 1 < p.n, read_c);
#else
  float* c = static_cast<float*>(p.c) + element_offset(row, p.ldc, col);
  c[0] = p.alpha * v0 + (read_c ? p.beta * c[0] : 0.f);
  if (col + 1 < p.n) c[1] = p.alpha * v1 + (read_c ? p.beta * c[1] : 0.f);
#endif
}

}  // namespace tf

namespace tf {

// One CTA's work: unit blockIdx.x, an output tile and (kSplit) one of its K splits (tile_map.h); the split
// launch is its own kernel. At the 128-register cap of MIN_BLOCKS=2 on 256 threads, tf_gemm still spills on
// more 128x128 points than the plain kernel before split-K did (817a6e8 has a form that does not).
template <bool kSplit, bool kACol, bool kBCol>
__device__ __forceinline__ void gemm_unit(const TfGemmParams& p, float4* smem_vectors) {
  float* const a_smem = reinterpret_cast<float*>(smem_vectors);
  float* const b_smem = a_smem + STAGES * kAStage;

  const tf_i64 tiles_m = tf_ceil_div(p.m, BM);
  const tf_i64 tiles_n = tf_ceil_div(p.n, BN);
  const TfUnit unit = kSplit ? tf_unit_map(blockIdx.x, tiles_m, tiles_n, GROUP_M, TF_MUTANT != TF_MUTANT_GROUP_DROP)
                             : TfUnit{tf_tile_map(blockIdx.x, tiles_m, tiles_n, GROUP_M,
                                                  TF_MUTANT != TF_MUTANT_GROUP_DROP),
                                      0};
  const TfTile tile = unit.tile;
  if (unit.split >= (kSplit ? p.splits : 1) || tile.m >= tiles_m || tile.n >= tiles_n) return;
  const TileCoords t = {tile.m * BM, tile.n * BN};

  const int tm = threadIdx.x / kThreadsN;
  const int tn = threadIdx.x % kThreadsN;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  tf_i64 all_k_tiles = tf_ceil_div(p.k, BK);
#if TF_MUTANT == TF_MUTANT_SKIP_LAST_K_TILE
  if (all_k_tiles > 1) all_k_tiles -= 1;
#endif
  // This split's K tiles [range.begin, range.end); an empty range still writes its (zero) partial. K tile kt
  // goes to stage kt % STAGES, counted from tile 0 whatever the split, so the loop carries no offset.
  const TfKRange range =
      kSplit ? tf_k_range(all_k_tiles, p.splits, unit.split, TF_MUTANT == TF_MUTANT_SPLIT_DROPS_REMAINDER)
             : TfKRange{0, all_k_tiles};
  const tf_i64 k_end = range.end;

  // Prologue: the first STAGES-1 tiles go straight to their stages.
  Staged staged;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    const tf_i64 kt = range.begin + s;
    if (kt < k_end) {
      const int stage = static_cast<int>(kt % STAGES);
      fetch<kACol, kBCol>(staged, p, t, kt * BK);
      store<kACol, kBCol>(staged, a_smem + stage * kAStage, b_smem + stage * kBStage);
    }
  }
  for (tf_i64 kt = range.begin; kt < k_end; ++kt) {
#if TF_MUTANT != TF_MUTANT_NO_STAGE_BARRIER
    __syncthreads();  // stage kt is complete, and the stage stored below is no longer being read
#endif
    const tf_i64 next = kt + STAGES - 1;
    if (next < k_end) fetch<kACol, kBCol>(staged, p, t, next * BK);
    const int s = static_cast<int>(kt % STAGES);
    tf_perturb(1, static_cast<tf_u32>(kt));  // a late reader of the stage
    compute_stage(acc, a_smem + s * kAStage, b_smem + s * kBStage, tm, tn);
    if (next < k_end) {
      const int s_next = static_cast<int>(next % STAGES);
      tf_perturb(2, static_cast<tf_u32>(kt));  // a late writer of the next stage
      store<kACol, kBCol>(staged, a_smem + s_next * kAStage, b_smem + s_next * kBStage);
    }
  }

  if (kSplit) {  // the partial into the workspace; tf_reduce finishes the tile
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const tf_i64 row = t.m0 + tile_row(tm, i);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        store_partial_quad(p, blockIdx.x / (tiles_m * tiles_n), row, t.n0 + tile_col(tn, j), &acc[i][j]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const tf_i64 row = t.m0 + tile_row(tm, i);
#pragma unroll
    for (int j = 0; j < TN; j += 4) store_quad(p, row, t.n0 + tile_col(tn, j), &acc[i][j]);
  }
}

}  // namespace tf

// One kernel per storage order of A and B in LAYOUTS (rr: both row-major, cr: A column-major, ...), and its
// split-K form (tf_gemm_split_rr, ...), as in the other templates: each has its load offsets and stage steps
// fixed at compile time and its own register count. One kernel that read the orders from its arguments kept
// both offset forms live: 185 registers where the row-major kernel alone takes 162 (BM=64, BN=128, BK=16,
// TM=TN=8), so three CTAs per SM became two, and fp32 4096x4095x4096 on the H200 went from 0.842x to 0.756x
// cuBLAS (results/vendor-weak-h200.yaml at 1e7764f).
#define TF_SIMT_ENTRIES(order, kACol, kBCol)                                                                     \
  extern "C" __global__ void TF_LAUNCH_BOUNDS(tf::kThreads, MIN_BLOCKS) tf_gemm_##order(const TfGemmParams p) {   \
    extern __shared__ float4 smem_vectors[]; /* float4 elements: 16-byte alignment under every compiler */       \
    tf::gemm_unit<false, kACol, kBCol>(p, smem_vectors);                                                        \
  }                                                                                                             \
  /* Split-K (p.splits > 1): one CTA per (tile, split), those of one split adjacent; each writes its partial. */ \
  extern "C" __global__ void TF_LAUNCH_BOUNDS(tf::kThreads, MIN_BLOCKS) tf_gemm_split_##order(                   \
      const TfGemmParams p) {                                                                                   \
    extern __shared__ float4 smem_vectors[];                                                                    \
    tf::gemm_unit<true, kACol, kBCol>(p, smem_vectors);                                                         \
  }
#if LAYOUTS & TF_LAYOUT_RR
TF_SIMT_ENTRIES(rr, false, false)
#endif
#if LAYOUTS & TF_LAYOUT_RC
TF_SIMT_ENTRIES(rc, false, true)
#endif
#if LAYOUTS & TF_LAYOUT_CR
TF_SIMT_ENTRIES(cr, true, false)
#endif
#if LAYOUTS & TF_LAYOUT_CC
TF_SIMT_ENTRIES(cc, true, true)
#endif
#undef TF_SIMT_ENTRIES

// Split-K's second pass (split_k.h): C = alpha · (the partials added in a fixed order) + beta · C.
extern "C" __global__ void tf_reduce(const TfGemmParams p) {
  tf::reduce_splits(p, tf_ceil_div(p.n, 4),
                    [&](tf_i64 row, tf_i64 col, float v0, float v1) { tf::store_pair(p, row, col, v0, v1); });
}

#include "scale_c.h"  // tf_scale_c: the launch for K = 0

#if !defined(__HIPCC_RTC__)
#define TF_ELEM_BYTES (TF_INPUT == TF_TYPE_FP32 ? 4 : 2)
#include "pack.h"  // tf_pack: PACK=1's copies in zero-padded 16-byte rows, in the operand's own order (CUDA)
#endif
