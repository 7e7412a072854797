// Hopper-native GEMM (sm_90a): C = alpha·A·B + beta·C with wgmma.mma_async on operands in shared memory,
// fp32 accumulators in registers, A and B brought in by TMA (cp.async.bulk.tensor) from tensor maps the host
// encodes per problem, and warp-specialised roles:
//   warpgroup 0            the producer: one thread issues the TMA loads of a STAGES-deep ring, each stage
//                          completing on its `full` mbarrier (transaction bytes);
//   warpgroups 1..CONSUMERS the consumers: each owns BM/CONSUMERS rows of the BM×BN tile, waits on `full`,
//                          issues wgmma, and releases the stage on its `empty` mbarrier once its wgmma are done.
// Registers move from the producer to the consumers with setmaxnreg. CTAs walk output tiles with stride
// gridDim.x (templates/tile_map.h, GROUP_M rasterisation), so a grid of fewer CTAs than tiles is a persistent
// launch; the ring's stage and phase carry on across tiles, so the producer loads the next tile while the
// consumers finish this one.
// Split-K (TfGemmParams::splits > 1, the host's SPLIT_K): CTAs walk units, a (cluster) tile and one K split
// of it (templates/tile_map.h), and each unit stores its unscaled fp32 partial into the workspace; tf_reduce
// adds the partials in a fixed order and applies the epilogue (templates/split_k.h). The producer and the
// consumers walk the same units, so the ring carries on across them as across tiles.
// Clusters (CLUSTER_M or CLUSTER_N = 2, launched with a cluster dimension of 2): the two CTAs of a cluster
// take adjacent tiles of one cluster tile (tf_cluster_tile) and share the operand those tiles have in common,
// B for CLUSTER_M = 2 and A for CLUSTER_N = 2: each CTA loads half of every box of it and multicasts the half
// to both CTAs, so L2 sends that operand to the SMs once instead of twice. A stage is then written by both
// CTAs' producers, so each consumer warp releases it to the `empty` barriers of both CTAs, and a CTA leaves
// only after a cluster barrier (its partner may still arrive on its barriers).
// A from registers (A_REGS = 1, row-major A only): each consumer warp reads its rows of a K tile from the
// swizzled stage with ldmatrix and issues wgmma with A in registers; the registers are reused only after
// the previous K tile's wgmma are done.
// Inputs: fp16 or bf16 (m64nNk16, either operand stored either way: the instruction reads M- or N-major
// tiles), fp8 e4m3/e5m2 (m64nNk32) with A row-major and B column-major only, or tf32 (fp32 storage, m64nNk8)
// stored either way: the last two read K-major tiles alone, and the tf32 consumers rewrite an M/N-major tile
// (column-major A, row-major B) K-major in shared memory after it lands (transpose_stage); the RC kernel also
// serves every order after a transposing pack (PACK=1, the launcher's). C: fp16, bf16, fp32, or, for fp8 inputs,
// the input type; fp32 for tf32 (templates/output_types.h). The epilogue applies alpha (and beta, reading C only
// when beta != 0); with a 16-byte aligned C it stages column slabs in shared memory (loading C's slab there
// with TMA first when beta != 0) and stores them with TMA (which clips partial tiles), otherwise it stores
// from registers with bounds checks.
//
// Transposed (SWAP_AB = 1): the launcher hands the kernel Cᵀ = Bᵀ·Aᵀ (the problem's N rows by its M columns, A
// and B traded and each read in the other storage order), and the kernel stores C transposed, element (i, j)
// of its result at c + j·ldc + i, from registers. A skinny M becomes the wgmma's N (BN down to 8): one tile
// spans all of M, and the wide operand streams through the ring as A. Tiles whose BN is not a multiple of 64
// have kernels for K-major B only (layouts RC and CC, which row-major A gives the transposed form).
//
// TMA needs 16-byte aligned base addresses and leading dimensions: with PACK=1 the launcher first copies an
// operand that is not so into aligned scratch (tf_pack, templates/pack.h); without, the host refuses such
// problems, so the table falls back to another candidate for them. Out-of-bounds parts of a tile load as zeros, so every M, N
// and K ≥ 1 is handled.
//
// Host-side declaration of the same tunables, constraints and shared-memory formula:
// runtime/templates/gemm_wgmma.cpp.
#include "tunefuzz_rtc.h"
#include "gemm_params.h"
#include "perturb.h"
#include "tile_map.h"

// ---- Tunables (names match configs and result tables) ----
#ifndef BM
#define BM 128  // CTA tile rows (M): CONSUMERS × 64 × (m64 blocks per consumer)
#endif
#ifndef BN
#define BN 256  // CTA tile columns (N) = the wgmma instruction's N: a multiple of 8 (of 64 for N-major B)
#endif
#ifndef BK
#define BK 64  // CTA tile depth (K) per stage: a multiple of 128 bytes of input
#endif
#ifndef STAGES
#define STAGES 4  // depth of the TMA ring
#endif
#ifndef CONSUMERS
#define CONSUMERS 2  // consumer warpgroups (1 or 2)
#endif
#ifndef GROUP_M
#define GROUP_M 8  // CTA raster swizzle: tile rows walked together so concurrent CTAs share L2 lines
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1  // CTAs of a cluster along M (1 or 2): 2 = two tile rows share each B tile by multicast
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1  // CTAs of a cluster along N (1 or 2): 2 = two tile columns share each A tile by multicast
#endif
#ifndef A_REGS
#define A_REGS 0  // 1 = the consumers read A into registers (ldmatrix) for wgmma; row-major A only
#endif
#ifndef SWAP_AB
#define SWAP_AB 0  // 1 = the launcher hands this kernel Cᵀ = Bᵀ·Aᵀ, so it stores C transposed (column-major)
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
#define TF_MUTANT_K_TILE_MISMATCH 1      // the consumers stop one K tile before the producer does
#define TF_MUTANT_WRONG_PARITY 2         // the consumers wait on `full` with the opposite parity
#define TF_MUTANT_INIT_IN_ROLE 3         // the barriers are initialised inside the consumer branch, unsynced
#define TF_MUTANT_ARRIVAL_COUNT 4        // `empty` expects one more arrival than the consumers make
#define TF_MUTANT_STORE_NOT_DRAINED 5    // the epilogue rewrites its staging slab before TMA has read it
#define TF_MUTANT_SKIPS_ADVANCE 6        // a consumer skips the scheduler's advance after a partial tile
#define TF_MUTANT_NO_ACC_INIT 7          // accumulators are zeroed once per CTA, not once per tile
#define TF_MUTANT_BETA0_READS_C 8        // the epilogue reads C (scaled by 0) even when beta == 0
#define TF_MUTANT_MULTICAST_SELF 9       // (clusters) a shared operand's half is multicast to its own CTA only
#define TF_MUTANT_RELEASE_LOCAL 10       // (clusters) a stage is released to the own CTA's `empty` only
#define TF_MUTANT_NO_EXIT_SYNC 11        // (clusters) a CTA exits without waiting for its partner
#define TF_MUTANT_STORE_BEFORE_SLAB_SYNC 12  // the TMA store is issued before the other warps' slab writes
#define TF_MUTANT_RELEASE_BEFORE_MMA 13  // a stage is released as soon as it lands, before wgmma reads it
#define TF_MUTANT_SPLIT_SLOT_WRAPS 14    // (split-K) the last split's partial lands in split 0's workspace slot
#define TF_MUTANT_TRANSPOSE_EARLY_WRITE 15  // (tf32) a consumer rewrites a tile K-major before all have read it
#define TF_MUTANT_TRANSPOSE_UNSYNCED 16  // (tf32) wgmma starts before every consumer's rewrite is done
#define TF_MUTANT_SWAP_STEPS_BY_ROWS 17  // (SWAP_AB) C's columns are taken M apart, not ldc apart
#define TF_MUTANT_SWAP_LAST_COLUMN 18   // (SWAP_AB) a pair's second element is stored past C's last column

