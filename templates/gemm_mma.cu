// GEMM on tensor cores through mma.sync (sm_80 and newer): C = alpha·A·B + beta·C, A (M×K) and B (K×N)
// in fp16 or bf16 (m16n8k16), tf32 (fp32 storage, m16n8k8) or fp8 e4m3/e5m2 (m16n8k32, sm_89+), fp32
// accumulation, C in fp16, bf16 or fp32, or in the input type for fp8 (templates/output_types.h). Either operand may be stored row- or column-major (one entry point
// per storage order; fp8 reads A by rows and B by columns only, the form its mma takes without a byte
// transpose). One CTA computes a BM×BN tile; its warps each own a WM×WN sub-tile of 16×8 mma fragments. A and B tiles stream through a STAGES-deep
// shared-memory ring filled by cp.async (or, for VEC == 1, by loads staged through registers), read back
// with ldmatrix. Every M, N, K ≥ 1 is handled; VEC must divide K, N, lda and ldb (the launcher packs
// misaligned operands into padded scratch first when PACK == 1). Below 16-byte VEC an operand whose rows,
// leading dimension and base allow it is still copied in 16-byte chunks. With beta == 0, C is never read.
// Work is split into units (output tile × K split, templates/tile_map.h) that CTAs walk with stride
// gridDim.x, so one kernel serves plain grids, persistent grids of any size and split-K; with splits > 1,
// tf_reduce sums the fp32 partials in a fixed order (deterministic) and applies the epilogue.
//
// Host-side declaration of the same tunables, constraints and shared-memory formula: runtime/templates/gemm_mma.cpp.
#include "tunefuzz_rtc.h"
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
#define BK 32  // CTA tile depth (K) per pipeline stage
#endif
#ifndef WM
#define WM 64  // warp tile rows
#endif
#ifndef WN
#define WN 64  // warp tile columns
#endif
#ifndef STAGES
#define STAGES 3  // shared-memory pipeline depth: tiles in flight plus the one being consumed
#endif
#ifndef VEC
#define VEC 8  // elements per global load along the stored rows of A and B (at most 16 bytes)
#endif
#ifndef GROUP_M
#define GROUP_M 8  // CTA raster swizzle: tile rows walked together so concurrent CTAs share L2 lines
#endif
#ifndef SWIZZLE
#define SWIZZLE 1  // shared-memory layout: 1 = 16-byte chunks XOR-swizzled by row, 0 = rows padded by 16 bytes
#endif
#ifndef LAYOUTS
#define LAYOUTS 15  // storage orders with a kernel in the image: TF_LAYOUT_RR 1, _RC 2, _CR 4, _CC 8
#endif
#ifndef TF_INPUT
#define TF_INPUT TF_TYPE_BF16  // element type of A and B (TF_TYPE_FP16, _BF16, _TF32, _FP8E4M3, _FP8E5M2)
#endif
#ifndef TF_OUTPUT
#define TF_OUTPUT TF_TYPE_BF16  // element type of C (TF_TYPE_FP16, _BF16, _FP32; fp8 inputs: also their type)
#endif
#ifndef TF_MUTANT
#define TF_MUTANT 0  // an injected bug (TF_MUTANT_* below) to prove the fuzzer catches it; 0 = none
#endif

// ---- Injected bugs, off by default ----
#define TF_MUTANT_SKIP_LAST_K_TILE 1    // the main loop stops one K tile early
#define TF_MUTANT_DROP_TAIL 2           // the last row and column of a partial tile are not stored
#define TF_MUTANT_NO_ACC_INIT 3         // accumulators start from whatever the registers hold
#define TF_MUTANT_BETA0_READS_C 4       // C is read (and scaled by 0) even when beta == 0
#define TF_MUTANT_INT32_OFFSET 5        // row offsets row·ld computed in 32-bit integers
#define TF_MUTANT_NO_STAGE_BARRIER 6    // no barrier between consuming a stage and refilling it
#define TF_MUTANT_GROUP_DROP 7          // raster swizzle assumes the last group of tile rows is full
#define TF_MUTANT_FP16_ACC 8            // accumulators rounded to fp16 after every k step
#define TF_MUTANT_UNIT_KEEPS_ACC 9      // accumulators are zeroed once per CTA, not once per unit
#define TF_MUTANT_EMPTY_SPLIT_SKIPS 10  // a split with no K tiles writes no partial (stale workspace)
#define TF_MUTANT_SPLIT_DROPS_REMAINDER 11  // every split gets k_tiles / splits tiles: the remainder is lost
#define TF_MUTANT_WAIT_ONE_SHORT 12     // the K loop waits for one cp.async group too few: tile kt may be in flight
#define TF_MUTANT_UNIT_NO_DRAIN 13      // the next unit's prologue starts without the barrier after this unit
#define TF_MUTANT_REDUCE_WHOLE_QUADS 14  // tf_reduce finishes whole quads only: N % 4 columns stay unwritten
#define TF_MUTANT_COL_ROWS_ROUNDED 15   // a column-major operand's stored rows (K of A, N of B) rounded to VEC
#define TF_MUTANT_REDUCE_FIRST_LANE_ONLY 16  // tf_reduce's group of lanes per quad stores its first lane's sum alone
#define TF_MUTANT_CHUNKS_IGNORE_EXTENT 17  // 16-byte copies taken without the stored rows' length checked

