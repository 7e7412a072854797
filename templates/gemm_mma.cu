// GEMM on tensor cores through mma.sync (sm_80 and newer): C = alpha·A·B + beta·C, A (M×K) and B (K×N)
// row-major in fp16 or bf16, fp32 accumulation, C in fp16, bf16 or fp32. One CTA computes a BM×BN tile; its
// warps each own a WM×WN sub-tile of m16n8k16 mma fragments. A and B tiles stream through a STAGES-deep
// shared-memory ring filled by cp.async (or, for VEC == 1, by loads staged through registers), read back
// with ldmatrix. Every M, N, K ≥ 1 is handled; VEC must divide K, N, lda and ldb (the launcher packs
// misaligned operands into padded scratch first when PACK == 1). With beta == 0, C is never read.
//
// Host-side declaration of the same tunables, constraints and shared-memory formula: tuner/templates/gemm_mma.cpp.
#include "tunefuzz_rtc.h"
#include "gemm_params.h"
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
#define VEC 8  // elements per global load along K of A and N of B (16 bytes at 8); must divide K, N, lda, ldb
#endif
#ifndef GROUP_M
#define GROUP_M 8  // CTA raster swizzle: tile rows walked together so concurrent CTAs share L2 lines
#endif
#ifndef SWIZZLE
#define SWIZZLE 1  // shared-memory layout: 1 = 16-byte chunks XOR-swizzled by row, 0 = rows padded by 16 bytes
#endif
#ifndef TF_INPUT
#define TF_INPUT TF_TYPE_BF16  // element type of A and B (TF_TYPE_FP16 or TF_TYPE_BF16)
#endif
#ifndef TF_OUTPUT
#define TF_OUTPUT TF_TYPE_BF16  // element type of C (TF_TYPE_FP16, TF_TYPE_BF16 or TF_TYPE_FP32)
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

// ---- Derived values and what the tunables must satisfy ----
namespace tf {
constexpr int kWarpsM = BM / WM;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMmaM = WM / 16;  // m16 fragments per warp tile
constexpr int kMmaN = WN / 8;   // n8 fragments per warp tile
constexpr int kPad = SWIZZLE ? 0 : 8;  // elements of padding per shared-memory row
constexpr int kARow = BK + kPad;       // elements per A row in shared memory: (BM, BK) per stage
constexpr int kBRow = BN + kPad;       // elements per B row in shared memory: (BK, BN) per stage
constexpr int kAStage = BM * kARow;
constexpr int kBStage = BK * kBRow;
constexpr int kSmemBytes = STAGES * (kAStage + kBStage) * 2;
constexpr int kAVectors = BM * BK / VEC;  // global loads per A tile
constexpr int kBVectors = BK * BN / VEC;  // global loads per B tile
constexpr int kALoadsPerThread = (kAVectors + kThreads - 1) / kThreads;
constexpr int kBLoadsPerThread = (kBVectors + kThreads - 1) / kThreads;
constexpr bool kPowerOfTwo(int x) { return x > 0 && (x & (x - 1)) == 0; }
}  // namespace tf

static_assert(TF_INPUT == TF_TYPE_FP16 || TF_INPUT == TF_TYPE_BF16, "TF_INPUT must be fp16 or bf16");
static_assert(TF_OUTPUT == TF_TYPE_FP16 || TF_OUTPUT == TF_TYPE_BF16 || TF_OUTPUT == TF_TYPE_FP32,
              "TF_OUTPUT must be fp16, bf16 or fp32");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile WMxWN must divide the CTA tile BMxBN");
static_assert(WM % 16 == 0, "WM must be a multiple of 16 (mma.sync m16 fragments)");
static_assert(WN % 16 == 0, "WN must be a multiple of 16 (ldmatrix.x4.trans loads two n8 fragments)");
static_assert(BK % 16 == 0, "BK must be a multiple of 16 (mma.sync k16 steps)");
static_assert(tf::kThreads <= 1024, "more than 1024 threads per CTA: (BM/WM)*(BN/WN)*32 > 1024");
static_assert(STAGES >= 2, "STAGES must be at least 2 (one stage loading while one is consumed)");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8 elements");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert(!SWIZZLE || (tf::kPowerOfTwo(BK) && tf::kPowerOfTwo(BN)),
              "SWIZZLE=1 needs power-of-two BK and BN so the XOR stays within a row");