// ---- Derived values and what the tunables must satisfy ----
#if TF_INPUT == TF_TYPE_FP8E4M3 || TF_INPUT == TF_TYPE_FP8E5M2
#define TF_ELEM_BYTES 1
#elif TF_INPUT == TF_TYPE_TF32
#define TF_ELEM_BYTES 4
#else
#define TF_ELEM_BYTES 2
#endif
#if TF_INPUT == TF_TYPE_FP16
#define TF_WGMMA_AB16 ".f16.f16"
#endif
#if TF_INPUT == TF_TYPE_FP8E5M2
#define TF_WGMMA_AB8 ".e5m2.e5m2"
#endif
// Whether the epilogue may stage C in shared memory and store it by TMA (see kOutRowBytes below). A macro,
// not a constexpr: NVRTC keeps a namespace-scope constant that code tests as a global of the image.
#define TF_TMA_STORE (!SWAP_AB && BN % 64 == 0)
#include "wgmma_ops.h"
#include "output_types.h"
#include "split_k.h"

namespace tf {
constexpr int kElemBytes = TF_ELEM_BYTES;
constexpr int kSwizzleBytes = 128;                   // TMA and wgmma both use the 128-byte swizzle
constexpr int kSlab = kSwizzleBytes / kElemBytes;    // elements in one 128-byte row of a swizzled tile
constexpr int kMmaK = 32 / kElemBytes;               // K of one wgmma: 16 (16-bit), 32 (fp8), 8 (tf32)
constexpr int kWgM = BM / CONSUMERS;                 // rows each consumer warpgroup owns
constexpr int kMi = kWgM / 64;                       // m64 blocks per consumer
constexpr int kThreads = 128 * (1 + CONSUMERS);
constexpr int kCluster = CLUSTER_M * CLUSTER_N;  // CTAs per cluster
// fp8 wgmma adds into its accumulators with less than fp32 precision (Hopper keeps ~14 mantissa bits across
// the chain of additions into D): each K tile is computed into fresh registers and added into the fp32 sums
// on the CUDA cores ("promotion"), which takes a second set of accumulators.
constexpr int kAccumulatorSets = TF_ELEM_BYTES == 1 ? 2 : 1;
constexpr int kAStageBytes = BM * BK * kElemBytes;
constexpr int kBStageBytes = BN * BK * kElemBytes;
constexpr int kStageBytes = kAStageBytes + kBStageBytes;
constexpr int kOutBytes = TF_OUT_BYTES;
// The epilogue's staging rows: 128 bytes (64 fp16/bf16 or 32 fp32 columns), or 64 bytes (64 columns) for fp8,
// so that every BN that is a multiple of 64 is a whole number of them; swizzled as C's tensor map says (128- or
// 64-byte swizzle). Other BN, and C stored transposed (SWAP_AB), store from registers alone: no staging slab.
constexpr int kOutRowBytes = kOutBytes == 1 ? 64 : kSwizzleBytes;
constexpr int kOutSlab = kOutRowBytes / kOutBytes;  // C columns in one staging row
constexpr int kEpilogueBytes = TF_TMA_STORE ? CONSUMERS * kWgM * kSwizzleBytes : 0;  // a staging slab per consumer
// Dynamic shared memory: 1 KiB of slack to align the ring to the swizzle pattern's 1 KiB period.
constexpr int kSmemBytes = 1024 + STAGES * kStageBytes + kEpilogueBytes;
// tf32 wgmma reads K-major tiles alone: an M/N-major operand tile is rewritten in place (transpose_stage) by
// all consumer threads, in rounds of rows, each thread holding groups of 4 K-values of one row in registers
// between its reads and its writes. A round must cover the rows whose new bytes are the old bytes of its own
// rows: with BK one swizzled row (kSlab), a block of kSlab rows × BK is both kSlab K-rows of the M/N-major tile
// and kSlab rows of the K-major one, so rounds of whole blocks work (kRoundGroups groups a thread); with a
// deeper BK the K-major column slabs interleave every row, so the whole tile is one round.
constexpr bool kTransposes = TF_ELEM_BYTES == 4;
constexpr int kTransposers = 128 * CONSUMERS;
constexpr int kRoundGroups = 2;
constexpr int min_of(int a, int b) { return a < b ? a : b; }
constexpr int max_of(int a, int b) { return a > b ? a : b; }
constexpr int round_rows(int rows) {
  return BK == kSlab ? min_of(rows, max_of(kSlab, kRoundGroups * kTransposers * 4 / BK)) : rows;
}
constexpr int round_groups(int rows) { return round_rows(rows) * BK / 4 / kTransposers; }
// The registers that holds, the most over the orders in LAYOUTS (column-major A rewrites A, row-major B
// rewrites B).
constexpr int kTransposeRegisters =
    !kTransposes ? 0
                 : 4 * max_of((LAYOUTS & (TF_LAYOUT_CR | TF_LAYOUT_CC)) ? round_groups(BM) : 0,
                              (LAYOUTS & (TF_LAYOUT_RR | TF_LAYOUT_CR)) ? round_groups(BN) : 0);
}  // namespace tf

static_assert(TF_INPUT == TF_TYPE_FP16 || TF_INPUT == TF_TYPE_BF16 || TF_INPUT == TF_TYPE_TF32 ||
                  TF_INPUT == TF_TYPE_FP8E4M3 || TF_INPUT == TF_TYPE_FP8E5M2,
              "TF_INPUT must be fp16, bf16, tf32, fp8e4m3 or fp8e5m2");
static_assert(TF_INPUT == TF_TYPE_TF32 ? TF_OUTPUT == TF_TYPE_FP32
                                       : (TF_OUTPUT == TF_TYPE_FP16 || TF_OUTPUT == TF_TYPE_BF16 ||
                                          TF_OUTPUT == TF_TYPE_FP32 || TF_OUTPUT == TF_INPUT),
              "TF_OUTPUT must be fp16, bf16, fp32 or (fp8 inputs) the input type; fp32 for tf32 inputs");