// ---- Derived values and what the tunables must satisfy ----
#if TF_INPUT == TF_TYPE_TF32
#define TF_ELEM_BYTES 4
#elif TF_INPUT == TF_TYPE_FP8E4M3 || TF_INPUT == TF_TYPE_FP8E5M2
#define TF_ELEM_BYTES 1
#else
#define TF_ELEM_BYTES 2
#endif
// Loads of 4, 8 or 16 bytes go through cp.async; narrower ones (VEC = 1 at 16 bits, VEC < 4 at 8 bits)
// through registers.
#define TF_ASYNC (VEC * TF_ELEM_BYTES >= 4)

namespace tf {
#if TF_ELEM_BYTES == 4
typedef tf_u32 elem_t;
#elif TF_ELEM_BYTES == 1
typedef unsigned char elem_t;
#else
typedef tf_u16 elem_t;
#endif
constexpr int kElemBytes = TF_ELEM_BYTES;
constexpr int kChunk = 16 / kElemBytes;  // elements per 16-byte chunk: one ldmatrix row, one cp.async
constexpr int kMmaK = 2 * kChunk;        // K of one mma: 16 (fp16, bf16), 8 (tf32), 32 (fp8)
constexpr int kWarpsM = BM / WM;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMmaM = WM / 16;  // m16 fragments per warp tile
constexpr int kMmaN = WN / 8;   // n8 fragments per warp tile
constexpr int kPad = SWIZZLE ? 0 : kChunk;  // elements of padding per shared-memory row (16 bytes)
constexpr int max_of(int a, int b) { return a > b ? a : b; }
// A stage holds the tile as stored in global memory: (BM, BK) for row-major A, (BK, BM) for column-major A;
// likewise (BK, BN) or (BN, BK) for B. Padded rows make the two shapes differ in size: take the larger.
constexpr int kAStage = max_of(BM * (BK + kPad), BK * (BM + kPad));
constexpr int kBStage = max_of(BK * (BN + kPad), BN * (BK + kPad));
constexpr int kSmemBytes = STAGES * (kAStage + kBStage) * kElemBytes;
constexpr bool kPowerOfTwo(int x) { return x > 0 && (x & (x - 1)) == 0; }
}  // namespace tf

static_assert(TF_INPUT == TF_TYPE_FP16 || TF_INPUT == TF_TYPE_BF16 || TF_INPUT == TF_TYPE_TF32 ||
                  TF_INPUT == TF_TYPE_FP8E4M3 || TF_INPUT == TF_TYPE_FP8E5M2,
              "TF_INPUT must be fp16, bf16, tf32, fp8e4m3 or fp8e5m2");
static_assert(TF_OUTPUT == TF_TYPE_FP16 || TF_OUTPUT == TF_TYPE_BF16 || TF_OUTPUT == TF_TYPE_FP32 ||
                  TF_OUTPUT == TF_INPUT,
              "TF_OUTPUT must be fp16, bf16, fp32 or (fp8 inputs) the input type");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile WMxWN must divide the CTA tile BMxBN");
static_assert(WM % 16 == 0, "WM must be a multiple of 16 (mma.sync m16 fragments)");
static_assert(WN % 16 == 0, "WN must be a multiple of 16 (ldmatrix.x4.trans loads two n8 fragments)");
static_assert(BK % 16 == 0, "BK must be a multiple of 16 (mma.sync k16 steps)");
static_assert(tf::kMmaK <= 16 || BK % tf::kMmaK == 0, "BK must be a multiple of the mma's K (32 for fp8)");
static_assert(tf::kThreads <= 1024, "more than 1024 threads per CTA: (BM/WM)*(BN/WN)*32 > 1024");
static_assert(STAGES >= 2, "STAGES must be at least 2 (one stage loading while one is consumed)");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8 || VEC == 16, "VEC must be 1, 2, 4, 8 or 16 elements");
static_assert(VEC * TF_ELEM_BYTES <= 16, "VEC elements must fit one 16-byte load");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert(!SWIZZLE || (tf::kPowerOfTwo(BM) && tf::kPowerOfTwo(BN) && tf::kPowerOfTwo(BK)),
              "SWIZZLE=1 needs power-of-two BM, BN and BK so the XOR stays within a row");