// Read back by the host after loading, to check that its launch geometry matches this instantiation.
extern "C" __constant__ tf_i32 tf_kernel_meta[4] = {tf::kThreads, tf::kSmemBytes, BM, BN};

namespace tf {

// ---- Element conversions (PTX, so no CUDA headers are needed under NVRTC) ----
__device__ __forceinline__ float to_float_in(tf_u16 bits) {
#if TF_INPUT == TF_TYPE_BF16
  return __uint_as_float(static_cast<tf_u32>(bits) << 16);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#endif
}

__device__ __forceinline__ float round_to_fp16(float x) {
  tf_u16 h;
  float f;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

#if TF_OUTPUT == TF_TYPE_FP32
typedef float out_t;
__device__ __forceinline__ float load_out(const out_t* p) { return *p; }
__device__ __forceinline__ void store_out(out_t* p, float v) { *p = v; }
__device__ __forceinline__ void store_out_pair(out_t* p, float v0, float v1) {
  *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
}
__device__ __forceinline__ void load_out_pair(const out_t* p, float& v0, float& v1) {
  const float2 v = *reinterpret_cast<const float2*>(p);
  v0 = v.x;
  v1 = v.y;
}
#else
typedef tf_u16 out_t;
__device__ __forceinline__ float out_to_float(tf_u16 bits) {
#if TF_OUTPUT == TF_TYPE_BF16
  return __uint_as_float(static_cast<tf_u32>(bits) << 16);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#endif
}
__device__ __forceinline__ tf_u16 float_to_out(float v) {
  tf_u16 h;
#if TF_OUTPUT == TF_TYPE_BF16
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
#else
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
#endif
  return h;
}
__device__ __forceinline__ float load_out(const out_t* p) { return out_to_float(*p); }
__device__ __forceinline__ void store_out(out_t* p, float v) { *p = float_to_out(v); }
__device__ __forceinline__ void store_out_pair(out_t* p, float v0, float v1) {
  tf_u32 packed;
#if TF_OUTPUT == TF_TYPE_BF16
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(v1), "f"(v0));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(v1), "f"(v0));
#endif
  *reinterpret_cast<tf_u32*>(p) = packed;
}
__device__ __forceinline__ void load_out_pair(const out_t* p, float& v0, float& v1) {
  const tf_u32 packed = *reinterpret_cast<const tf_u32*>(p);
  v0 = out_to_float(static_cast<tf_u16>(packed & 0xffffu));
  v1 = out_to_float(static_cast<tf_u16>(packed >> 16));
}
#endif

// ---- Shared-memory layout ----
// Element offset of (row, col) in a stage whose rows hold ROW elements. Swizzled: the 16-byte chunk index
// is XORed with bits of the row so that the 8 rows an ldmatrix phase reads fall in 8 different bank groups.
template <int ROW>
__device__ __forceinline__ int smem_offset(int row, int col) {
#if SWIZZLE
  constexpr int chunks = ROW / 8;
  const int mask = chunks >= 8 ? (row & 7) : chunks == 4 ? ((row >> 1) & 3) : ((row >> 2) & 1);
  return row * ROW + ((((col >> 3) ^ mask)) << 3) + (col & 7);
#else
  return row * (ROW + 8) + col;
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
// One VEC-element copy; out-of-bounds sources are not read and the destination is zero-filled.
__device__ __forceinline__ void copy_async(tf_u16* dst, const tf_u16* src, bool valid) {
#if VEC > 1
  constexpr int kBytes = VEC * 2;
  const int src_bytes = valid ? kBytes : 0;
#if VEC == 8
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src),
               "r"(src_bytes));
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_address(dst)), "l"(src),
               "n"(kBytes), "r"(src_bytes));
#endif
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if VEC > 1
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
#if VEC > 1
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
#endif
}

struct TileCoords {
  tf_i64 m0, n0;  // first row and column of this CTA's C tile
};