static_assert(A_REGS == 0 || A_REGS == 1, "A_REGS is a switch: 0 or 1");
static_assert(!(A_REGS && TF_ELEM_BYTES == 4), "A_REGS=1 is for 16-bit and fp8 inputs, not tf32");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "CONSUMERS must be 1 or 2 warpgroups");
static_assert(BM % (64 * CONSUMERS) == 0 && BM / CONSUMERS <= 256,
              "BM must be a multiple of 64*CONSUMERS (m64 wgmma blocks), at most 256 rows per consumer");
static_assert(BN % 8 == 0 && BN >= 8 && BN <= 256, "BN must be a multiple of 8 from 8 to 256 (the wgmma's N)");
// A cluster sharing B loads half of every B box into each CTA: the halves start a multiple of 1 KiB apart.
static_assert(CLUSTER_M == 1 || BN % 16 == 0, "CLUSTER_M = 2 loads B in halves of 8-row groups: BN a multiple of 16");
static_assert(SWAP_AB == 0 || SWAP_AB == 1, "SWAP_AB is a switch: 0 or 1");
static_assert(BK % tf::kSlab == 0 && BK <= 256, "BK must be a multiple of 128 bytes of input, at most 256");
static_assert(STAGES >= 2, "STAGES must be at least 2 (one stage loading while one is consumed)");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert((CLUSTER_M == 1 || CLUSTER_M == 2) && (CLUSTER_N == 1 || CLUSTER_N == 2) && CLUSTER_M * CLUSTER_N <= 2,
              "CLUSTER_M x CLUSTER_N must be 1x1, 2x1 or 1x2");
static_assert(tf::kMi * BN / 2 * tf::kAccumulatorSets <= 256, "more than 256 accumulators per consumer thread");
static_assert(tf::kTransposeRegisters == 0 || tf::kMi * BN / 2 + tf::kTransposeRegisters <= 192,
              "tf32: accumulators plus the registers that rewrite M/N-major tiles K-major exceed 192 per thread");

// Read back by the host after loading, to check that its launch geometry matches this instantiation.
extern "C" __constant__ tf_i32 tf_kernel_meta[4] = {tf::kThreads, tf::kSmemBytes, BM, BN};

// A CUtensorMap as the kernel receives it: 128 opaque bytes, 64-byte aligned (cuda.h is not available here).
struct __align__(64) TfTensorMap {
  tf_u64 opaque[16];
};

namespace tf {

// ---- mbarriers, TMA and wgmma, in PTX ----
__device__ __forceinline__ tf_u32 smem_address(const void* p) {
  return static_cast<tf_u32>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void barrier_init(tf_u64* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count));
}

__device__ __forceinline__ void barrier_wait(tf_u64* bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void barrier_arrive(tf_u64* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
}

// ---- Clusters ----
__device__ __forceinline__ int cluster_rank() {
  int rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ int cluster_index() {
  int index;
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(index));
  return index;
}
__device__ __forceinline__ int cluster_count() {
  int count;
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(count));
  return count;
}
__device__ __forceinline__ int cluster_size() {
  int size;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  return size;
}

// Arrives on the mbarrier at the same shared-memory offset as `bar` in the cluster's CTA `rank`. The default
// (CTA-scoped) release is enough: what the arrival orders is the end of wgmma reads of a stage (waited for
// with wgmma.wait_group) before the TMA writes that refill it, both in the async proxy, which a generic
// cluster-scoped release would not order anyway. With `.release.cluster` here, 2-CTA clusters ran 1.6-2.4x
// slower than single CTAs on both cards; a cluster-wide fence per warp and K tile fits those figures (the
// SASS was not inspected: docs/hopper.md).
__device__ __forceinline__ void barrier_arrive_remote(tf_u64* bar, int rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_address(bar)),
      "r"(rank)
      : "memory");
}

// Every thread of the cluster that has not exited: all of them arrive before any goes on.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ void barrier_expect_bytes(tf_u64* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}

// A box of the tensor map at (inner, outer) element coordinates into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const TfTensorMap* map, int inner, int outer, tf_u64* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
          "r"(smem_address(dst)),
      "l"(map), "r"(inner), "r"(outer), "r"(smem_address(bar))
      : "memory");
}

// The same box into the same shared-memory offset of every CTA in `mask`, completing on the mbarrier at
// `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_multicast(void* dst, const TfTensorMap* map, int inner, int outer,
                                                   tf_u64* bar, tf_u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_address(dst)),
      "l"(map), "r"(inner), "r"(outer), "r"(smem_address(bar)), "h"(mask)
      : "memory");
}

__device__ __forceinline__ void tma_store(const TfTensorMap* map, int inner, int outer, const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map),
               "r"(inner), "r"(outer), "r"(smem_address(src))
               : "memory");
}