#include "output_types.h"
#include "split_k.h"

// Read back by the host after loading, to check that its launch geometry matches this instantiation.
extern "C" __constant__ tf_i32 tf_kernel_meta[4] = {tf::kThreads, tf::kSmemBytes, BM, BN};

namespace tf {

// ---- Element conversions (PTX, so no CUDA headers are needed under NVRTC) ----
__device__ __forceinline__ float round_to_fp16(float x) {
  tf_u16 h;
  float f;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

// C's elements as stored; conversions from and to fp32 in output_types.h.
#if TF_OUT_BYTES == 4
typedef float out_t;
#elif TF_OUT_BYTES == 2
typedef tf_u16 out_t;
#else
typedef unsigned char out_t;
#endif

// ---- Shared-memory layout ----
// Element offset of (row, col) in a stage whose rows hold ROW elements. Swizzled: the 16-byte chunk index
// is XORed with bits of the row so that the 8 rows an ldmatrix phase reads fall in 8 different bank groups.
template <int ROW>
__device__ __forceinline__ int smem_offset(int row, int col) {
#if SWIZZLE
  constexpr int chunks = ROW / kChunk;  // at least 2: rows are BK, BM or BN long, all multiples of 32 bytes
  const int mask = chunks >= 8 ? (row & 7) : chunks == 4 ? ((row >> 1) & 3) : ((row >> 2) & 1);
  return row * ROW + (((col / kChunk) ^ mask) * kChunk) + (col % kChunk);
#else
  return row * (ROW + kChunk) + col;
#endif
}

__device__ __forceinline__ tf_u32 smem_address(const void* p) {
  return static_cast<tf_u32>(__cvta_generic_to_shared(p));
}

// Offset of element (row, col) of a row-major matrix with leading dimension ld.
__device__ __forceinline__ tf_i64 element_offset(tf_i64 row, tf_i64 ld, tf_i64 col) {
#if TF_MUTANT == TF_MUTANT_INT32_OFFSET
  return static_cast<tf_i64>(static_cast<tf_i32>(row) * static_cast<tf_i32>(ld)) + col;
#else
  return row * ld + col;
#endif
}

// ---- Global → shared copies ----
// One copy of WIDTH elements (VEC, or a whole 16-byte chunk where the operand allows it); out-of-bounds
// sources are not read and the destination is zero-filled.
template <int WIDTH>
__device__ __forceinline__ void copy_async(elem_t* dst, const elem_t* src, bool valid) {
#if TF_ASYNC
  constexpr int kBytes = WIDTH * kElemBytes;
  const int src_bytes = valid ? kBytes : 0;
  if (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src),
                 "r"(src_bytes));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_address(dst)), "l"(src),
                 "n"(kBytes), "r"(src_bytes));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if TF_ASYNC
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
#if TF_ASYNC
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
#endif
}

struct TileCoords {
  tf_i64 m0, n0;  // first row and column of this CTA's C tile
};

// Where a stage's tile sits in its operand as stored: ROWS × ROW_LEN elements starting at (row0, col0) of a
// rows × cols matrix with leading dimension ld. Row-major A: (BM, BK) at (m0, k0); column-major A: (BK, BM) at
// (k0, m0); row-major B: (BK, BN) at (k0, n0); column-major B: (BN, BK) at (n0, k0).
struct TileSource {
  const elem_t* base;
  tf_i64 row0, col0, rows, cols, ld;
};

// Whether an operand takes 16-byte copies although VEC is narrower: its stored rows' length, its leading
// dimension and its base address all keep every chunk of kChunk elements 16-byte aligned. VEC is what the
// problem's worst operand allows; an aligned partner (B of an A whose K is odd, say) need not pay for it.
// The same for every CTA of a launch, so the branch on it never diverges.
__device__ __forceinline__ bool takes_chunks(const elem_t* base, tf_i64 stored_row_length, tf_i64 ld) {
#if TF_MUTANT == TF_MUTANT_CHUNKS_IGNORE_EXTENT
  stored_row_length = 0;  // a row's last chunk then reads past its end, into the padding up to ld
#endif
  return TF_ASYNC && VEC < kChunk && stored_row_length % kChunk == 0 && ld % kChunk == 0 &&
         reinterpret_cast<tf_u64>(base) % 16 == 0;
}

