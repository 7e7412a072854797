// Skinny GEMM for decode shapes (M ≤ 128 against a large K×N weight) on tensor cores (mma.sync, sm_80+):
// C = alpha·A·B + beta·C, A (M×K) and B (K×N) in fp16 or bf16, fp32 accumulation, C in fp16, bf16 or fp32.
// The kernel computes Cᵀ = Bᵀ·Aᵀ: B's columns fill the 16 rows of an m16n8k16 mma and C's rows its 8 columns,
// so M is padded to 8, not 16. One CTA owns a BN-wide column slice of C for BM rows (all of M when M ≤ BM) and
// one K range: it streams that slice of B exactly once through a STAGES-deep cp.async ring in shared memory,
// with the matching BM×BK slice of A beside it, and reads both back with ldmatrix.
// K is split over SPLIT_K CTAs per output tile (units = tiles × splits, one CTA each). The splits of a tile
// write their fp32 partials to the workspace in the layout of their registers; the last split to arrive
// (an atomic counter per tile) sums the partials in split order 0..S-1, whatever the arrival order, applies
// alpha and beta, writes C, and resets the counter to 0 for the next launch. The counters live in a buffer the
// launcher owns and zeroes once, not in the workspace (runtime/cuda/gemm_skinny_runner.cpp).
// Every M, N, K ≥ 1 is computed; VEC (2, 4 or 8 elements: cp.async of 4, 8 or 16 bytes) must divide the stored
// rows of A and B and their leading dimensions. With beta == 0, C is never read.
//
// Host-side declaration of the same tunables, constraints and shared-memory formula:
// runtime/templates/gemm_skinny.cpp. Design and intended bandwidth: docs/skinny.md.
#include "tunefuzz_rtc.h"
#include "gemm_params.h"
#include "perturb.h"
#include "tile_map.h"

// ---- Tunables (names match configs and result tables) ----
#ifndef BM
#define BM 16  // C rows per CTA tile (M); M ≤ BM puts every row in one CTA, so B is read once
#endif
#ifndef BN
#define BN 64  // C columns per CTA tile (N): the width of the slice of B a CTA streams
#endif
#ifndef BK
#define BK 128  // K per pipeline stage
#endif
#ifndef WM
#define WM 16  // warp tile rows (M): 8 (one n8 fragment) or a multiple of 16
#endif
#ifndef WN
#define WN 16  // warp tile columns (N): a multiple of 16 (m16 fragments of Bᵀ)
#endif
#ifndef STAGES
#define STAGES 4  // shared-memory pipeline depth: STAGES-1 tiles of B in flight while one is consumed
#endif
#ifndef VEC
#define VEC 8  // elements per cp.async along the stored rows of A and B: 2, 4 or 8 (4, 8 or 16 bytes)
#endif
#ifndef LAYOUTS
#define LAYOUTS 15  // storage orders with a kernel in the image: TF_LAYOUT_RR 1, _RC 2, _CR 4, _CC 8
#endif
#ifndef TF_INPUT
#define TF_INPUT TF_TYPE_BF16  // element type of A and B (TF_TYPE_FP16 or TF_TYPE_BF16)
#endif
#ifndef TF_OUTPUT
#define TF_OUTPUT TF_TYPE_BF16  // element type of C (TF_TYPE_FP16, _BF16 or _FP32)
#endif
#ifndef TF_MUTANT
#define TF_MUTANT 0  // an injected bug (TF_MUTANT_* below) to prove the fuzzer catches it; 0 = none
#endif

// ---- Injected bugs in the hand-off between a tile's splits, off by default ----
#define TF_MUTANT_NO_COUNTER_RESET 1      // the last split leaves its tile's counter up: the next launch miscounts
#define TF_MUTANT_ARRIVE_BEFORE_STORES 2  // a CTA arrives at the counter before all its warps stored their partial
#define TF_MUTANT_LAST_OFF_BY_ONE 3       // the last split is looked for at count S, one past the last arrival