// Orders this thread's generic-proxy writes to shared memory before later async-proxy reads (TMA store).
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// A barrier among one consumer warpgroup's 128 threads (ids 1, 2; 0 is __syncthreads).
__device__ __forceinline__ void consumer_sync(int consumer) {
  asm volatile("bar.sync %0, 128;" ::"r"(consumer + 1) : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across an asynchronous wgmma.
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Shared-memory matrix descriptor of a 128-byte-swizzled tile: start address, leading and stride byte
// offsets (see the PTX ISA, "Matrix Descriptor Format"), swizzle mode 1 = 128 bytes.
__device__ __forceinline__ tf_u64 descriptor(tf_u32 address, tf_u32 leading_bytes, tf_u32 stride_bytes) {
  return static_cast<tf_u64>((address & 0x3FFFF) >> 4) | (static_cast<tf_u64>(leading_bytes >> 4) << 16) |
         (static_cast<tf_u64>(stride_bytes >> 4) << 32) | (tf_u64{1} << 62);
}

// The descriptor of a stage's operand tile (the start of its swizzled rows), built once per K tile; each wgmma
// adds its block's byte offset (block_offset) to it in 16-byte units. Shared-memory addresses stay under
// 256 KiB, so the start field (bits 0-13) never carries into the next. Adding an offset instead of building
// each wgmma's descriptor from its address keeps the arithmetic out of the K loop: rebuilding it (mask, shifts,
// 64-bit composition, moved into uniform registers per wgmma) made gemm_wgmma issue 2.25x cuBLAS's instructions
// for the same wgmma count (results/profile-h200-e4a050c/).
template <bool K_MAJOR>
__device__ __forceinline__ tf_u64 stage_descriptor(tf_u32 stage) {
  return K_MAJOR ? descriptor(stage, 16, 1024) : descriptor(stage, BK * kSwizzleBytes, 1024);
}

// Where rows [row0, row0 + 64) × K step `kk` of an operand tile of ROWS rows (M or N) and BK columns start in
// a stage, in bytes. K-major (stored along K): the tile is BK/kSlab column slabs of ROWS rows × 128 bytes,
// 8-row groups 1 KiB apart (the descriptor's stride offset), the K step a 32-byte offset inside the swizzled
// row. M/N-major (stored along M or N): ROWS/kSlab row slabs of BK K-rows × 128 bytes, slabs BK·128 bytes
// apart (leading offset), 8 K-rows 1 KiB apart (stride offset), the K step kMmaK rows further. Linear in row0
// (a multiple of 64), so a consumer's part can be added once and each block's part per wgmma: K-major rows are
// 128 bytes each, and only 16-bit inputs (slabs of 64 rows) give wgmma an M/N-major operand (tf32 rewrites its
// M/N-major tiles K-major first, fp8 computes RC alone).
template <bool K_MAJOR, int ROWS>
__device__ __forceinline__ tf_u32 block_offset(int row0, int kk) {
  return K_MAJOR ? (kk * kMmaK / kSlab) * ROWS * kSwizzleBytes + row0 * kSwizzleBytes + (kk * kMmaK % kSlab) * kElemBytes
                 : (row0 / kSlab) * BK * kSwizzleBytes + kk * kMmaK * kSwizzleBytes;
}

// One box of an operand: into this CTA alone, or (PARTS = 2: the operand is shared by the cluster's two
// CTAs) multicast into both.
template <int PARTS>
__device__ __forceinline__ void load_box(void* dst, const TfTensorMap* map, int inner, int outer, tf_u64* bar) {
  if (PARTS == 1) {
    tma_load(dst, map, inner, outer, bar);
  } else {
#if TF_MUTANT == TF_MUTANT_MULTICAST_SELF
    const tf_u16 mask = static_cast<tf_u16>(1u << cluster_rank());
#else
    const tf_u16 mask = 0x3;
#endif
    tma_load_multicast(dst, map, inner, outer, bar, mask);
  }
}

// TMA boxes of one operand tile into a stage (see block_offset for the layout): K-major, one box of
// kSlab K-columns × ROWS rows per column slab; M/N-major, one box of kSlab rows × BK K-rows per row slab.
// An operand the cluster shares (PARTS = 2) is loaded in halves of every box along its rows (the tensor
// map's box is half as tall): CTA `part` loads half `part` for both CTAs. Halves start a multiple of 1 KiB
// apart, so the 128-byte swizzle reads the same as for whole boxes.
template <bool K_MAJOR, int ROWS, int PARTS>
__device__ __forceinline__ void load_operand(unsigned char* stage, const TfTensorMap* map, int row0, int k0,
                                             tf_u64* bar, int part) {
  if (K_MAJOR) {
    constexpr int kRows = ROWS / PARTS;
#pragma unroll
    for (int s = 0; s < BK / kSlab; ++s)
      load_box<PARTS>(stage + (s * ROWS + part * kRows) * kSwizzleBytes, map, k0 + s * kSlab, row0 + part * kRows,
                      bar);
  } else {
    constexpr int kRows = BK / PARTS;
#pragma unroll
    for (int s = 0; s < ROWS / kSlab; ++s)
      load_box<PARTS>(stage + (s * BK + part * kRows) * kSwizzleBytes, map, row0 + s * kSlab, k0 + part * kRows,
                      bar);
  }
}

// ---- tf32: M/N-major tiles rewritten K-major ----
// A barrier among all consumer threads (id 3; 1 and 2 are each consumer's own).
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 3, %0;" ::"n"(kTransposers) : "memory");
}

// One round's groups of a thread: group j of consumer thread t is row row0 + i % round_rows(ROWS) and K-values
// 4·(i / round_rows(ROWS)) .. + 3, i = t + j·kTransposers: a warp's lanes take 32 consecutive rows of one
// K group.
template <int ROWS>
struct Groups {
  float v[round_groups(ROWS)][4];
};

// Reads thread t's groups of a round from an M/N-major tile (ROWS/kSlab row slabs of BK K-rows × 128 bytes,
// as TMA wrote it with the 128-byte swizzle: 16-byte chunk ^= K-row % 8). Each load of a warp reads one whole
// swizzled 128-byte row: no bank conflicts.
template <int ROWS>
__device__ __forceinline__ void read_mn_round(Groups<ROWS>& g, const unsigned char* tile, int row0, int t) {
#pragma unroll
  for (int j = 0; j < round_groups(ROWS); ++j) {
    const int i = t + j * kTransposers, row = row0 + i % round_rows(ROWS), k0 = i / round_rows(ROWS) * 4;
    const int byte = row % kSlab * kElemBytes;  // along the K-row
    const unsigned char* const slab = tile + row / kSlab * BK * kSwizzleBytes;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int k = k0 + e;
      g.v[j][e] = *reinterpret_cast<const float*>(slab + k * kSwizzleBytes + ((((byte >> 4) ^ (k & 7)) << 4) | (byte & 15)));
    }
  }
}

// Writes them where the K-major tile wgmma reads has them (BK/kSlab column slabs of ROWS rows × 128 bytes,
// chunk ^= row % 8): a group is one 16-byte chunk, and the eight lanes of a quarter warp write eight rows'
// different chunks, all 32 banks.
template <int ROWS>
__device__ __forceinline__ void write_k_round(const Groups<ROWS>& g, unsigned char* tile, int row0, int t) {
#pragma unroll
  for (int j = 0; j < round_groups(ROWS); ++j) {
    const int i = t + j * kTransposers, row = row0 + i % round_rows(ROWS), group = i / round_rows(ROWS);
    constexpr int kGroupsPerSlab = kSlab / 4;
    const int slab = group / kGroupsPerSlab, chunk = group % kGroupsPerSlab;
    *reinterpret_cast<float4*>(tile + (slab * ROWS + row) * kSwizzleBytes + ((chunk ^ (row & 7)) << 4)) =
        make_float4(g.v[j][0], g.v[j][1], g.v[j][2], g.v[j][3]);
  }
}

// Rewrites one M/N-major tile K-major in place, round by round: every consumer thread reads its groups of the
// round, all meet (a write lands on bytes other threads of the round still read), then write. A round touches
// its own rows' bytes alone, so the next round's reads need no barrier after this one's writes.
template <int ROWS>
__device__ __forceinline__ void transpose_tile(unsigned char* tile, int t, int kt) {
#pragma unroll
  for (int row0 = 0; row0 < ROWS; row0 += round_rows(ROWS)) {
    Groups<ROWS> g;
    read_mn_round<ROWS>(g, tile, row0, t);
#if TF_MUTANT != TF_MUTANT_TRANSPOSE_EARLY_WRITE
    consumers_sync();
#endif
    tf_perturb(11, static_cast<tf_u32>(kt * 8 + row0 / round_rows(ROWS)));  // some warps write late
    write_k_round<ROWS>(g, tile, row0, t);
  }
}