// A (BM, BK) tile at K offset k0 → stage. Vector v covers row v / (BK/VEC), columns (v % (BK/VEC))·VEC.
// VEC > 1: asynchronous copies. VEC == 1: fetch_a/store_a below stage through registers instead.
__device__ __forceinline__ void load_a_async(tf_u16* stage, const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const tf_u16* a = static_cast<const tf_u16*>(p.a);
#pragma unroll
  for (int i = 0; i < kALoadsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (kAVectors % kThreads == 0 || v < kAVectors) {
      const int row = v / (BK / VEC);
      const int col = (v % (BK / VEC)) * VEC;
      const tf_i64 grow = t.m0 + row, gcol = k0 + col;
      const bool valid = grow < p.m && gcol < p.k;
      const tf_u16* src = valid ? a + element_offset(grow, p.lda, gcol) : a;
      copy_async(stage + smem_offset<kARow - kPad>(row, col), src, valid);
    }
  }
}

__device__ __forceinline__ void load_b_async(tf_u16* stage, const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const tf_u16* b = static_cast<const tf_u16*>(p.b);
#pragma unroll
  for (int i = 0; i < kBLoadsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (kBVectors % kThreads == 0 || v < kBVectors) {
      const int row = v / (BN / VEC);
      const int col = (v % (BN / VEC)) * VEC;
      const tf_i64 grow = k0 + row, gcol = t.n0 + col;
      const bool valid = grow < p.k && gcol < p.n;
      const tf_u16* src = valid ? b + element_offset(grow, p.ldb, gcol) : b;
      copy_async(stage + smem_offset<kBRow - kPad>(row, col), src, valid);
    }
  }
}

// VEC == 1 path: element loads into registers now, stores to shared memory later, so the loads of the next
// tile overlap the mma work on the current one. Each thread moves pairs of adjacent elements (one 32-bit
// shared-memory store); every element is bounds-checked on its own, since rows may start at odd addresses.
constexpr int kAPairs = BM * BK / 2;
constexpr int kBPairs = BK * BN / 2;
constexpr int kAPairsPerThread = (kAPairs + kThreads - 1) / kThreads;
constexpr int kBPairsPerThread = (kBPairs + kThreads - 1) / kThreads;

struct Staged {
  tf_u32 a[kAPairsPerThread];
  tf_u32 b[kBPairsPerThread];
};

__device__ __forceinline__ tf_u32 load_pair(const tf_u16* base, tf_i64 row, tf_i64 col, tf_i64 rows,
                                            tf_i64 cols, tf_i64 ld) {
  if (row >= rows) return 0;
  const tf_u16* p = base + element_offset(row, ld, col);
  const tf_u32 lo = col < cols ? p[0] : tf_u16(0);
  const tf_u32 hi = col + 1 < cols ? p[1] : tf_u16(0);
  return lo | (hi << 16);
}

__device__ __forceinline__ void fetch(Staged& s, const TfGemmParams& p, TileCoords t, tf_i64 k0) {
  const tf_u16* a = static_cast<const tf_u16*>(p.a);
  const tf_u16* b = static_cast<const tf_u16*>(p.b);
#pragma unroll
  for (int i = 0; i < kAPairsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    s.a[i] = v < kAPairs ? load_pair(a, t.m0 + v / (BK / 2), k0 + (v % (BK / 2)) * 2, p.m, p.k, p.lda) : 0;
  }
#pragma unroll
  for (int i = 0; i < kBPairsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    s.b[i] = v < kBPairs ? load_pair(b, k0 + v / (BN / 2), t.n0 + (v % (BN / 2)) * 2, p.k, p.n, p.ldb) : 0;
  }
}

__device__ __forceinline__ void store(const Staged& s, tf_u16* a_stage, tf_u16* b_stage) {
#pragma unroll
  for (int i = 0; i < kAPairsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (v < kAPairs) {
      tf_u16* dst = a_stage + smem_offset<kARow - kPad>(v / (BK / 2), (v % (BK / 2)) * 2);
      *reinterpret_cast<tf_u32*>(dst) = s.a[i];
    }
  }
#pragma unroll
  for (int i = 0; i < kBPairsPerThread; ++i) {
    const int v = threadIdx.x + i * kThreads;
    if (v < kBPairs) {
      tf_u16* dst = b_stage + smem_offset<kBRow - kPad>(v / (BN / 2), (v % (BN / 2)) * 2);
      *reinterpret_cast<tf_u32*>(dst) = s.b[i];
    }
  }
}

