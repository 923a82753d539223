// gemm_skinny_splitk_cluster: FP16 GEMM C[M,N] = A[M,K] * B[N,K]^T for skinny M (1..256) on
// Hopper (sm_90a), split along K across the CTAs of a thread-block cluster and reduced through
// distributed shared memory.
//
// A skinny GEMM (M = 128, N = K = 8192: 17 GFLOP but 128 MiB of B) is bound by reading B from
// HBM, and one CTA per output tile leaves most SMs idle (8192 / 256 = 32 tiles for 132 SMs).
// Here the cs CTAs of a cluster (cs = 1..8, chosen per call on the host) share one output tile
// and each sums its own contiguous slice of the K steps, so every SM streams a distinct part of
// B: 32 tiles x 4 = 128 CTAs. Each CTA is a warp-specialized TMA + wgmma pipeline (one producer
// thread, kStages mbarrier stages, 1, 2 or 4 consumer warpgroups of 64 rows each); the whole of
// M is one tile (A is at most 256 x K and stays in L2), so B is read exactly once.
//
// The reduction needs no global workspace, no second kernel and no atomics. After the main
// loop (every wgmma waited for, every stage's TMA bytes consumed) each consumer writes its fp32
// accumulators into the pipeline's shared memory, now free; a cluster barrier
// (barrier.cluster.arrive.release / wait.acquire) publishes them; CTA rank r then owns
// columns [r, r+1) * BN / cs of the tile (whole n8 blocks of the wgmma fragment) and sums, for
// those, the partials of ranks 0, 1, ..., cs-1 in that fixed order, read with mapa +
// ld.shared::cluster (its own through the same path). The order is the same on every call, so
// C is bitwise deterministic (for a given cs, which depends only on the shape and the GPU). A
// second cluster barrier keeps every CTA resident until its peers have read its partials.
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): M <= 256; A, B, C row-major with unit column
// stride; the row strides of A and B multiples of 8 elements and their bases 16-byte aligned
// (TMA: for contiguous operands K % 8 == 0); C 2-byte aligned (any pitch: C leaves through
// bounds-checked plain stores); N, K < 2^31. Ragged M, N and K are fine: the TMA zero-fills
// rows past M and N and columns past K, and the stores skip rows >= M and columns >= N.
// K = 0 writes zeros.
#include <cuda.h>          // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstdint>

#include "kiln/abi.h"

// Weak, so that the kernel also loads where the CUDA runtime in the process lacks it (kiln's
// CPU simulator); the launcher then assumes floor(SMs / cs) clusters of cs CTAs fit at once.
extern "C" __attribute__((weak)) cudaError_t CUDARTAPI cudaOccupancyMaxActiveClusters(
    int* num_clusters, const void* func, const cudaLaunchConfig_t* config);