// tf32: rewrites the stage's M/N-major tiles (A column-major, B row-major) K-major, makes the writes visible
// to the async proxy wgmma reads through, and meets the other consumer threads before any wgmma. The stage
// holds no other K tile meanwhile: its previous wgmma were done before the producer refilled it.
template <bool A_COL, bool B_COL>
__device__ __forceinline__ void transpose_stage(unsigned char* a_tile, unsigned char* b_tile, int t, int kt) {
  if constexpr (kTransposes && (A_COL || !B_COL)) {
    if constexpr (A_COL) transpose_tile<BM>(a_tile, t, kt);
    if constexpr (!B_COL) transpose_tile<BN>(b_tile, t, kt);
    fence_async_shared();
#if TF_MUTANT != TF_MUTANT_TRANSPOSE_UNSYNCED
    consumers_sync();
#endif
  }
}

// A_REGS: the consumer warp's A of one K tile in registers, per K step and m64 block: the warp's 16 rows in
// the m16 A-fragment layout (four 32-bit registers). Without A_REGS, wgmma reads A from shared memory and
// this holds nothing.
struct AFragments {
#if A_REGS
  tf_u32 r[BK / kMmaK][kMi][4];
#endif
};

// A_REGS: loads the consumer warp's A fragments of a K-major stage with ldmatrix.x4. For each K step (32
// bytes of K) and m64 block, lanes 0-15 address the warp's rows 0-15 at the step's first 16 bytes and lanes
// 16-31 the same rows 16 bytes further; the four 8x8 matrices are the fragment's four registers (rows 0-7
// and 8-15 of the first half, then of the second). Addresses follow the 128-byte swizzle TMA wrote.
__device__ __forceinline__ void load_a(AFragments& a, tf_u32 a_stage, int consumer, int thread) {
#if A_REGS
  const int warp = thread >> 5, lane = thread & 31;
#pragma unroll
  for (int kk = 0; kk < BK / kMmaK; ++kk) {
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi) {
      const int row = (consumer * kMi + mi) * 64 + warp * 16 + (lane & 15);
      const int byte = kk * kMmaK * kElemBytes + (lane >> 4) * 16;  // along K within the stage
      const int slab = byte / kSwizzleBytes, chunk = (byte % kSwizzleBytes) >> 4;
      const tf_u32 address = a_stage + (slab * BM + row) * kSwizzleBytes + ((chunk ^ (row & 7)) << 4);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(a.r[kk][mi][0]), "=r"(a.r[kk][mi][1]), "=r"(a.r[kk][mi][2]), "=r"(a.r[kk][mi][3])
                   : "r"(address)
                   : "memory");
    }
  }
#endif
}

// The wgmma of one K tile into `acc`: accumulating onto it, or, with `fresh`, starting from zero (scale-d 0
// on the first K step). A comes from `a` (A_REGS) or from the stage.
// TF_WGMMA_CALL(n) names tf_wgmma*_n##n: expanding BN first, through one more macro, gives it the number.
#define TF_WGMMA_CALL_N(n) TF_WGMMA_CALL(n)

template <bool A_COL, bool B_COL>
__device__ __forceinline__ void mma_k_tile(float (&acc)[kMi][BN / 2], const AFragments& a, tf_u32 a_stage,
                                           tf_u32 b_stage, int consumer, bool fresh) {
  // The tiles as wgmma reads them: tf32's were rewritten K-major (transpose_stage).
  constexpr bool kAKMajor = !A_COL || kTransposes, kBKMajor = B_COL || kTransposes;
  const tf_u64 b_desc = stage_descriptor<kBKMajor>(b_stage);
#if !A_REGS
  const tf_u64 a_desc = stage_descriptor<kAKMajor>(a_stage) + (block_offset<kAKMajor, BM>(consumer * kWgM, 0) >> 4);
#endif
#pragma unroll
  for (int kk = 0; kk < BK / kMmaK; ++kk) {
    const int scale_d = fresh && kk == 0 ? 0 : 1;
    const tf_u64 db = b_desc + (block_offset<kBKMajor, BN>(0, kk) >> 4);
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi) {
#if A_REGS
#if TF_ELEM_BYTES == 1
#define TF_WGMMA_CALL(n) tf_wgmma8r_n##n(acc[mi], a.r[kk][mi], db, scale_d)
#else
#define TF_WGMMA_CALL(n) tf_wgmma16r_n##n<B_COL ? 0 : 1>(acc[mi], a.r[kk][mi], db, scale_d)
#endif
#else
      const tf_u64 da = a_desc + (block_offset<kAKMajor, BM>(mi * 64, kk) >> 4);
#if TF_ELEM_BYTES == 1
#define TF_WGMMA_CALL(n) tf_wgmma8_n##n(acc[mi], da, db, scale_d)
#elif TF_ELEM_BYTES == 4
#define TF_WGMMA_CALL(n) tf_wgmma32_n##n(acc[mi], da, db, scale_d)
#else
#define TF_WGMMA_CALL(n) tf_wgmma16_n##n<A_COL ? 1 : 0, B_COL ? 0 : 1>(acc[mi], da, db, scale_d)
#endif
#endif
      TF_WGMMA_CALL_N(BN);  // the wrapper of N = BN (wgmma_ops.h)
#undef TF_WGMMA_CALL
    }
  }
}

struct Tile {
  tf_i64 m0, n0;
};

// The ring position every role walks the same way: the stage, and the parity of its current phase.
struct Ring {
  int stage = 0;
  int phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1;
    }
  }
};

// One unit of work (tf_cluster_unit): this CTA's tile of a cluster tile (it may lie past the last tile row or
// column: see gemm()) and the K tiles [k_begin, k_end) of one split of it. The units of one split are
// adjacent, so the CTAs running together share operands through L2 as without splits.
struct Unit {
  Tile tile;
  tf_i64 split;
  int k_begin, k_end;
};

__device__ __forceinline__ Unit unit_at(tf_i64 index, int rank, tf_i64 tiles_m, tf_i64 tiles_n, tf_i64 splits,
                                        tf_i64 k_tiles) {
  const TfUnit unit = tf_cluster_unit(index, rank, tiles_m, tiles_n, CLUSTER_M, CLUSTER_N, GROUP_M);
  Unit u;
  u.tile = {unit.tile.m * BM, unit.tile.n * BN};
  u.split = unit.split;
  const TfKRange kr = tf_k_range(k_tiles, splits, u.split, 0);
  u.k_begin = static_cast<int>(kr.begin);
  u.k_end = static_cast<int>(kr.end);
  return u;
}

// A consumer warp is done reading a stage: in a cluster, both CTAs' producers write it, so both hear.
__device__ __forceinline__ void release_now(tf_u64* empty) {
#if CLUSTER_M * CLUSTER_N == 1 || TF_MUTANT == TF_MUTANT_RELEASE_LOCAL
  barrier_arrive(empty);
#else
#pragma unroll
  for (int rank = 0; rank < kCluster; ++rank) barrier_arrive_remote(empty, rank);
#endif
}

// The release once the stage's wgmma are done (the mutant releases at the wait instead: see gemm()).
__device__ __forceinline__ void release(tf_u64* empty, tf_u32 step) {
  tf_perturb(1, step);
#if TF_MUTANT != TF_MUTANT_RELEASE_BEFORE_MMA
  release_now(empty);
#endif
}