// ---- Derived values and what the tunables must satisfy ----
namespace tf {
typedef tf_u16 elem_t;
constexpr int kChunk = 8;            // elements per 16-byte chunk: one ldmatrix row
constexpr int kWarpsN = BN / WN;     // warps along N
constexpr int kWarpsM = BM / WM;     // warps along M
constexpr int kThreads = kWarpsN * kWarpsM * 32;
constexpr int kFragN = WN / 16;      // m16 fragments of Bᵀ per warp (16 columns of C each)
constexpr int kFragM = WM / 8;       // n8 fragments of Aᵀ per warp (8 rows of C each)
constexpr int kFrags = kFragN * kFragM;
constexpr int kBStage = BN * BK;     // (BK, BN) row-major B or (BN, BK) column-major B
constexpr int kAStage = BM * BK;     // (BM, BK) row-major A or (BK, BM) column-major A
constexpr int kSmemBytes = STAGES * (kAStage + kBStage) * 2;
constexpr bool kPowerOfTwo(int x) { return x > 0 && (x & (x - 1)) == 0; }
}  // namespace tf

static_assert(TF_INPUT == TF_TYPE_FP16 || TF_INPUT == TF_TYPE_BF16, "gemm_skinny computes fp16 or bf16 inputs");
static_assert(TF_OUTPUT == TF_TYPE_FP16 || TF_OUTPUT == TF_TYPE_BF16 || TF_OUTPUT == TF_TYPE_FP32,
              "TF_OUTPUT must be fp16, bf16 or fp32");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile WMxWN must divide the CTA tile BMxBN");
static_assert(WN % 16 == 0, "WN must be a multiple of 16 (m16 fragments of B transposed)");
static_assert(WM == 8 || WM % 16 == 0, "WM must be 8 or a multiple of 16 (ldmatrix loads one or two n8 fragments)");
static_assert(BK % 16 == 0, "BK must be a multiple of 16 (mma.sync k16 steps)");
static_assert(tf::kPowerOfTwo(BM) && tf::kPowerOfTwo(BN) && tf::kPowerOfTwo(BK),
              "BM, BN and BK must be powers of two (16-byte chunks are XOR-swizzled within a stored row)");
static_assert(BM <= 128, "BM must be at most 128 (the template serves M <= 128)");
static_assert(tf::kThreads <= 1024, "more than 1024 threads per CTA: (BN/WN)*(BM/WM)*32 > 1024");
static_assert(STAGES >= 2, "STAGES must be at least 2 (one stage loading while one is consumed)");
static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 2, 4 or 8 elements (cp.async copies 4, 8 or 16 bytes)");

#include "output_types.h"

// Read back by the host after loading, to check that its launch geometry matches this instantiation.
extern "C" __constant__ tf_i32 tf_kernel_meta[4] = {tf::kThreads, tf::kSmemBytes, BM, BN};

namespace tf {

#if TF_OUT_BYTES == 4
typedef float out_t;
#else
typedef tf_u16 out_t;
#endif

// ---- Shared-memory layout ----
// Element offset of (row, col) in a stage whose rows hold ROW elements. The 16-byte chunk index is XORed with
// bits of the row so that the 8 rows an ldmatrix phase reads fall in 8 different bank groups; a row of one
// chunk (column-major A with BM = 8) is not swizzled: 8 such rows are 128 contiguous bytes already.
template <int ROW>
__device__ __forceinline__ int smem_offset(int row, int col) {
  constexpr int chunks = ROW / kChunk;
  const int mask = chunks >= 8 ? (row & 7) : chunks == 4 ? ((row >> 1) & 3) : chunks == 2 ? ((row >> 2) & 1) : 0;
  return row * ROW + (((col / kChunk) ^ mask) * kChunk) + (col % kChunk);
}

__device__ __forceinline__ tf_u32 smem_address(const void* p) {
  return static_cast<tf_u32>(__cvta_generic_to_shared(p));
}

// ---- Global → shared copies ----
// One VEC-element copy; an out-of-bounds source is not read and the destination is zero-filled.
__device__ __forceinline__ void copy_async(elem_t* dst, const elem_t* src, bool valid) {
  constexpr int kBytes = VEC * 2;
  const int src_bytes = valid ? kBytes : 0;
#if VEC == 8
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src),
               "r"(src_bytes));
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_address(dst)), "l"(src),
               "n"(kBytes), "r"(src_bytes));
#endif
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