template <bool A_COL>
__device__ __forceinline__ TileSource a_source(const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const elem_t* a = static_cast<const elem_t*>(p.a);
#if TF_MUTANT == TF_MUTANT_COL_ROWS_ROUNDED
  return A_COL ? TileSource{a, k0, t.m0, p.k / VEC * VEC, p.m, p.lda} : TileSource{a, t.m0, k0, p.m, p.k, p.lda};
#endif
  return A_COL ? TileSource{a, k0, t.m0, p.k, p.m, p.lda} : TileSource{a, t.m0, k0, p.m, p.k, p.lda};
}

template <bool B_COL>
__device__ __forceinline__ TileSource b_source(const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const elem_t* b = static_cast<const elem_t*>(p.b);
#if TF_MUTANT == TF_MUTANT_COL_ROWS_ROUNDED
  if (B_COL) return TileSource{b, t.n0, k0, p.n / VEC * VEC, p.k, p.ldb};
#endif
  return B_COL ? TileSource{b, t.n0, k0, p.n, p.k, p.ldb} : TileSource{b, k0, t.n0, p.k, p.n, p.ldb};
}

// A stage's tile → shared memory with WIDTH-element asynchronous copies. Vector v covers stage row
// v / (ROW_LEN/WIDTH), columns (v % (ROW_LEN/WIDTH))·WIDTH. (VEC == 1 stages through registers: fetch/store
// below.) Narrower than a chunk, where the threads cover whole stage rows (kThreads a multiple of the copies
// per row), a thread's copies share one column and stand kRowStep rows apart: one 64-bit address and one
// bound on the column, then a constant step per copy. Worked out per copy, the addresses of 4-byte copies
// cost more instructions than the copies (vw_tiny_128x128x131074: results/campaign-vendor-weak-h200-5184cd8/);
// 16-byte copies are few a thread, and the offsets held across them would take registers the widest tiles
// lack (the tf32 default point's CR entry spilled).
template <int ROWS, int ROW_LEN, int WIDTH>
__device__ __forceinline__ void load_tile_async(elem_t* stage, const TileSource& src) {
  constexpr int kPerRow = ROW_LEN / WIDTH;
  constexpr int kVectors = ROWS * kPerRow;
  constexpr int kPerThread = (kVectors + kThreads - 1) / kThreads;
  if constexpr (WIDTH < kChunk && kThreads % kPerRow == 0) {
    constexpr int kRowStep = kThreads / kPerRow;
    const int row = threadIdx.x / kPerRow, col = (threadIdx.x % kPerRow) * WIDTH;
    const tf_i64 grow = src.row0 + row, gcol = src.col0 + col;
    const tf_i64 first = element_offset(grow, src.ld, gcol), step = kRowStep * src.ld;
    const bool col_inside = gcol < src.cols;
    const tf_i64 rows_left = src.rows - grow;  // copy i is inside while i·kRowStep < rows_left
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (kVectors % kThreads == 0 || row + i * kRowStep < ROWS) {
        const bool valid = col_inside && i * kRowStep < rows_left;
        const tf_i64 offset = first + i * step;  // an invalid copy reads nothing and points at the base
        copy_async<WIDTH>(stage + smem_offset<ROW_LEN>(row + i * kRowStep, col), src.base + (valid ? offset : 0),
                          valid);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int v = threadIdx.x + i * kThreads;
      if (kVectors % kThreads == 0 || v < kVectors) {
        const int row = v / kPerRow;
        const int col = (v % kPerRow) * WIDTH;
        const tf_i64 grow = src.row0 + row, gcol = src.col0 + col;
        const bool valid = grow < src.rows && gcol < src.cols;
        const elem_t* from = valid ? src.base + element_offset(grow, src.ld, gcol) : src.base;
        copy_async<WIDTH>(stage + smem_offset<ROW_LEN>(row, col), from, valid);
      }
    }
  }
}

// VEC-element copies, or 16-byte ones where takes_chunks allows (a uniform branch, once per stage).
template <int ROWS, int ROW_LEN>
__device__ __forceinline__ void load_operand_async(elem_t* stage, const TileSource& src) {
  if (VEC < kChunk && takes_chunks(src.base, src.cols, src.ld))
    load_tile_async<ROWS, ROW_LEN, (VEC < kChunk ? kChunk : VEC)>(stage, src);
  else
    load_tile_async<ROWS, ROW_LEN, VEC>(stage, src);
}