// Columns col and col + 1 of `row` of C: alpha·v + beta·C, bounds-checked; C is read only when beta != 0.
// SWAP_AB: C is stored transposed, element (row, col) at c + col·ldc + row (the problem's C is row-major, and
// this kernel computes its transpose), so the pair's two elements lie ldc apart and are stored one by one.
__device__ __forceinline__ void store_pair(const TfGemmParams& p, tf_i64 row, tf_i64 col, float v0, float v1) {
  if (row >= p.m || col >= p.n) return;
#if TF_MUTANT == TF_MUTANT_BETA0_READS_C
  const bool read_c = true;
#else
  const bool read_c = p.beta != 0.0f;
#endif
  unsigned char* const c = static_cast<unsigned char*>(p.c);
#if SWAP_AB
#if TF_MUTANT == TF_MUTANT_SWAP_STEPS_BY_ROWS
  const tf_i64 column_step = p.m;
#else
  const tf_i64 column_step = p.ldc;
#endif
#if TF_MUTANT == TF_MUTANT_SWAP_LAST_COLUMN
  const bool second = col + 1 <= p.n;
#else
  const bool second = col + 1 < p.n;
#endif
  tf_epilogue_pair(c + (col * column_step + row) * kOutBytes, p.alpha, p.beta, v0, 0.f, false, read_c);
  if (second)
    tf_epilogue_pair(c + ((col + 1) * column_step + row) * kOutBytes, p.alpha, p.beta, v1, 0.f, false, read_c);
#else
  tf_epilogue_pair(c + (row * p.ldc + col) * kOutBytes, p.alpha, p.beta, v0, v1, col + 1 < p.n, read_c);
#endif
}

// Hands each pair of the consumer's accumulators to store(row, col, v0, v1). Fragment i of m64 block mi: n8
// block i/4, rows lane/4 (+8 for i%4 >= 2), columns 2·(lane%4) and +1.
template <class StorePair>
__device__ __forceinline__ void for_each_pair(const float (&acc)[kMi][BN / 2], Tile t, int consumer, int thread,
                                              StorePair store) {
  const int warp = thread >> 5, lane = thread & 31;
#pragma unroll
  for (int mi = 0; mi < kMi; ++mi) {
#pragma unroll
    for (int i = 0; i < BN / 2; i += 2) {
      const tf_i64 row = t.m0 + consumer * kWgM + mi * 64 + warp * 16 + (lane >> 2) + ((i & 2) ? 8 : 0);
      const tf_i64 col = t.n0 + (i >> 2) * 8 + (lane & 3) * 2;
      store(row, col, acc[mi][i], acc[mi][i + 1]);
    }
  }
}

// Epilogue from registers, element pair by element pair.
__device__ __forceinline__ void store_direct(const TfGemmParams& p, const float (&acc)[kMi][BN / 2], Tile t,
                                             int consumer, int thread) {
  for_each_pair(acc, t, consumer, thread,
                [&](tf_i64 row, tf_i64 col, float v0, float v1) { store_pair(p, row, col, v0, v1); });
}

// Split-K: the unit's unscaled fp32 partial of the consumer's rows into split `split`'s workspace slot.
__device__ __forceinline__ void store_partials(const TfGemmParams& p, const float (&acc)[kMi][BN / 2], Tile t,
                                               tf_i64 split, int consumer, int thread) {
#if TF_MUTANT == TF_MUTANT_SPLIT_SLOT_WRAPS
  const tf_i64 slot = split % (p.splits - 1);
#else
  const tf_i64 slot = split;
#endif
  for_each_pair(acc, t, consumer, thread,
                [&](tf_i64 row, tf_i64 col, float v0, float v1) { store_partial(p, slot, row, col, v0, v1); });
}

// Epilogue through shared memory and TMA (C 16-byte aligned): for each column slab (kOutSlab columns) of
// the consumer's rows, write alpha·acc into the staging slab, swizzled as the tensor map reads it (128-byte
// rows: 16-byte chunk ^= row % 8; fp8's 64-byte rows, 64-byte swizzle: chunk ^= (row / 2) % 4), then one
// thread stores it with TMA, which clips what lies outside C. With beta != 0 that thread first loads the
// slab of C into the staging rows with TMA (completing on `c_loaded`; outside C it reads zeros), and each
// thread adds beta·C from there before it writes. The slab is reused for the next column slab only once the
// previous store has read it.
__device__ __forceinline__ void store_tma(const TfGemmParams& p, const float (&acc)[kMi][BN / 2], Tile t,
                                          int consumer, int thread, unsigned char* staging,
                                          const TfTensorMap* map_c, tf_u64* c_loaded, int& c_phase) {
  const int warp = thread >> 5, lane = thread & 31;
  constexpr int kFragsPerSlab = kOutSlab / 8;  // n8 accumulator blocks in one slab: 8 (fp32: 4)
  const bool read_c = p.beta != 0.0f;
#pragma unroll
  for (int slab = 0; slab < BN / kOutSlab; ++slab) {
    const int slab_n = static_cast<int>(t.n0 + slab * kOutSlab), slab_m = static_cast<int>(t.m0 + consumer * kWgM);
#if TF_MUTANT != TF_MUTANT_STORE_NOT_DRAINED
    if (thread == 0) {
      tf_perturb(2, slab);
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
#endif
    if (read_c && thread == 0) {
      barrier_expect_bytes(c_loaded, kWgM * kOutRowBytes);
      tma_load(staging, map_c, slab_n, slab_m, c_loaded);
    }
#if TF_MUTANT != TF_MUTANT_STORE_NOT_DRAINED
    consumer_sync(consumer);
#endif
    if (read_c) {
      barrier_wait(c_loaded, c_phase);
      c_phase ^= 1;
    }
    tf_perturb(3, slab);  // some warps write the slab late
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi) {
#pragma unroll
      for (int f = 0; f < kFragsPerSlab; ++f) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int i = (slab * kFragsPerSlab + f) * 4 + half * 2;
          const int row = mi * 64 + warp * 16 + (lane >> 2) + half * 8;
          const int byte = (f * 8 + (lane & 3) * 2) * kOutBytes;  // within the staging row
          const int pattern = kOutRowBytes == 128 ? (row & 7) : ((row >> 1) & 3);
          const int swizzled = (((byte >> 4) ^ pattern) << 4) | (byte & 15);
          unsigned char* const at = staging + row * kOutRowBytes + swizzled;
          float v0 = p.alpha * acc[mi][i], v1 = p.alpha * acc[mi][i + 1];
          if (read_c) {
            v0 += p.beta * tf_load_out(at);
            v1 += p.beta * tf_load_out(at + kOutBytes);
          }
          tf_store_out_pair(at, v0, v1);
        }
      }
    }
    fence_async_shared();
#if TF_MUTANT != TF_MUTANT_STORE_BEFORE_SLAB_SYNC
    consumer_sync(consumer);