namespace {

// ---------------------------------------------------------------------------------------
// Tunables (the values worth timing on the H200 are in the comments)
// ---------------------------------------------------------------------------------------

// Tile width for M <= 128 (one or two consumer warpgroups, wgmma m64nBNk16). 256 halves the
// L2 traffic of A relative to B and gives 32 tiles at N = 8192 (cs = 4); 128 gives 64 tiles
// (cs = 2) and half the accumulator registers. H200, 2026-12-03, kiln's benchmark at
// 128x8192x8192: 128 took 43.87-44.06 us, 256 took 47.70 us (bench/h200_2026-12-03_session13).
constexpr int kBlockNUpTo128 = 128;
// Tile width for 128 < M <= 256 (four consumer warpgroups of 64 rows: 64 accumulators per
// thread at 128). Only 128 fits the register file with 640 threads; 64 would double the tiles.
constexpr int kBlockNUpTo256 = 128;
// Upper bound on the pipeline depth; the depth used is the most stages that fit in shared
// memory up to this (M <= 64: 6, M <= 128: 6, M <= 256: 4 with the widths above). Try 3, 4.
constexpr int kMaxStages = 6;
// Largest cluster the host may pick (8 is the portable limit). Try 4, 8.
constexpr int kMaxClusterSize = 8;
// Each CTA of a cluster gets at least this many 64-wide K steps. Try 2, 4, 8.
constexpr int kMinKTilesPerCta = 2;
// What the DSMEM reduction costs, in K steps of streaming, when the host compares cluster
// sizes (cost = waves x (K steps per CTA + this)). Try 1, 2, 4.
constexpr int kReductionCostKTiles = 2;
// L2 hints on the TMA loads: B (streamed once) evict_first, A (read by every tile) evict_last.
// Try true, false.
constexpr bool kL2CacheHints = true;
// DSMEM loads (float4) one thread keeps in flight in the reduction: kReduceLoads / cs n8 blocks
// x cs ranks are loaded before any of them is summed. Try 8, 16 (32 would not fit the 96
// registers of the 640-thread instantiation).
constexpr int kReduceLoads = 16;

constexpr int kBlockK = 64;  // 64 halves = 128 bytes: one 128B-swizzle row
// 227 KiB per CTA less the 1 KiB alignment slack and the barriers.
constexpr int kSmemBudget = 227 * 1024 - 1024 - 256;

// Everything derived from (consumer warpgroups, tile width).
template <int kWarpgroupsM, int kBlockN>
struct Tile {
  static constexpr int kBlockM = 64 * kWarpgroupsM;             // the whole of M
  static constexpr int kThreads = 128 * (1 + kWarpgroupsM);     // producer warpgroup first
  static constexpr int kConsumerWarps = 4 * kWarpgroupsM;
  static constexpr int kAccum = kBlockN / 2;                    // fp32 per consumer thread
  static constexpr int kN8Blocks = kBlockN / 8;                 // fragment column blocks
  static constexpr int kBytesA = kBlockM * kBlockK * 2;
  static constexpr int kBytesB = kBlockN * kBlockK * 2;
  static constexpr int kStageBytes = kBytesA + kBytesB;
  static constexpr int kStages =
      kSmemBudget / kStageBytes < kMaxStages ? kSmemBudget / kStageBytes : kMaxStages;
  static constexpr int kBarrierOffset = kStages * kStageBytes;
  static constexpr int kSmemBytes = 1024 + kBarrierOffset + 2 * kStages * 8;
  // The reduction buffer: every consumer thread's accumulators as float4s, reusing the stages.
  static constexpr int kReductionBytes = 128 * kWarpgroupsM * kAccum * 4;

  static_assert(kBlockN == 128 || kBlockN == 256, "wgmma wrappers exist for n128 and n256");
  static_assert(kStages >= 2, "at least two pipeline stages");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");
  static_assert(kReductionBytes <= kStages * kStageBytes,
                "the reduction buffer must fit in the pipeline stages it reuses");
  static_assert(kStageBytes % 1024 == 0, "stages stay 1024-aligned for the 128B swizzle");
  static_assert(kN8Blocks >= kMaxClusterSize, "every rank owns at least one n8 block");
};

// ---------------------------------------------------------------------------------------
// PTX wrappers: mbarrier, TMA, wgmma, cluster / distributed shared memory
// ---------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// One arrival plus the number of bytes the TMA copies of this phase will deliver.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Blocks until the phase with the given parity has completed. A fresh barrier is in phase 0,
// so waiting for parity 1 returns at once: the producer's first pass over the empty ring.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
#ifdef ZOO_WAIT_TIMEOUT  // test builds only: trap instead of hanging on a protocol bug
  uint64_t start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
#endif
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
#ifdef ZOO_WAIT_TIMEOUT
    uint64_t now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (!done && now - start > 2000000000ull) __trap();  // 2 s: a deadlock
#endif
  } while (!done);
}

// An L2 eviction-priority policy for the TMA loads' cache hint.
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// A box of the tensor at (inner, outer) into this CTA's shared memory at dst, completing its
// bytes on the mbarrier bar.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int inner, int outer, uint64_t policy) {
  if constexpr (kL2CacheHints) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(bar), "l"(policy)
        : "memory");
  } else {
    (void)policy;
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(bar)
        : "memory");
  }
}

__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t size;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  return size;
}

// The two halves of a cluster barrier (every thread of every CTA of the cluster). arrive has
// release semantics: this thread's earlier shared-memory writes (and reads) are ordered before
// any access a peer makes after its matching wait, which has acquire semantics.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The address of the same shared-memory byte in CTA `rank` of the cluster.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t addr, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}