template <bool A_COL, bool B_COL>
__device__ __forceinline__ void load_stage_async(elem_t* a_stage, elem_t* b_stage, const TfGemmParams& p,
                                                 TileCoords t, tf_i64 k0) {
  load_operand_async<A_COL ? BK : BM, A_COL ? BM : BK>(a_stage, a_source<A_COL>(p, t, k0));
  load_operand_async<B_COL ? BN : BK, B_COL ? BK : BN>(b_stage, b_source<B_COL>(p, t, k0));
}

// Narrow-load path (VEC·element < 4 bytes): element loads into registers now, stores to shared memory later,
// so the loads of the next tile overlap the mma work on the current one. Each thread moves 32-bit words of
// kWord adjacent elements (one shared-memory store); every element is bounds-checked on its own, since rows
// may start at odd addresses.
constexpr int kWord = 4 / kElemBytes;
constexpr int kAWordsPerThread = (BM * BK / kWord + kThreads - 1) / kThreads;
constexpr int kBWordsPerThread = (BK * BN / kWord + kThreads - 1) / kThreads;

struct Staged {
  tf_u32 a[kAWordsPerThread];
  tf_u32 b[kBWordsPerThread];
};

__device__ __forceinline__ tf_u32 load_word(const TileSource& src, tf_i64 row, tf_i64 col) {
  if (row >= src.rows) return 0;
  const elem_t* p = src.base + element_offset(row, src.ld, col);
  tf_u32 word = 0;
#pragma unroll
  for (int e = 0; e < kWord; ++e)
    if (col + e < src.cols) word |= static_cast<tf_u32>(p[e]) << (8 * kElemBytes * e);
  return word;
}

template <int ROWS, int ROW_LEN, int N>
__device__ __forceinline__ void fetch_tile(tf_u32 (&out)[N], const TileSource& src) {
  constexpr int kWords = ROWS * ROW_LEN / kWord;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int v = threadIdx.x + i * kThreads;
    out[i] = v < kWords ? load_word(src, src.row0 + v / (ROW_LEN / kWord), src.col0 + (v % (ROW_LEN / kWord)) * kWord)
                        : 0;
  }
}

template <int ROWS, int ROW_LEN, int N>
__device__ __forceinline__ void store_tile(const tf_u32 (&in)[N], elem_t* stage) {
  constexpr int kWords = ROWS * ROW_LEN / kWord;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (v < kWords)
      *reinterpret_cast<tf_u32*>(stage + smem_offset<ROW_LEN>(v / (ROW_LEN / kWord), (v % (ROW_LEN / kWord)) * kWord)) =
          in[i];
  }
}

template <bool A_COL, bool B_COL>
__device__ __forceinline__ void fetch(Staged& s, const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  fetch_tile<A_COL ? BK : BM, A_COL ? BM : BK>(s.a, a_source<A_COL>(p, t, k0));
  fetch_tile<B_COL ? BN : BK, B_COL ? BK : BN>(s.b, b_source<B_COL>(p, t, k0));
}