#endif
    if (thread == 0) {
      tf_perturb(4, slab);
      tma_store(map_c, slab_n, slab_m, staging);
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
  }
}

template <bool A_COL, bool B_COL>
__device__ __forceinline__ void gemm(const TfGemmParams& p, const TfTensorMap* map_a, const TfTensorMap* map_b,
                                     const TfTensorMap* map_c, int tma_store_c) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  __shared__ tf_u64 full[STAGES], empty[STAGES];
  __shared__ tf_u64 c_loaded[CONSUMERS];  // a slab of C has landed in a consumer's staging rows (beta != 0)
  // The 128-byte swizzle repeats every 1 KiB and TMA and wgmma assume tiles start on that period.
  unsigned char* const smem =
      smem_raw + ((1024 - (smem_address(smem_raw) & 1023)) & 1023);
  unsigned char* const a_ring = smem;
  unsigned char* const b_ring = smem + STAGES * kAStageBytes;
  unsigned char* const staging = b_ring + STAGES * kBStageBytes;

  // 0: producer, 1..CONSUMERS: consumers. Read from lane 0 so the compiler knows it is the same across the
  // warp and keeps what derives from it (the consumer's descriptors) in uniform registers.
  const int role = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
  const int thread = threadIdx.x % 128;
  // `empty` completes when every consumer warp of every CTA that reads the stage's data has finished with it
  // (one arrival per warp and CTA).
#if TF_MUTANT == TF_MUTANT_ARRIVAL_COUNT
  constexpr int kEmptyArrivals = 4 * CONSUMERS * kCluster + 1;
#elif TF_MUTANT == TF_MUTANT_RELEASE_LOCAL
  constexpr int kEmptyArrivals = 4 * CONSUMERS;
#else
  constexpr int kEmptyArrivals = 4 * CONSUMERS * kCluster;
#endif
#if TF_MUTANT != TF_MUTANT_INIT_IN_ROLE
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], kEmptyArrivals);
    }
    for (int c = 0; c < CONSUMERS; ++c) barrier_init(&c_loaded[c], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
#endif
#if CLUSTER_M * CLUSTER_N == 1
  __syncthreads();
  const int rank = 0, cluster = blockIdx.x, clusters = gridDim.x;
#else
  // A launch without the cluster dimension this code was built for would deadlock or corrupt memory.
  if (cluster_size() != kCluster) __trap();
  // The partner's first multicast lands on this CTA's barriers: they must be initialised cluster-wide first.
  cluster_sync();
  const int rank = cluster_rank(), cluster = cluster_index(), clusters = cluster_count();
#endif

  // Clusters walk cluster tiles (CLUSTER_M x CLUSTER_N output tiles each); each CTA computes its own tile of
  // one. Where tiles_m (tiles_n) is odd, the second CTA's tile of the last cluster row (column) lies past the
  // matrix: the CTA still loads and multicasts its half of the shared operand, which its partner needs, and
  // stores nothing.
  const tf_i64 tiles_m = tf_ceil_div(p.m, BM);
  const tf_i64 tiles_n = tf_ceil_div(p.n, BN);
  const tf_i64 tiles = tf_ceil_div(tiles_m, CLUSTER_M) * tf_ceil_div(tiles_n, CLUSTER_N);
  const tf_i64 k_tiles = tf_ceil_div(p.k, BK);
  const tf_i64 splits = p.splits > 1 ? p.splits : 1;
  const tf_i64 units = tiles * splits;

  if (role == 0) {
#if CONSUMERS == 2
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#endif
    if (thread != 0) return;
    // The half of a shared operand this CTA loads for both.
    const int a_part = CLUSTER_N == 2 ? rank : 0, b_part = CLUSTER_M == 2 ? rank : 0;
    Ring ring;
    for (tf_i64 index = cluster; index < units; index += clusters) {
      const Unit u = unit_at(index, rank, tiles_m, tiles_n, splits, k_tiles);
      const Tile t = u.tile;
      for (int kt = u.k_begin; kt < u.k_end; ++kt) {
        // A fresh barrier counts as having completed the phase before its first: the first STAGES waits pass.
        tf_perturb(5, kt);
        barrier_wait(&empty[ring.stage], ring.phase ^ 1);
        // Every CTA receives whole tiles (its own halves and its partner's): the bytes of A and B.
        barrier_expect_bytes(&full[ring.stage], kStageBytes);
        const int k0 = kt * BK;
        load_operand<!A_COL, BM, CLUSTER_N>(a_ring + ring.stage * kAStageBytes, map_a, static_cast<int>(t.m0), k0,
                                            &full[ring.stage], a_part);
        load_operand<B_COL, BN, CLUSTER_M>(b_ring + ring.stage * kBStageBytes, map_b, static_cast<int>(t.n0), k0,
                                           &full[ring.stage], b_part);
        ring.advance();
      }
    }
    return;
  }

#if CONSUMERS == 2
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
  const int consumer = role - 1;
  tf_perturb(6, 0);  // a consumer warp starts late: the producer reaches the barriers first
#if TF_MUTANT == TF_MUTANT_INIT_IN_ROLE
  if (consumer == 0 && thread == 0) {
    for (int s = 0; s < STAGES; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], kEmptyArrivals);
    }
    for (int c = 0; c < CONSUMERS; ++c) barrier_init(&c_loaded[c], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
#endif
  const bool warp_leader = (thread & 31) == 0;
  unsigned char* const my_staging = staging + consumer * kWgM * kSwizzleBytes;
  float acc[kMi][BN / 2];
#if TF_ELEM_BYTES == 1
  float part[kMi][BN / 2];
#endif
#if TF_MUTANT == TF_MUTANT_NO_ACC_INIT
#pragma unroll
  for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[mi][i] = 0.f;
#endif
  Ring ring;
  int c_phase = 0;  // of this consumer's c_loaded barrier
  tf_i64 index = cluster;
  while (index < units) {
    const Unit u = unit_at(index, rank, tiles_m, tiles_n, splits, k_tiles);
    const Tile t = u.tile;
#if TF_MUTANT == TF_MUTANT_K_TILE_MISMATCH
    const int k_end = u.k_end - u.k_begin > 1 ? u.k_end - 1 : u.k_end;
#else
    const int k_end = u.k_end;
#endif
#if TF_MUTANT != TF_MUTANT_NO_ACC_INIT
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[mi][i] = 0.f;
#endif
    int previous = -1;  // the stage whose wgmma may still be reading shared memory
    for (int kt = u.k_begin; kt < k_end; ++kt) {
      tf_perturb(7, kt);
#if TF_MUTANT == TF_MUTANT_WRONG_PARITY
      barrier_wait(&full[ring.stage], ring.phase ^ 1);
#else
      barrier_wait(&full[ring.stage], ring.phase);
#endif
#if TF_MUTANT == TF_MUTANT_RELEASE_BEFORE_MMA
      if (warp_leader) release_now(&empty[ring.stage]);
#endif
      tf_perturb(8, kt);  // between the data's arrival and the wgmma that reads it
      transpose_stage<A_COL, B_COL>(a_ring + ring.stage * kAStageBytes, b_ring + ring.stage * kBStageBytes,
                                    consumer * 128 + thread, kt);
      const tf_u32 a_stage = smem_address(a_ring + ring.stage * kAStageBytes);
      const tf_u32 b_stage = smem_address(b_ring + ring.stage * kBStageBytes);
      AFragments a;
#if TF_ELEM_BYTES == 1
      // fp8: this K tile into fresh registers, then added into the fp32 sums (see kAccumulatorSets). The
      // previous K tile's wgmma are done (waited for below), so its A registers may be rewritten.
      load_a(a, a_stage, consumer, thread);
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi) fence_accumulators(part[mi]);
      wgmma_fence();
      mma_k_tile<A_COL, B_COL>(part, a, a_stage, b_stage, consumer, true);
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi) fence_accumulators(part[mi]);
      if (warp_leader) release(&empty[ring.stage], kt);
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[mi][i] += part[mi][i];
#else
#if A_REGS
      // wgmma reads A registers until its group completes, and this tile's fragments reuse the previous
      // tile's registers: wait for that group (and release its stage) before loading them.
      wgmma_wait<0>();
      if (previous >= 0 && warp_leader) release(&empty[previous], kt);
      previous = -1;
      load_a(a, a_stage, consumer, thread);
#endif
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi) fence_accumulators(acc[mi]);
      wgmma_fence();
      mma_k_tile<A_COL, B_COL>(acc, a, a_stage, b_stage, consumer, false);
      wgmma_commit();
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi) fence_accumulators(acc[mi]);
      // Keep one group in flight: once the previous K tile's wgmma are done, its stage can be refilled.
      wgmma_wait<1>();
      if (previous >= 0 && warp_leader) release(&empty[previous], kt);
      previous = ring.stage;