// 16 bytes of a peer's shared memory (a shared::cluster address from mapa).
__device__ __forceinline__ float4 ld_dsmem_f4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

__device__ __forceinline__ void st_shared_f4(uint32_t addr, float a, float b, float c, float d) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}

__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Shared-memory matrix descriptor for a K-major tile written by TMA with 128B swizzle: rows of
// 128 bytes, 8-row groups 1024 bytes apart (stride byte offset), leading byte offset unused for
// swizzled K-major layouts (1), swizzle mode 1 = 128B in bits 62-63; addresses in 16-byte
// units. Advancing the start address by 32 bytes steps K by 16 inside the swizzle row (the
// hardware applies the XOR to the final address; the tile base is 1024-aligned).
__device__ __forceinline__ uint64_t make_desc_k_sw128(uint32_t addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>(1) << 16;
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;
  return desc;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Ties the accumulator registers to this point so the compiler cannot move their reads above
// a wgmma.wait_group (it does not know that wgmma writes them asynchronously).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D[64x256] (+)= A[64x16] * B[256x16]^T, f16 operands from shared memory, fp32 accumulators;
// scale-d = accumulate (0 on a CTA's first K step: no zeroing of the registers).
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// D[64x128] (+)= A[64x16] * B[128x16]^T, f16 operands from shared memory, fp32 accumulators;
// scale-d = accumulate (0 on a CTA's first K step: no zeroing of the registers).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// ---------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------

// C leaves through plain stores: its base and row stride (elements).
struct PlainC {
  __half* data;
  int64_t row_stride;
};

// Rows row and row + 8, columns col and col + 1 of C: the four values of one n8 block of the
// wgmma fragment. Pairs leave as __half2 where C's layout allows, else one half at a time.
__device__ __forceinline__ void store_block(const PlainC& c, int M, int N, int row, int col,
                                            bool pair_stores, float v0, float v1, float v2,
                                            float v3) {
  if (col >= N) return;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = row + 8 * half;
    if (r >= M) continue;
    __half* out = c.data + static_cast<int64_t>(r) * c.row_stride + col;
    const float lo = half ? v2 : v0;
    const float hi = half ? v3 : v1;
    if (pair_stores && col + 1 < N) {
      *reinterpret_cast<__half2*>(out) = __floats2half2_rn(lo, hi);
    } else {
      out[0] = __float2half_rn(lo);
      if (col + 1 < N) out[1] = __float2half_rn(hi);
    }
  }
}

// Step (3) of the reduction for a cluster of kCs CTAs: this rank owns n8 blocks
// [j_begin, j_end) of the tile (contiguous, near-equal shares; every rank owns at least one
// since kCs <= kN8Blocks). The thread reduces the same (consumer, j, thread) slot of every
// CTA, so the sums land in its own fragment positions: ranks 0, 1, ..., kCs-1 in that order,
// its own slot read like the peers' (mapa to its own rank). kBatch blocks x kCs ranks are
// loaded before any sum is formed, so their DSMEM latencies overlap. kCs is a template
// argument so that the loaded partials stay in registers (compile-time indices).
template <int kCs, int kN8Blocks>
__device__ __forceinline__ void reduce_owned_blocks(uint32_t slot, uint32_t block_stride,
                                                    uint32_t rank, const PlainC& c, int M, int N,
                                                    int row, int col0, bool pair_stores) {
  constexpr int kBatch = kReduceLoads / kCs > 0 ? kReduceLoads / kCs : 1;
  const int j_begin = static_cast<int>((rank * kN8Blocks + kCs - 1) / kCs);
  const int j_end = static_cast<int>(((rank + 1) * kN8Blocks + kCs - 1) / kCs);
  for (int j0 = j_begin; j0 < j_end; j0 += kBatch) {
    float4 part[kBatch][kCs];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (j0 + b < j_end) {
#pragma unroll
        for (int p = 0; p < kCs; ++p) {
          part[b][p] = ld_dsmem_f4(map_to_rank(slot + (j0 + b) * block_stride, p));
        }
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (j0 + b < j_end) {
        float4 sum = part[b][0];
#pragma unroll
        for (int p = 1; p < kCs; ++p) {
          sum.x += part[b][p].x;
          sum.y += part[b][p].y;
          sum.z += part[b][p].z;
          sum.w += part[b][p].w;
        }
        store_block(c, M, N, row, col0 + 8 * (j0 + b), pair_stores, sum.x, sum.y, sum.z, sum.w);
      }
    }
  }
}