template <bool A_COL, bool B_COL>
__device__ __forceinline__ void store(const Staged& s, elem_t* a_stage, elem_t* b_stage) {
  store_tile<A_COL ? BK : BM, A_COL ? BM : BK>(s.a, a_stage);
  store_tile<B_COL ? BN : BK, B_COL ? BK : BN>(s.b, b_stage);
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

// One 16×8×kMmaK mma: d += a·b, with a in four registers and b in two, fp32 accumulators.
#if TF_INPUT == TF_TYPE_BF16
#define TF_MMA "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#elif TF_INPUT == TF_TYPE_FP16
#define TF_MMA "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#elif TF_INPUT == TF_TYPE_TF32
#define TF_MMA "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#elif TF_INPUT == TF_TYPE_FP8E4M3
#define TF_MMA "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"
#else
#define TF_MMA "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"
#endif
__device__ __forceinline__ void mma(float (&d)[4], const tf_u32 (&a)[4], tf_u32 b0, tf_u32 b1) {
  asm(TF_MMA " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// acc (kMmaM × kMmaN fragments of 16×8) += A stage (warp rows) · B stage (warp columns). With kChunk elements
// per 16 bytes and c = kChunk, the four 8-row matrices of one ldmatrix.x4 are, in order, (m 0-7, k 0..c-1),
// (m 8-15, k 0..c-1), (m 0-7, k c..2c-1), (m 8-15, k c..2c-1) for A and (k 0..c-1, n 0-7), (k c.., n 0-7),
// (k 0.., n 8-15), (k c.., n 8-15) for B; lanes 8j..8j+7 give the row addresses of matrix j. A stage stored
// k-major (column-major A) is read transposed; B stored n-major (column-major B) is read as is, since the
// mma takes B by columns. ldmatrix transposes 16-bit elements only: tf32 reads those two orders with scalar
// loads instead (fragment element (row g, column t) lives in lane 4g + t), and fp8 does not take them.
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void compute_stage(float (&acc)[kMmaM][kMmaN][4], const elem_t* a_stage,
                                              const elem_t* b_stage, int warp_m, int warp_n, int lane) {
  const int g = lane >> 2, t = lane & 3;  // scalar tf32 fragments: row (or column) g, k index t
#pragma unroll
  for (int ks = 0; ks < BK / kMmaK; ++ks) {
    tf_u32 a_frag[kMmaM][4];
    tf_u32 b_frag[kMmaN / 2][4];
    const int j = lane >> 3, r = lane & 7;  // matrix and row this lane addresses
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      const int m = warp_m * WM + mi * 16 + (j & 1) * 8, k = ks * kMmaK + (j >> 1) * kChunk;
      if (A_COL && kElemBytes == 4) {
        const int m0 = warp_m * WM + mi * 16, k0 = ks * kMmaK;
        a_frag[mi][0] = a_stage[smem_offset<BM>(k0 + t, m0 + g)];
        a_frag[mi][1] = a_stage[smem_offset<BM>(k0 + t, m0 + g + 8)];
        a_frag[mi][2] = a_stage[smem_offset<BM>(k0 + t + 4, m0 + g)];
        a_frag[mi][3] = a_stage[smem_offset<BM>(k0 + t + 4, m0 + g + 8)];
      } else if (A_COL) {
        ldmatrix_x4_trans(a_frag[mi], a_stage + smem_offset<BM>(k + r, m));
      } else {
        ldmatrix_x4(a_frag[mi], a_stage + smem_offset<BK>(m + r, k));
      }
    }
#pragma unroll
    for (int nj = 0; nj < kMmaN / 2; ++nj) {
      const int k = ks * kMmaK + (j & 1) * kChunk, n = warp_n * WN + nj * 16 + (j >> 1) * 8;
      if (!B_COL && kElemBytes == 4) {
        const int n0 = warp_n * WN + nj * 16, k0 = ks * kMmaK;
        b_frag[nj][0] = b_stage[smem_offset<BN>(k0 + t, n0 + g)];
        b_frag[nj][1] = b_stage[smem_offset<BN>(k0 + t + 4, n0 + g)];
        b_frag[nj][2] = b_stage[smem_offset<BN>(k0 + t, n0 + 8 + g)];
        b_frag[nj][3] = b_stage[smem_offset<BN>(k0 + t + 4, n0 + 8 + g)];
      } else if (B_COL) {
        ldmatrix_x4(b_frag[nj], b_stage + smem_offset<BK>(n + r, k));
      } else {
        ldmatrix_x4_trans(b_frag[nj], b_stage + smem_offset<BN>(k + r, n));
      }
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) {
        const tf_u32* b = b_frag[ni / 2] + (ni % 2) * 2;
        mma(acc[mi][ni], a_frag[mi], b[0], b[1]);
      }
    }
#if TF_MUTANT == TF_MUTANT_FP16_ACC
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = round_to_fp16(acc[mi][ni][e]);
#endif
  }
}

// ---- Epilogue: C = alpha·acc + beta·C, bounds-checked, two columns per store where aligned ----
__device__ __forceinline__ void store_pair(const TfGemmParams& p, tf_i64 row, tf_i64 col, float v0, float v1) {
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
  tf_epilogue_pair(static_cast<out_t*>(p.c) + element_offset(row, p.ldc, col), p.alpha, p.beta, v0, v1,
                   col + 1 < n_limit, read_c);
}

}  // namespace tf

namespace tf {

// The K loop of one unit: acc += A(tile rows, K tiles [kt_begin, kt_end)) · B(same K tiles, tile columns).
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void k_loop(float (&acc)[kMmaM][kMmaN][4], elem_t* a_smem, elem_t* b_smem,
                                       const TfGemmParams& p, TileCoords t, tf_i64 kt_begin, tf_i64 kt_end,
                                       int warp_m, int warp_n, int lane) {
  const tf_i64 k_tiles = kt_end - kt_begin;
#if TF_ASYNC
  // Prologue: fill STAGES-1 stages; each stage is one commit group (possibly empty) so the wait count holds.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage_async<A_COL, B_COL>(a_smem + s * kAStage, b_smem + s * kBStage, p, t, (kt_begin + s) * BK);
    cp_async_commit();
  }
  for (tf_i64 kt = 0; kt < k_tiles; ++kt) {
    tf_perturb(1, static_cast<tf_u32>(kt));
#if TF_MUTANT == TF_MUTANT_WAIT_ONE_SHORT
    cp_async_wait<STAGES - 1>();
#else
    cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies)
#endif
#if TF_MUTANT != TF_MUTANT_NO_STAGE_BARRIER
    __syncthreads();  // ... everyone's copies too, and everyone is done with the stage refilled next
#endif
    const tf_i64 next = kt + STAGES - 1;
    if (next < k_tiles) {
      const int s = static_cast<int>(next % STAGES);
      load_stage_async<A_COL, B_COL>(a_smem + s * kAStage, b_smem + s * kBStage, p, t, (kt_begin + next) * BK);
    }
    cp_async_commit();
    const int s = static_cast<int>(kt % STAGES);
    tf_perturb(2, static_cast<tf_u32>(kt));  // a late reader of the stage the others refill next
    compute_stage<A_COL, B_COL>(acc, a_smem + s * kAStage, b_smem + s * kBStage, warp_m, warp_n, lane);
  }