#endif
      ring.advance();
    }
    wgmma_wait<0>();
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi) fence_accumulators(acc[mi]);
    if (previous >= 0 && warp_leader) release(&empty[previous], k_end);

    if (t.m0 >= p.m || t.n0 >= p.n) {
      // past the matrix (see above): nothing to store
    } else if (splits > 1) {
      store_partials(p, acc, t, u.split, consumer, thread);  // a unit with no K tiles stores zeros
#if TF_TMA_STORE
    } else if (tma_store_c && TF_MUTANT != TF_MUTANT_BETA0_READS_C) {
      store_tma(p, acc, t, consumer, thread, my_staging, map_c, &c_loaded[consumer], c_phase);
#endif
    } else {
      store_direct(p, acc, t, consumer, thread);
    }
#if TF_MUTANT == TF_MUTANT_SKIPS_ADVANCE
    // A partial tile (the last tile row or column) "is done", and the loop goes round without advancing.
    if (t.m0 + BM > p.m || t.n0 + BN > p.n) {
      if (units > 1) continue;
    }
#endif
    tf_perturb(9, static_cast<tf_u32>(index));  // before the scheduler's advance
    index += clusters;
  }
  // Shared memory must outlive the TMA stores that read it.
  if (thread == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#if CLUSTER_M * CLUSTER_N > 1 && TF_MUTANT != TF_MUTANT_NO_EXIT_SYNC
  // ... and the partner's last arrivals on this CTA's `empty` barriers.
  tf_perturb(10, 0);
  cluster_sync();
#endif
}

}  // namespace tf

// One entry point per storage order of A and B in LAYOUTS (rr: both row-major, cr: A column-major, ...); fp8
// has rc only, A_REGS rr and rc only. An N-major B tile (row-major B: rr, cr) is loaded in 128-byte slabs of
// 64 columns, so those kernels exist only where BN is whole slabs; K-major B (rc, cc) takes every N the
// instruction does.
// Each takes the problem, the TMA tensor maps of A, B and C (C's is used only when tma_store_c is 1: C's base
// and leading dimension are 16-byte aligned), as __grid_constant__ parameters TMA reads in place.
#define TF_ENTRY(name, a_col, b_col)                                                                        \
  extern "C" __global__ void __launch_bounds__(tf::kThreads, 1)                                            \
      name(const __grid_constant__ TfGemmParams p, const __grid_constant__ TfTensorMap map_a,              \
           const __grid_constant__ TfTensorMap map_b, const __grid_constant__ TfTensorMap map_c,           \
           const int tma_store_c) {                                                                         \
    tf::gemm<a_col, b_col>(p, &map_a, &map_b, &map_c, tma_store_c);                                         \
  }
// 16-bit inputs: a kernel per storage order in LAYOUTS; fp8: the RC kernel serves every order (PACK=1 transposes
// the others first); tf32: both, an RC kernel always and the others per LAYOUTS.
static_assert(LAYOUTS >= 1 && LAYOUTS <= 15, "LAYOUTS is a mask of TF_LAYOUT_RR, _RC, _CR and _CC");
static_assert(TF_ELEM_BYTES != 2 || !A_REGS || (LAYOUTS & (TF_LAYOUT_RR | TF_LAYOUT_RC)),
              "A_REGS=1 computes RR and RC only: LAYOUTS names neither");
#define TF_N_MAJOR_B (BN % 64 == 0)  // kernels that read row-major B have whole 64-column slabs
static_assert(TF_ELEM_BYTES != 2 || TF_N_MAJOR_B || (LAYOUTS & (TF_LAYOUT_RC | TF_LAYOUT_CC)),
              "BN not a multiple of 64 computes RC and CC only (K-major B): LAYOUTS names neither");
#if TF_ELEM_BYTES != 2 || (LAYOUTS & TF_LAYOUT_RC)
TF_ENTRY(tf_gemm_rc, false, true)
#endif
#if TF_ELEM_BYTES != 1
#if (LAYOUTS & TF_LAYOUT_RR) && TF_N_MAJOR_B
TF_ENTRY(tf_gemm_rr, false, false)
#endif
#if !A_REGS  // A from registers is loaded from K-major (row-major) A only
#if (LAYOUTS & TF_LAYOUT_CR) && TF_N_MAJOR_B
TF_ENTRY(tf_gemm_cr, true, false)
#endif
#if LAYOUTS & TF_LAYOUT_CC
TF_ENTRY(tf_gemm_cc, true, true)
#endif
#endif
#endif

// Split-K second pass (templates/split_k.h): C = alpha · (the partials added in a fixed order) + beta · C.
extern "C" __global__ void tf_reduce(const TfGemmParams p) {
  tf::reduce_splits(p, tf_ceil_div(p.n, 4),
                    [&](tf_i64 row, tf_i64 col, float v0, float v1) { tf::store_pair(p, row, col, v0, v1); });
}

#include "pack.h"  // tf_pack: operands TMA cannot read in place into aligned scratch (PACK=1)

#include "scale_c.h"  // tf_scale_c: the launch for K = 0