// Where a stage's tile sits in its operand as stored: ROWS × ROW_LEN elements starting at (row0, col0) of a
// rows × cols matrix with leading dimension ld. Row-major A: (BM, BK) at (m0, k0); column-major A: (BK, BM) at
// (k0, m0); row-major B: (BK, BN) at (k0, n0); column-major B: (BN, BK) at (n0, k0).
struct TileSource {
  const elem_t* base;
  tf_i64 row0, col0, rows, cols, ld;
};

struct TileCoords {
  tf_i64 m0, n0;  // first row and column of this CTA's C tile
};

template <bool A_COL>
__device__ __forceinline__ TileSource a_source(const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const elem_t* a = static_cast<const elem_t*>(p.a);
  return A_COL ? TileSource{a, k0, t.m0, p.k, p.m, p.lda} : TileSource{a, t.m0, k0, p.m, p.k, p.lda};
}

template <bool B_COL>
__device__ __forceinline__ TileSource b_source(const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const elem_t* b = static_cast<const elem_t*>(p.b);
  return B_COL ? TileSource{b, t.n0, k0, p.n, p.k, p.ldb} : TileSource{b, k0, t.n0, p.k, p.n, p.ldb};
}

// A stage's tile → shared memory, VEC elements per copy. Vector v covers stage row v / (ROW_LEN/VEC), columns
// (v % (ROW_LEN/VEC))·VEC: consecutive threads copy consecutive 16-byte pieces of one stored row. VEC divides
// the stored row length (the host refuses other problems), so a vector is wholly inside or wholly outside.
template <int ROWS, int ROW_LEN>
__device__ __forceinline__ void load_tile_async(elem_t* stage, const TileSource& src) {
  constexpr int kVectors = ROWS * ROW_LEN / VEC;
  constexpr int kPerThread = (kVectors + kThreads - 1) / kThreads;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (kVectors % kThreads == 0 || v < kVectors) {
      const int row = v / (ROW_LEN / VEC);
      const int col = (v % (ROW_LEN / VEC)) * VEC;
      const tf_i64 grow = src.row0 + row, gcol = src.col0 + col;
      const bool valid = grow < src.rows && gcol < src.cols;
      const elem_t* from = valid ? src.base + grow * src.ld + gcol : src.base;
      copy_async(stage + smem_offset<ROW_LEN>(row, col), from, valid);
    }
  }
}

template <bool A_COL, bool B_COL>
__device__ __forceinline__ void load_stage_async(elem_t* a_stage, elem_t* b_stage, const TfGemmParams& p,
                                                 TileCoords t, tf_i64 k0) {
  load_tile_async<B_COL ? BN : BK, B_COL ? BK : BN>(b_stage, b_source<B_COL>(p, t, k0));
  load_tile_async<A_COL ? BK : BM, A_COL ? BM : BK>(a_stage, a_source<A_COL>(p, t, k0));
}

// ---- Tensor-core step ----
__device__ __forceinline__ void ldmatrix_x4(tf_u32 (&r)[4], const elem_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(tf_u32 (&r)[4], const elem_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}

__device__ __forceinline__ void ldmatrix_x2(tf_u32 (&r)[2], const elem_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_address(p)));
}

__device__ __forceinline__ void ldmatrix_x2_trans(tf_u32 (&r)[2], const elem_t* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_address(p)));
}