#else
  Staged staged;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      fetch<A_COL, B_COL>(staged, p, t, (kt_begin + s) * BK);
      store<A_COL, B_COL>(staged, a_smem + s * kAStage, b_smem + s * kBStage);
    }
  }
  for (tf_i64 kt = 0; kt < k_tiles; ++kt) {
#if TF_MUTANT != TF_MUTANT_NO_STAGE_BARRIER
    __syncthreads();  // stage kt is complete, and the stage stored below is no longer being read
#endif
    const tf_i64 next = kt + STAGES - 1;
    if (next < k_tiles) fetch<A_COL, B_COL>(staged, p, t, (kt_begin + next) * BK);
    const int s = static_cast<int>(kt % STAGES);
    tf_perturb(3, static_cast<tf_u32>(kt));
    compute_stage<A_COL, B_COL>(acc, a_smem + s * kAStage, b_smem + s * kBStage, warp_m, warp_n, lane);
    if (next < k_tiles) {
      const int s_next = static_cast<int>(next % STAGES);
      tf_perturb(4, static_cast<tf_u32>(kt));
      store<A_COL, B_COL>(staged, a_smem + s_next * kAStage, b_smem + s_next * kBStage);
    }
  }
#endif
}

__device__ __forceinline__ void zero_accumulators(float (&acc)[kMmaM][kMmaN][4]) {
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi)
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
#if TF_MUTANT == TF_MUTANT_NO_ACC_INIT
        asm volatile("" : "=f"(acc[mi][ni][e]));  // an opaque value: whatever the register held
#else
        acc[mi][ni][e] = 0.f;
#endif
      }
}

// One unit: an output tile's K range [kr.begin, kr.end) into acc, then into C (SPLIT: the unscaled fp32
// partial into the workspace instead; tf_reduce finishes the tile).
template <bool A_COL, bool B_COL, bool SPLIT>
__device__ __forceinline__ void unit_body(float (&acc)[kMmaM][kMmaN][4], elem_t* a_smem, elem_t* b_smem,
                                          const TfGemmParams& p, TileCoords t, TfKRange kr, tf_i64 split,
                                          int warp_m, int warp_n, int lane) {
#if TF_MUTANT != TF_MUTANT_UNIT_KEEPS_ACC
  zero_accumulators(acc);
#endif
  k_loop<A_COL, B_COL>(acc, a_smem, b_smem, p, t, kr.begin, kr.end, warp_m, warp_n, lane);
  // Fragment (mi, ni) holds rows lane/4 and lane/4 + 8, columns 2·(lane%4) and +1 of its 16×8 block.
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const tf_i64 row = t.m0 + warp_m * WM + mi * 16 + (lane >> 2);
      const tf_i64 col = t.n0 + warp_n * WN + ni * 8 + (lane & 3) * 2;
      if (SPLIT) {
        store_partial(p, split, row, col, acc[mi][ni][0], acc[mi][ni][1]);
        store_partial(p, split, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
      } else {
        store_pair(p, row, col, acc[mi][ni][0], acc[mi][ni][1]);
        store_pair(p, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
      }
    }
  }
}

// Units [0, tiles × splits) are walked with stride gridDim.x: a plain launch has one unit per CTA, a
// persistent one fewer CTAs than units. Each unit is one output tile's K range; with splits > 1 its partial
// goes to the workspace and tf_reduce finishes the tile. A plain launch without splits takes a straight path
// with no loop state, which leaves the K loop the registers it had before units existed (on an H200 the loop
// alone cost 15% at 4096^3: 335 instead of 272 instructions per main-loop iteration).
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void gemm(const TfGemmParams& p) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  elem_t* const a_smem = reinterpret_cast<elem_t*>(smem_raw);
  elem_t* const b_smem = a_smem + STAGES * kAStage;

  const tf_i64 tiles_m = tf_ceil_div(p.m, BM);
  const tf_i64 tiles_n = tf_ceil_div(p.n, BN);
  const tf_i64 units = tiles_m * tiles_n * p.splits;
  tf_i64 k_tiles = tf_ceil_div(p.k, BK);