// ---- Tensor-core step ----
__device__ __forceinline__ void ldmatrix_x4(tf_u32 (&r)[4], const tf_u16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(tf_u32 (&r)[4], const tf_u16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}

__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const tf_u32 (&a)[4], tf_u32 b0, tf_u32 b1) {
#if TF_INPUT == TF_TYPE_BF16
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// acc (kMmaM × kMmaN fragments of 16×8) += A stage (warp rows) · B stage (warp columns).
__device__ __forceinline__ void compute_stage(float (&acc)[kMmaM][kMmaN][4], const tf_u16* a_stage,
                                              const tf_u16* b_stage, int warp_m, int warp_n, int lane) {
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks) {
    tf_u32 a_frag[kMmaM][4];
    tf_u32 b_frag[kMmaN / 2][4];
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
      const int row = warp_m * WM + mi * 16 + (lane & 15);
      const int col = ks * 16 + (lane >> 4) * 8;
      ldmatrix_x4(a_frag[mi], a_stage + smem_offset<kARow - kPad>(row, col));
    }
#pragma unroll
    for (int nj = 0; nj < kMmaN / 2; ++nj) {
      const int row = ks * 16 + (lane & 15);
      const int col = warp_n * WN + nj * 16 + (lane >> 4) * 8;
      ldmatrix_x4_trans(b_frag[nj], b_stage + smem_offset<kBRow - kPad>(row, col));
    }
#pragma unroll
    for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
      for (int ni = 0; ni < kMmaN; ++ni) {
        const tf_u32* b = b_frag[ni / 2] + (ni % 2) * 2;
        mma_16x8x16(acc[mi][ni], a_frag[mi], b[0], b[1]);
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
  out_t* c = static_cast<out_t*>(p.c) + element_offset(row, p.ldc, col);
#if TF_MUTANT == TF_MUTANT_BETA0_READS_C
  const bool read_c = true;
#else
  const bool read_c = p.beta != 0.0f;
#endif
  const bool pair_aligned = (reinterpret_cast<tf_u64>(c) % (2 * sizeof(out_t))) == 0;
  if (col + 1 < n_limit && pair_aligned) {
    float c0 = 0.f, c1 = 0.f;
    if (read_c) load_out_pair(c, c0, c1);
    store_out_pair(c, p.alpha * v0 + p.beta * c0, p.alpha * v1 + p.beta * c1);
  } else {
    store_out(c, p.alpha * v0 + (read_c ? p.beta * load_out(c) : 0.f));
    if (col + 1 < n_limit) store_out(c + 1, p.alpha * v1 + (read_c ? p.beta * load_out(c + 1) : 0.f));
  }
}

}  // namespace tf

extern "C" __global__ void __launch_bounds__(tf::kThreads) tf_gemm(const TfGemmParams p) {
  using namespace tf;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  tf_u16* const a_smem = reinterpret_cast<tf_u16*>(smem_raw);
  tf_u16* const b_smem = a_smem + STAGES * kAStage;

  const tf_i64 tiles_m = tf_ceil_div(p.m, BM);
  const tf_i64 tiles_n = tf_ceil_div(p.n, BN);
  const TfTile tile = tf_tile_map(blockIdx.x, tiles_m, tiles_n, GROUP_M, TF_MUTANT != TF_MUTANT_GROUP_DROP);
  if (tile.m >= tiles_m || tile.n >= tiles_n) return;
  const TileCoords t = {tile.m * BM, tile.n * BN};

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;

  float acc[kMmaM][kMmaN][4];
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

  tf_i64 k_tiles = tf_ceil_div(p.k, BK);
#if TF_MUTANT == TF_MUTANT_SKIP_LAST_K_TILE
  if (k_tiles > 1) k_tiles -= 1;
#endif

#if VEC > 1
  // Prologue: fill STAGES-1 stages; each stage is one commit group (possibly empty) so the wait count holds.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      load_a_async(a_smem + s * kAStage, p, t, s * BK);
      load_b_async(b_smem + s * kBStage, p, t, s * BK);
    }
    cp_async_commit();
  }
  for (tf_i64 kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies)