// One 16×8×16 mma: d += a·b, with a (16 columns of C × 16 k: Bᵀ) in four registers, b (16 k × 8 rows of C: Aᵀ)
// in two, fp32 accumulators.
#if TF_INPUT == TF_TYPE_BF16
#define TF_MMA "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#else
#define TF_MMA "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#endif
__device__ __forceinline__ void mma(float (&d)[4], const tf_u32 (&a)[4], const tf_u32 (&b)[2]) {
  asm(TF_MMA " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// acc (kFragN × kFragM fragments of 16 columns × 8 rows of C) += Bᵀ (warp columns) · Aᵀ (warp rows) over one
// stage. Lanes 8j..8j+7 give the row addresses of ldmatrix matrix j (row r = lane % 8).
//   Bᵀ fragment (the mma's A operand, 16 n × 16 k): matrices (n 0-7, k 0-7), (n 8-15, k 0-7), (n 0-7, k 8-15),
//   (n 8-15, k 8-15). Column-major B is stored (n, k), read as is; row-major B is stored (k, n), read
//   transposed.
//   Aᵀ fragment (the mma's B operand, 16 k × 8 m, taken by columns = rows of A): matrices (m 0-7, k 0-7),
//   (m 0-7, k 8-15), then for a second n8 fragment (m 8-15, k 0-7), (m 8-15, k 8-15). Row-major A is stored
//   (m, k), read as is; column-major A is stored (k, m), read transposed.
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void compute_stage(float (&acc)[kFragN][kFragM][4], const elem_t* a_stage,
                                              const elem_t* b_stage, int warp_n, int warp_m, int lane) {
  const int j = lane >> 3, r = lane & 7;
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks) {
    tf_u32 b_frag[kFragN][4];
    tf_u32 a_frag[kFragM][2];
#pragma unroll
    for (int fn = 0; fn < kFragN; ++fn) {
      const int n = warp_n * WN + fn * 16 + (j & 1) * 8, k = ks * 16 + (j >> 1) * 8;
      if (B_COL)
        ldmatrix_x4(b_frag[fn], b_stage + smem_offset<BK>(n + r, k));
      else
        ldmatrix_x4_trans(b_frag[fn], b_stage + smem_offset<BN>(k + r, n));
    }
    if (kFragM == 1) {
      // One n8 fragment: matrices 0 and 1 (lanes 0-15 address them; the others' addresses are ignored).
      const int m = warp_m * WM, k = ks * 16 + (j & 1) * 8;
      tf_u32 (&q)[2] = a_frag[0];
      if (A_COL)
        ldmatrix_x2_trans(q, a_stage + smem_offset<BM>(k + r, m));
      else
        ldmatrix_x2(q, a_stage + smem_offset<BK>(m + r, k));
    } else {
#pragma unroll
      for (int pair = 0; pair < kFragM / 2; ++pair) {
        const int m = warp_m * WM + pair * 16 + (j >> 1) * 8, k = ks * 16 + (j & 1) * 8;
        tf_u32 q[4];
        if (A_COL)
          ldmatrix_x4_trans(q, a_stage + smem_offset<BM>(k + r, m));
        else
          ldmatrix_x4(q, a_stage + smem_offset<BK>(m + r, k));
        a_frag[2 * pair][0] = q[0];
        a_frag[2 * pair][1] = q[1];
        a_frag[2 * pair + 1][0] = q[2];
        a_frag[2 * pair + 1][1] = q[3];
      }
    }
#pragma unroll
    for (int fn = 0; fn < kFragN; ++fn)
#pragma unroll
      for (int fm = 0; fm < kFragM; ++fm) mma(acc[fn][fm], b_frag[fn], a_frag[fm]);
  }
}

// The K loop of one unit: acc += A(tile rows, K tiles [kt_begin, kt_end)) · B(same K tiles, tile columns).
// Each stage is one commit group (possibly empty), so cp.async.wait_group STAGES-2 means "tile kt has landed".
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void k_loop(float (&acc)[kFragN][kFragM][4], elem_t* a_smem, elem_t* b_smem,
                                       const TfGemmParams& p, TileCoords t, tf_i64 kt_begin, tf_i64 kt_end,
                                       int warp_n, int warp_m, int lane) {
  const tf_i64 k_tiles = kt_end - kt_begin;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles)
      load_stage_async<A_COL, B_COL>(a_smem + s * kAStage, b_smem + s * kBStage, p, t, (kt_begin + s) * BK);
    cp_async_commit();
  }
  for (tf_i64 kt = 0; kt < k_tiles; ++kt) {
    tf_perturb(1, static_cast<tf_u32>(kt));
    cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies)
    __syncthreads();              // ... everyone's copies too, and everyone is done with the stage refilled next
    const tf_i64 next = kt + STAGES - 1;
    if (next < k_tiles) {
      const int s = static_cast<int>(next % STAGES);
      load_stage_async<A_COL, B_COL>(a_smem + s * kAStage, b_smem + s * kBStage, p, t, (kt_begin + next) * BK);
    }
    cp_async_commit();
    const int s = static_cast<int>(kt % STAGES);
    tf_perturb(2, static_cast<tf_u32>(kt));  // a late reader of the stage the others refill next
    compute_stage<A_COL, B_COL>(acc, a_smem + s * kAStage, b_smem + s * kBStage, warp_n, warp_m, lane);
  }
  cp_async_wait<0>();  // only empty groups can remain; nothing is left in flight when the CTA moves on
}