#if TF_MUTANT == TF_MUTANT_SKIP_LAST_K_TILE
  if (k_tiles > 1) k_tiles -= 1;
#endif

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  float acc[kMmaM][kMmaN][4];
#if TF_MUTANT == TF_MUTANT_UNIT_KEEPS_ACC
  zero_accumulators(acc);
#endif
  // (16-bit inputs only: for tf32 and fp8 the second copy of the body costs registers, and spills, instead.)
  if (kElemBytes == 2 && p.splits == 1 && gridDim.x >= units) {
    const TfTile tile = tf_tile_map(blockIdx.x, tiles_m, tiles_n, GROUP_M, TF_MUTANT != TF_MUTANT_GROUP_DROP);
    if (blockIdx.x >= units || tile.m >= tiles_m || tile.n >= tiles_n) return;
    const TfKRange all = {0, k_tiles};
    unit_body<A_COL, B_COL, false>(acc, a_smem, b_smem, p, {tile.m * BM, tile.n * BN}, all, 0, warp_m, warp_n,
                                   lane);
    return;
  }
  for (tf_i64 unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const TfUnit u = tf_unit_map(unit, tiles_m, tiles_n, GROUP_M, TF_MUTANT != TF_MUTANT_GROUP_DROP);
    if (u.tile.m >= tiles_m || u.tile.n >= tiles_n) continue;
    const TileCoords t = {u.tile.m * BM, u.tile.n * BN};
    const TfKRange kr = tf_k_range(k_tiles, p.splits, u.split, TF_MUTANT == TF_MUTANT_SPLIT_DROPS_REMAINDER);
#if TF_MUTANT == TF_MUTANT_EMPTY_SPLIT_SKIPS
    if (kr.begin == kr.end) continue;
#endif
    if (p.splits == 1)
      unit_body<A_COL, B_COL, false>(acc, a_smem, b_smem, p, t, kr, u.split, warp_m, warp_n, lane);
    else
      unit_body<A_COL, B_COL, true>(acc, a_smem, b_smem, p, t, kr, u.split, warp_m, warp_n, lane);
    // The next unit's prologue refills stages that slower warps may still be reading, and copies of this
    // unit may still be in flight: drain both before moving on.
    tf_perturb(5, static_cast<tf_u32>(unit));  // before the scheduler's advance
    cp_async_wait<0>();
#if TF_MUTANT != TF_MUTANT_UNIT_NO_DRAIN
    __syncthreads();
#endif
  }
}

}  // namespace tf

// One entry point per storage order of A and B in LAYOUTS (rr: both row-major, cr: A column-major, ...).
// fp8 has the rc form only.
static_assert(LAYOUTS >= 1 && LAYOUTS <= 15, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC");
#if TF_ELEM_BYTES == 1 || (LAYOUTS & TF_LAYOUT_RC)
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_rc(const TfGemmParams p) {
  tf::gemm<false, true>(p);
}
#endif
#if TF_ELEM_BYTES != 1
#if LAYOUTS & TF_LAYOUT_RR
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_rr(const TfGemmParams p) {
  tf::gemm<false, false>(p);
}
#endif
#if LAYOUTS & TF_LAYOUT_CR
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_cr(const TfGemmParams p) {
  tf::gemm<true, false>(p);
}
#endif
#if LAYOUTS & TF_LAYOUT_CC
extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm_cc(const TfGemmParams p) {
  tf::gemm<true, true>(p);
}
#endif
#endif

// Split-K second pass (templates/split_k.h): C = alpha · (the partials added in a fixed order) + beta · C.
extern "C" __global__ void tf_reduce(const TfGemmParams p) {
#if TF_MUTANT == TF_MUTANT_REDUCE_WHOLE_QUADS
  const tf_i64 quads_per_row = p.n / 4;
#else
  const tf_i64 quads_per_row = tf_ceil_div(p.n, 4);
#endif
  tf::reduce_splits(p, quads_per_row,
                    [&](tf_i64 row, tf_i64 col, float v0, float v1) { tf::store_pair(p, row, col, v0, v1); });
}

#include "pack.h"     // tf_pack: misaligned operands into aligned scratch (PACK=1)
#include "scale_c.h"  // tf_scale_c: the launch for K = 0