#if TF_MUTANT != TF_MUTANT_NO_STAGE_BARRIER
    __syncthreads();  // ... everyone's copies too, and everyone is done with the stage refilled next
#endif
    const tf_i64 next = kt + STAGES - 1;
    if (next < k_tiles) {
      const int s = static_cast<int>(next % STAGES);
      load_a_async(a_smem + s * kAStage, p, t, next * BK);
      load_b_async(b_smem + s * kBStage, p, t, next * BK);
    }
    cp_async_commit();
    const int s = static_cast<int>(kt % STAGES);
    compute_stage(acc, a_smem + s * kAStage, b_smem + s * kBStage, warp_m, warp_n, lane);
  }
#else
  Staged staged;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      fetch(staged, p, t, s * BK);
      store(staged, a_smem + s * kAStage, b_smem + s * kBStage);
    }
  }
  for (tf_i64 kt = 0; kt < k_tiles; ++kt) {
#if TF_MUTANT != TF_MUTANT_NO_STAGE_BARRIER
    __syncthreads();  // stage kt is complete, and the stage stored below is no longer being read
#endif
    const tf_i64 next = kt + STAGES - 1;
    if (next < k_tiles) fetch(staged, p, t, next * BK);
    const int s = static_cast<int>(kt % STAGES);
    compute_stage(acc, a_smem + s * kAStage, b_smem + s * kBStage, warp_m, warp_n, lane);
    if (next < k_tiles) {
      const int s_next = static_cast<int>(next % STAGES);
      store(staged, a_smem + s_next * kAStage, b_smem + s_next * kBStage);
    }
  }
#endif

  // Fragment (mi, ni) holds rows lane/4 and lane/4 + 8, columns 2·(lane%4) and +1 of its 16×8 block.
#pragma unroll
  for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kMmaN; ++ni) {
      const tf_i64 row = t.m0 + warp_m * WM + mi * 16 + (lane >> 2);
      const tf_i64 col = t.n0 + warp_n * WN + ni * 8 + (lane & 3) * 2;
      store_pair(p, row, col, acc[mi][ni][0], acc[mi][ni][1]);
      store_pair(p, row + 8, col, acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
}

// Copies a rows×cols operand (leading dimension src_ld) into a zero-padded dst_rows×dst_cols buffer whose
// rows are 16-byte aligned, so the GEMM can use VEC = 8 on any shape. Each thread writes 8 elements.
extern "C" __global__ void tf_pack(const TfPackParams p) {
  const tf_u16* src = static_cast<const tf_u16*>(p.src);
  tf_u16* dst = static_cast<tf_u16*>(p.dst);
  const tf_i64 vectors_per_row = p.dst_cols / 8;
  for (tf_i64 row = blockIdx.y; row < p.dst_rows; row += gridDim.y) {
    for (tf_i64 v = blockIdx.x * static_cast<tf_i64>(blockDim.x) + threadIdx.x; v < vectors_per_row;
         v += static_cast<tf_i64>(gridDim.x) * blockDim.x) {
      tf_u16 e[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const tf_i64 col = v * 8 + i;
        e[i] = (row < p.rows && col < p.cols) ? src[row * p.src_ld + col] : tf_u16(0);
      }
      uint4 packed;
      packed.x = e[0] | (static_cast<tf_u32>(e[1]) << 16);
      packed.y = e[2] | (static_cast<tf_u32>(e[3]) << 16);
      packed.z = e[4] | (static_cast<tf_u32>(e[5]) << 16);
      packed.w = e[6] | (static_cast<tf_u32>(e[7]) << 16);
      *reinterpret_cast<uint4*>(dst + row * p.dst_cols + v * 8) = packed;
    }
  }
}