// ---- Split-K: partials in the workspace, the last split to arrive finishes the tile ----
// A tile's partial from one split is kFrags × kThreads float4 (BM·BN floats), fragment-major then thread: a
// warp stores and loads 512 contiguous bytes per fragment. Splits of one tile are adjacent.
__device__ __forceinline__ float4* partial_slot(const TfGemmParams& p, tf_i64 tile, tf_i64 split) {
  return reinterpret_cast<float4*>(p.workspace) + (tile * p.splits + split) * (kFrags * kThreads) + threadIdx.x;
}

// Stores and loads that stay in L2 (no L1 allocation): the partials cross SMs.
__device__ __forceinline__ void store_partial(float4* to, const float (&v)[4]) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(to), "f"(v[0]), "f"(v[1]), "f"(v[2]),
               "f"(v[3])
               : "memory");
}

__device__ __forceinline__ void load_partial(const float4* from, float (&v)[4]) {
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
               : "l"(from)
               : "memory");
}

// Every split stores its partial, then arrives at the tile's counter. Returns true in the CTA that arrived
// last, with acc replaced by partial 0 + partial 1 + ... + partial S-1, added in that order (its own partial
// from registers, the others from the workspace): the sum does not depend on which split came last. That CTA
// also puts the counter back to 0; no other CTA of the launch touches it afterwards.
// Memory order: each thread's stores, then __threadfence and the barrier, then thread 0's fence and atomic
// (release); thread 0's atomic, then its fence, then the barrier before anyone loads (acquire).
__device__ __forceinline__ bool finish_split(float (&acc)[kFragN][kFragM][4], const TfGemmParams& p,
                                             tf_u32* counters, tf_i64 tile, tf_i64 split) {
  __shared__ int arrived_last;
  float4* const mine = partial_slot(p, tile, split);
  tf_perturb_far(3, static_cast<tf_u32>(split));  // some warps store their partials late
#pragma unroll
  for (int fn = 0; fn < kFragN; ++fn)
#pragma unroll
    for (int fm = 0; fm < kFragM; ++fm) store_partial(mine + (fn * kFragM + fm) * kThreads, acc[fn][fm]);
#if TF_MUTANT != TF_MUTANT_ARRIVE_BEFORE_STORES
  __threadfence();
  __syncthreads();
#endif
  if (threadIdx.x == 0) {
    tf_perturb(4, static_cast<tf_u32>(split));  // before the arrival
    __threadfence();
    const tf_u32 before = atomicAdd(counters + tile, 1u);
    __threadfence();
#if TF_MUTANT == TF_MUTANT_LAST_OFF_BY_ONE
    const bool last = static_cast<tf_i64>(before) == p.splits;
#else
    const bool last = static_cast<tf_i64>(before) == p.splits - 1;
#endif
#if TF_MUTANT != TF_MUTANT_NO_COUNTER_RESET
    if (last) atomicExch(counters + tile, 0u);
#endif
    arrived_last = last;
  }
  __syncthreads();
  if (!arrived_last) return false;
  __threadfence();
  const float4* const first = partial_slot(p, tile, 0);
#pragma unroll
  for (int fn = 0; fn < kFragN; ++fn)
#pragma unroll
    for (int fm = 0; fm < kFragM; ++fm) {
      const int f = fn * kFragM + fm;
      float sum[4], part[4];
      if (split == 0) {
        for (int e = 0; e < 4; ++e) sum[e] = acc[fn][fm][e];
      } else {
        load_partial(first + f * kThreads, sum);
      }
      for (tf_i64 s = 1; s < p.splits; ++s) {
        if (s == split) {
          for (int e = 0; e < 4; ++e) part[e] = acc[fn][fm][e];
        } else {
          load_partial(first + (s * kFrags + f) * kThreads, part);
        }
        for (int e = 0; e < 4; ++e) sum[e] += part[e];
      }
      for (int e = 0; e < 4; ++e) acc[fn][fm][e] = sum[e];
    }
  return true;
}

// ---- Epilogue: C = alpha·acc + beta·C, element by element, bounds-checked ----
__device__ __forceinline__ void store_element(const TfGemmParams& p, tf_i64 row, tf_i64 col, float v) {
  if (row >= p.m || col >= p.n) return;
  out_t* c = static_cast<out_t*>(p.c) + row * p.ldc + col;
  tf_store_out(c, p.beta != 0.0f ? p.alpha * v + p.beta * tf_load_out(c) : p.alpha * v);
}