// One CTA: columns [tile_n * BN, +BN) of C, all of M, K steps [kt_begin, kt_end) of its rank.
// Warpgroup 0 is the producer (one thread issues the TMA loads); warpgroups 1..kWarpgroupsM
// are consumers, consumer w computing rows 64w..64w+63 with wgmma m64nBNk16.
template <int kWarpgroupsM, int kBlockN>
__global__ void __launch_bounds__(Tile<kWarpgroupsM, kBlockN>::kThreads, 1)
    gemm_skinny_splitk_kernel(const __grid_constant__ CUtensorMap map_a,
                              const __grid_constant__ CUtensorMap map_b, const PlainC c, int M,
                              int N, int K) {
  using T = Tile<kWarpgroupsM, kBlockN>;
  extern __shared__ uint8_t smem_raw[];
  // Round the base up to 1024 bytes (the swizzle pattern repeats every 8 x 128 bytes).
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const uint32_t smem_base = smem_addr(smem);
  const uint32_t full_bar = smem_base + T::kBarrierOffset;  // kStages x 8 bytes
  const uint32_t empty_bar = full_bar + T::kStages * 8;     // kStages x 8 bytes

  const int warpgroup = threadIdx.x / 128;
  const uint32_t cs = cluster_size();  // CTAs splitting this tile's K (1: no reduction)
  const uint32_t rank = cluster_rank();
  const int tile_n = static_cast<int>(blockIdx.x / cs);
  const int k_tiles = (K + kBlockK - 1) / kBlockK;
  // The host keeps cs <= k_tiles, so every rank gets at least one K step.
  const int kt_begin = static_cast<int>(static_cast<int64_t>(rank) * k_tiles / cs);
  const int kt_end = static_cast<int>(static_cast<int64_t>(rank + 1) * k_tiles / cs);

  if (threadIdx.x == 0) {
    for (int s = 0; s < T::kStages; ++s) {
      mbar_init(full_bar + 8 * s, 1);                     // the producer's arrive.expect_tx
      mbar_init(empty_bar + 8 * s, T::kConsumerWarps);    // lane 0 of every consumer warp
    }
    // Make the initialized barriers visible to the async proxy (the TMA unit).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  // No peer touches this CTA's shared memory before the first cluster barrier below, so the
  // start needs only the CTA's own barrier.
  __syncthreads();

  // A consumer thread's place in the wgmma fragment (meaningless for the producer warpgroup)
  // and its float4 slots in the reduction buffer: (consumer, n8 block j, thread) at
  // consecutive 16 bytes for consecutive threads, so both the local writes and the peers'
  // 16-byte reads are free of bank conflicts.
  const int consumer = warpgroup - 1;  // which 64-row block of the tile
  const int lane = threadIdx.x % 32;
  const int own_row = consumer * 64 + (threadIdx.x / 32) % 4 * 16 + lane / 4;  // and + 8
  const int own_col0 = tile_n * kBlockN + 2 * (lane % 4);                    // + 8j, block j
  const uint32_t slot =
      smem_base + static_cast<uint32_t>((consumer * T::kN8Blocks * 128 + threadIdx.x % 128) * 16);
  constexpr uint32_t kBlockStride = 128 * 16;
  const bool pair_stores =
      c.row_stride % 2 == 0 && reinterpret_cast<uintptr_t>(c.data) % 4 == 0;

  // No setmaxnreg: one CTA per SM, and the even split of the register file (at most 255, 168
  // and 96 per thread for 256, 384 and 640 threads) already holds each instantiation's
  // consumers without spills. It would also cost the code after the role branches (the
  // reduction): ptxas compiles code that both roles reach within the producer's smaller count.
  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    if (threadIdx.x == 0) {
      tma_prefetch_map(&map_a);
      tma_prefetch_map(&map_b);
      const uint64_t keep = kL2CacheHints ? policy_evict_last() : 0;     // A: every tile
      const uint64_t stream = kL2CacheHints ? policy_evict_first() : 0;  // B: read once
      int stage = 0;
      uint32_t phase = 0;
      for (int kt = kt_begin; kt < kt_end; ++kt) {
        mbar_wait(empty_bar + 8 * stage, phase ^ 1);
        const uint32_t bar = full_bar + 8 * stage;
        const uint32_t dst = smem_base + stage * T::kStageBytes;
        // The full box sizes, even where a box reaches past M, N or K (TMA counts the zeros).
        mbar_arrive_expect_tx(bar, T::kStageBytes);
        tma_load_2d(dst, &map_a, bar, kt * kBlockK, 0, keep);
        tma_load_2d(dst + T::kBytesA, &map_b, bar, kt * kBlockK, tile_n * kBlockN, stream);
        if (++stage == T::kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    __syncwarp();
  } else {
    // ---------------------------------------------------------------- consumers

    float acc[T::kAccum];

    // Main loop: one wgmma group per K step, at most two groups in flight, so the stage of
    // step kt-1 is released as soon as the group of kt has been issued.
    int stage = 0;
    uint32_t phase = 0;
    int prev_stage = -1;
    for (int kt = kt_begin; kt < kt_end; ++kt) {
      mbar_wait(full_bar + 8 * stage, phase);
      const uint32_t a_tile = smem_base + stage * T::kStageBytes + consumer * 64 * 128;
      const uint32_t b_tile = smem_base + stage * T::kStageBytes + T::kBytesA;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk) {
        const uint64_t da = make_desc_k_sw128(a_tile + kk * 32);
        const uint64_t db = make_desc_k_sw128(b_tile + kk * 32);
        const uint32_t accumulate = (kt > kt_begin || kk > 0) ? 1u : 0u;
        if constexpr (kBlockN == 256) {
          wgmma_m64n256k16(acc, da, db, accumulate);
        } else {
          wgmma_m64n128k16(acc, da, db, accumulate);
        }
      }
      wgmma_commit();
      wgmma_wait<1>();
      if (prev_stage >= 0 && lane == 0) mbar_arrive(empty_bar + 8 * prev_stage);
      __syncwarp();
      prev_stage = stage;
      if (++stage == T::kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    wgmma_wait<0>();
    fence_accumulators(acc);
    // The last stage needs no release: the producer issues nothing more.

    if (cs == 1) {  // the whole K: straight from the registers to C
#pragma unroll
      for (int j = 0; j < T::kN8Blocks; ++j) {
        store_block(c, M, N, own_row, own_col0 + 8 * j, pair_stores, acc[4 * j], acc[4 * j + 1],
                    acc[4 * j + 2], acc[4 * j + 3]);
      }
    } else {
      // ---- The cluster reduction through distributed shared memory.
      // (1) The stages become the reduction buffer. This warpgroup waited for every full
      //     barrier (all TMA bytes landed) and for its own wgmmas; the named barrier makes
      //     sure the other consumer warpgroups' wgmmas are done reading the stages too.
      named_barrier_sync(1, 128 * kWarpgroupsM);
#pragma unroll
      for (int j = 0; j < T::kN8Blocks; ++j) {
        st_shared_f4(slot + j * kBlockStride, acc[4 * j], acc[4 * j + 1], acc[4 * j + 2],
                     acc[4 * j + 3]);
      }
    }
  }
  if (cs == 1) return;  // the same for every thread of the cluster

  // Both cluster barriers are met by every thread of every CTA, producer warpgroup included,
  // outside the role branches.
  // (2) Publish: after this barrier every CTA's partials are in its shared memory.
  cluster_arrive();
  cluster_wait();
  if (warpgroup != 0) {
    // (3) Each rank reduces and stores its share of the tile's columns.
    static_assert(kMaxClusterSize <= 8, "reduce_owned_blocks is instantiated for cs <= 8");
    switch (cs) {
#define SKINNY_REDUCE_CASE(n)                                                              \
  case n:                                                                                  \
    reduce_owned_blocks<n, T::kN8Blocks>(slot, kBlockStride, rank, c, M, N, own_row, own_col0, \
                                         pair_stores);                                     \
    break;
      SKINNY_REDUCE_CASE(2)
      SKINNY_REDUCE_CASE(3)
      SKINNY_REDUCE_CASE(4)
      SKINNY_REDUCE_CASE(5)
      SKINNY_REDUCE_CASE(6)
      SKINNY_REDUCE_CASE(7)
      SKINNY_REDUCE_CASE(8)
#undef SKINNY_REDUCE_CASE
      default:
        break;  // the host never launches a larger cluster (kMaxClusterSize)
    }
  }
  // (4) No CTA may exit (its shared memory could be handed to a new CTA) while a peer still
  //     reads it: arrive once this thread's remote reads are done, wait before exiting.
  cluster_arrive();
  cluster_wait();
}

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

// cuTensorMapEncodeTiled from the driver, found through the runtime so that libcuda need not
// be linked. Looked up once; the pointer stays valid for the life of the process.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encoder = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

// A row-major [rows, cols] fp16 matrix with the given row stride (elements), in boxes of
// box_rows x 64 columns (128 bytes, the 128B swizzle span). Loads read elements outside the
// matrix as zero.
bool encode_fp16_matrix(CUtensorMap* map, const void* base, int64_t rows, int64_t cols,
                        int64_t row_stride, uint32_t box_rows) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * 2};  // bytes
  const cuuint32_t box[2] = {64, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(base), dims, strides,
                box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool is_fp16_matrix(const kiln_tensor& t) {
  return t.dtype == KILN_F16 && t.rank == 2 && t.shape[0] >= 0 && t.shape[1] >= 0;
}

// Row-major with unit column stride; the row stride may exceed the row length.
bool is_row_major(const kiln_tensor& t, int64_t cols) {
  return t.strides[1] == 1 && t.strides[0] >= cols;
}

// TMA: the global base 16-byte aligned and the row pitch a multiple of 16 bytes.
bool tma_compatible(const kiln_tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.strides[0] % 8 == 0;
}

// Per-device facts, queried once per process and device (devices 0..kCachedDevices-1; any
// other device is queried on every call). 0 means "not yet known".
constexpr int kCachedDevices = 64;

int sm_count_of(int device) {
  static std::atomic<int> cache[kCachedDevices] = {};
  if (device < kCachedDevices) {
    if (const int known = cache[device].load(std::memory_order_relaxed)) return known;
  }
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      sms <= 0) {
    return 0;
  }
  if (device < kCachedDevices) cache[device].store(sms, std::memory_order_relaxed);
  return sms;
}

// How many clusters of cs CTAs of this kernel the GPU holds at once (clusters sit in one GPC,
// so this can be fewer than SMs / cs); 0: such a cluster cannot be launched at all. Without
// cudaOccupancyMaxActiveClusters (or if the query fails): SMs / cs.
template <int kWarpgroupsM, int kBlockN>
int active_clusters(int device, int sm_count, int cs) {
  using T = Tile<kWarpgroupsM, kBlockN>;
  // Stored as answer + 1, so that 0 still means "not yet known".
  static std::atomic<int> cache[kCachedDevices][kMaxClusterSize + 1] = {};
  if (device < kCachedDevices) {
    if (const int known = cache[device][cs].load(std::memory_order_relaxed)) return known - 1;
  }
  int active = sm_count / cs;
  cudaError_t (*query)(int*, const void*, const cudaLaunchConfig_t*) =
      &cudaOccupancyMaxActiveClusters;
  if (query != nullptr) {  // weak: absent under the CPU simulator
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(cs);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(cs * (sm_count / cs)));
    config.blockDim = dim3(T::kThreads);
    config.dynamicSmemBytes = T::kSmemBytes;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int n = 0;
    if (query(&n, reinterpret_cast<const void*>(gemm_skinny_splitk_kernel<kWarpgroupsM, kBlockN>),
              &config) == cudaSuccess) {
      active = n;
    } else {
      (void)cudaGetLastError();  // a failed query must not fail the launch check below
    }
  }
  if (active < 0) active = 0;
  if (cs == 1 && active < 1) active = 1;  // one CTA per SM always fits (kSmemBytes <= 227 KiB)
  if (device < kCachedDevices) cache[device][cs].store(active + 1, std::memory_order_relaxed);
  return active;
}

// The cluster size: the cs in 1..kMaxClusterSize (each CTA keeping >= kMinKTilesPerCta K steps)
// with the least modelled time, waves x (K steps per CTA + the reduction's cost); ties go to
// the smaller cs. At 128x8192x8192 (32 tiles of 256, 128 K steps) that is cs = 4: 128 CTAs,
// one wave.
template <int kWarpgroupsM, int kBlockN>
int choose_cluster_size(int device, int sm_count, int64_t tiles, int64_t k_tiles) {
  int best = 1;
  int64_t best_cost = INT64_MAX;
  for (int cs = 1; cs <= kMaxClusterSize; ++cs) {
    if (cs > 1 && static_cast<int64_t>(cs) * kMinKTilesPerCta > k_tiles) break;
    const int64_t active = active_clusters<kWarpgroupsM, kBlockN>(device, sm_count, cs);
    if (active == 0) continue;  // this cluster size does not fit on the GPU
    const int64_t waves = (tiles + active - 1) / active;
    const int64_t cost = waves * ((k_tiles + cs - 1) / cs + (cs > 1 ? kReductionCostKTiles : 0));
    if (cost < best_cost) {
      best_cost = cost;
      best = cs;
    }
  }
  return best;
}

template <int kWarpgroupsM, int kBlockN>
int launch(const kiln_tensor& a, const kiln_tensor& b, const kiln_tensor& c, int M, int N, int K,
           cudaStream_t stream) {
  using T = Tile<kWarpgroupsM, kBlockN>;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return KILN_ERR_LAUNCH;
  const int sm_count = sm_count_of(device);
  if (sm_count <= 0) return KILN_ERR_LAUNCH;
  auto* kernel = gemm_skinny_splitk_kernel<kWarpgroupsM, kBlockN>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes) !=
      cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int64_t tiles = (static_cast<int64_t>(N) + kBlockN - 1) / kBlockN;
  const int64_t k_tiles = (static_cast<int64_t>(K) + kBlockK - 1) / kBlockK;
  const int cs = choose_cluster_size<kWarpgroupsM, kBlockN>(device, sm_count, tiles, k_tiles);
  if (tiles * cs > INT_MAX) return KILN_ERR_UNSUPPORTED;

  CUtensorMap map_a, map_b;
  if (!encode_fp16_matrix(&map_a, a.data, M, K, a.strides[0], T::kBlockM) ||
      !encode_fp16_matrix(&map_b, b.data, N, K, b.strides[0], kBlockN)) {
    return KILN_ERR_LAUNCH;
  }
  const PlainC plain_c{static_cast<__half*>(c.data), c.strides[0]};

  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cs);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(tiles * cs));  // cluster t: tile t, ranks 0..cs-1
  config.blockDim = dim3(T::kThreads);
  config.dynamicSmemBytes = T::kSmemBytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  if (cudaLaunchKernelEx(&config, kernel, map_a, map_b, plain_c, M, N, K) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];  // A[M,K]
  const kiln_tensor& b = tensors[1];  // B[N,K]
  const kiln_tensor& c = tensors[2];  // C[M,N]
  if (!is_fp16_matrix(a) || !is_fp16_matrix(b) || !is_fp16_matrix(c)) return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N) return KILN_ERR_BAD_ARGUMENT;
  if (M > 256) return KILN_ERR_UNSUPPORTED;  // a skinny-M kernel: the whole of M is one tile
  if (!is_row_major(a, K) || !is_row_major(b, K) || !is_row_major(c, N))
    return KILN_ERR_UNSUPPORTED;
  if (M == 0 || N == 0) return KILN_OK;
  if (N >= INT_MAX || K >= INT_MAX) return KILN_ERR_UNSUPPORTED;
  if (reinterpret_cast<uintptr_t>(c.data) % 2 != 0) return KILN_ERR_UNSUPPORTED;
  if (K == 0) {  // an empty sum: C = 0
    return cudaMemset2DAsync(c.data, static_cast<size_t>(c.strides[0]) * 2, 0,
                             static_cast<size_t>(N) * 2, static_cast<size_t>(M),
                             stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (!tma_compatible(a) || !tma_compatible(b)) return KILN_ERR_UNSUPPORTED;

  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  if (M <= 64) return launch<1, kBlockNUpTo128>(a, b, c, m, n, k, stream);
  if (M <= 128) return launch<2, kBlockNUpTo128>(a, b, c, m, n, k, stream);
  return launch<4, kBlockNUpTo256>(a, b, c, m, n, k, stream);
}