// Fragment (fn, fm) holds C columns n = lane/4 and lane/4 + 8 of its 16, rows m = 2·(lane%4) and +1 of its 8:
// elements 0, 1 at (m, n), (m+1, n); elements 2, 3 at (m, n+8), (m+1, n+8).
__device__ __forceinline__ void store_tile(const float (&acc)[kFragN][kFragM][4], const TfGemmParams& p,
                                           TileCoords t, int warp_n, int warp_m, int lane) {
#pragma unroll
  for (int fn = 0; fn < kFragN; ++fn)
#pragma unroll
    for (int fm = 0; fm < kFragM; ++fm) {
      const tf_i64 n = t.n0 + warp_n * WN + fn * 16 + (lane >> 2);
      const tf_i64 m = t.m0 + warp_m * WM + fm * 8 + (lane & 3) * 2;
      store_element(p, m, n, acc[fn][fm][0]);
      store_element(p, m + 1, n, acc[fn][fm][1]);
      store_element(p, m, n + 8, acc[fn][fm][2]);
      store_element(p, m + 1, n + 8, acc[fn][fm][3]);
    }
}

// One CTA per unit: unit u is split u % S of tile u / S, and tile t is tile row t % tiles_m, tile column
// t / tiles_m (tf_tile_map with one group of all tile rows). The splits of a tile, and the tile rows of one
// B slice, are adjacent, so they run together and share what they read twice through L2.
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void gemm(const TfGemmParams& p, tf_u32* counters) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  elem_t* const a_smem = reinterpret_cast<elem_t*>(smem_raw);
  elem_t* const b_smem = a_smem + STAGES * kAStage;

  const tf_i64 tiles_m = tf_ceil_div(p.m, BM);
  const tf_i64 tiles_n = tf_ceil_div(p.n, BN);
  const tf_i64 unit = blockIdx.x;
  if (unit >= tiles_m * tiles_n * p.splits) return;
  const tf_i64 split = unit % p.splits;
  const tf_i64 tile = unit / p.splits;
  const TfTile where = tf_tile_map(tile, tiles_m, tiles_n, tiles_m, 1);
  const TileCoords t = {where.m * BM, where.n * BN};
  const TfKRange kr = tf_k_range(tf_ceil_div(p.k, BK), p.splits, split, 0);

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warp_n = warp % kWarpsN;
  const int warp_m = warp / kWarpsN;

  float acc[kFragN][kFragM][4];
#pragma unroll
  for (int fn = 0; fn < kFragN; ++fn)
#pragma unroll
    for (int fm = 0; fm < kFragM; ++fm)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[fn][fm][e] = 0.f;
  k_loop<A_COL, B_COL>(acc, a_smem, b_smem, p, t, kr.begin, kr.end, warp_n, warp_m, lane);
  if (p.splits > 1 && !finish_split(acc, p, counters, tile, split)) return;
  store_tile(acc, p, t, warp_n, warp_m, lane);
}

}  // namespace tf

// One entry point per storage order of A and B in LAYOUTS (rr: both row-major, rc: B column-major as in
// x·Wᵀ, ...).
static_assert(LAYOUTS >= 1 && LAYOUTS <= 15, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC");
// counters: one per output tile, zero before the launch and zero after it (used only with p.splits > 1).
#if LAYOUTS & TF_LAYOUT_RR
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_rr(const TfGemmParams p, tf_u32* counters) {
  tf::gemm<false, false>(p, counters);
}
#endif
#if LAYOUTS & TF_LAYOUT_RC
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_rc(const TfGemmParams p, tf_u32* counters) {
  tf::gemm<false, true>(p, counters);
}
#endif
#if LAYOUTS & TF_LAYOUT_CR
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_cr(const TfGemmParams p, tf_u32* counters) {
  tf::gemm<true, false>(p, counters);
}
#endif
#if LAYOUTS & TF_LAYOUT_CC
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_cc(const TfGemmParams p, tf_u32* counters) {
  tf::gemm<true, true>(p, counters);
}
#endif

#include "scale_c.h"  // tf_scale_c: the launch for K = 0
