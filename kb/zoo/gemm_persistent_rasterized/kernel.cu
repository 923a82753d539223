// gemm_persistent_rasterized: FP16 GEMM C[M,N] = A[M,K] * B[N,K]^T on Hopper (sm_90a).
//
// gemm_tma_store_epilogue (a persistent, warp-specialized 128x256 wgmma pipeline whose
// epilogue leaves through TMA stores) with one change: the tile scheduler. The order in which
// the persistent CTAs visit output tiles is chosen on the host from the problem's shape:
//   - a raster direction: bands of tile rows walked down then right (along M), or bands of
//     tile columns walked right then down (along N);
//   - a band width (swizzle size) of 1, 2, 4, 8 or 16 tiles,
// picking the pair whose first wave (the tiles resident at once, one per SM) touches the
// fewest A and B rows, i.e. whose operands are re-read from L2 rather than HBM. The
// schedule is static: CTA b takes tiles b, b + gridDim.x, ... of that order; producer and
// consumers walk the identical sequence.
//
// A C that the TMA cannot store to (row pitch not a multiple of 16 bytes, e.g. an odd N, or a
// base not 16-byte aligned) takes the kernel's other instantiation, kTmaStoreC = false: the
// chunks are staged the same way, then the consumer's threads copy them out with bounds-checked
// plain stores.
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): A, B, C row-major with unit column stride; the
// row strides of A and B multiples of 8 elements and their base addresses 16-byte aligned (TMA
// loads); M, N, K < 2^31. Any M, N, K and any C pitch otherwise (ragged tiles are zero-filled
// by the loads and clipped by the store; K = 0 writes zeros).
#include <cuda.h>          // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "kiln/abi.h"

namespace {

// ---------------------------------------------------------------------------------------
// Tiling
// ---------------------------------------------------------------------------------------

constexpr int kBlockM = 128;            // two consumer warpgroups x 64 rows
constexpr int kBlockN = 256;            // wgmma m64n256k16
constexpr int kBlockK = 64;             // 64 halves = 128 bytes: one 128B-swizzle row
constexpr int kConsumerWarpgroups = 2;
constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
constexpr int kConsumerWarps = 4 * kConsumerWarpgroups;  // arrivals that free a stage
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;      // 128*40 + 256*232 <= 64K registers

constexpr int kStages = 4;
constexpr int kBytesA = kBlockM * kBlockK * 2;                 // 16 KB
constexpr int kBytesB = kBlockN * kBlockK * 2;                 // 32 KB
constexpr int kStageBytes = kBytesA + kBytesB;
// Staging: per consumer two 64x64 fp16 tiles (8 KB each, 1024-aligned: the TMA store reads
// them with the 128B swizzle), so one can be filled while the other's store is in flight.
constexpr int kStagingBytes = 64 * 64 * 2;
constexpr int kStagingBuffers = 2;
constexpr int kStagingOffset = kStages * kStageBytes;
constexpr int kBarrierOffset = kStagingOffset + kConsumerWarpgroups * kStagingBuffers * kStagingBytes;
// +1024: the dynamic shared memory base is rounded up to the 1024-byte alignment that the
// 128B swizzle pattern (8 rows x 128 bytes) needs.
constexpr int kSmemBytes = 1024 + kBarrierOffset + 2 * kStages * 8;
static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");
static_assert((kBlockN / 64) % kStagingBuffers == 0,
              "each tile must leave the staging buffers in the order it found them");

// ---------------------------------------------------------------------------------------
// PTX wrappers: mbarrier, TMA, wgmma, stmatrix, register reallocation
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

// Blocks until the phase with the given parity has completed. A fresh barrier is in
// phase 0, so waiting for parity 1 returns at once: that is how the producer's first
// pass over the (initially empty) ring proceeds without any consumer arrival.
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

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Shared-memory matrix descriptor for a K-major tile written by TMA with 128B swizzle:
// rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte offset), leading byte
// offset unused for swizzled K-major layouts (set to 1), swizzle mode 1 = 128B in bits
// 62-63. Addresses and offsets are stored in 16-byte units. Advancing the start address
// by 32 bytes steps K by 16 halves inside the swizzle row: the hardware applies the XOR
// pattern to the final address, so this is valid as long as the tile base is 1024-aligned.
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

// Ties the accumulator registers to this point so the compiler cannot move their reads
// above a wgmma.wait_group (it does not know that wgmma writes them asynchronously).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}


// D[64x256] (+)= A[64x16] * B[256x16]^T, f16 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n256k16_f16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
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
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);  // lo -> lower 16 bits (lower column)
  return *reinterpret_cast<const uint32_t*>(&h);
}

// TMA store of one box from shared memory; the bytes are read asynchronously. Elements of the
// box outside the tensor are not written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int inner,
                                             int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(inner), "r"(outer), "r"(src)
               : "memory");
}

__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Until at most kPending committed bulk groups still read their shared-memory source.
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}

// Until every committed bulk group has completed (its global writes done).
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// Orders this thread's generic-proxy shared-memory writes before later async-proxy accesses
// (the TMA store that reads them).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---------------------------------------------------------------------------------------
// Plain-store epilogue, for a C the TMA cannot store to (pitch not a multiple of 16 bytes)
// ---------------------------------------------------------------------------------------

// Where the epilogue sends C: a tensor map for TMA stores, else the base and row stride
// (elements) for plain stores. Only the kernel's third parameter differs, so the TMA
// instantiation keeps the signature, and the code, of the TMA-only kernel.
struct PlainC {
  __half* data;
  int64_t row_stride;
};
template <bool kTmaStoreC>
using CDestination = std::conditional_t<kTmaStoreC, CUtensorMap, PlainC>;

// The consumer's 128 threads copy one staged 64x64 chunk (in the 128B-swizzled layout the TMA
// store would read) to C at (row0, col0), clipped to M x N. A 16-byte unit leaves in one vector
// store where it lies inside C at a 16-byte-aligned address, else element by element.
__device__ __forceinline__ void store_chunk_plain(const uint8_t* chunk, const PlainC& c, int M,
                                                  int N, int row0, int col0, int tid) {
#pragma unroll
  for (int pass = 0; pass < 64 * 8 / 128; ++pass) {
    const int r = (tid + pass * 128) / 8;  // chunk row
    const int u = (tid + pass * 128) % 8;  // 16-byte unit: columns 8u..8u+7
    const int row = row0 + r;
    const int col = col0 + u * 8;
    if (row >= M || col >= N) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(chunk + r * 128 + ((u ^ (r & 7)) << 4));
    __half* dst = c.data + row * c.row_stride + col;
    if (col + 8 <= N && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
      *reinterpret_cast<uint4*>(dst) = v;
    } else {
      const __half* h = reinterpret_cast<const __half*>(&v);
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (col + e < N) dst[e] = h[e];
      }
    }
  }
}


// ---------------------------------------------------------------------------------------
// Tile scheduler: a static persistent schedule over a raster chosen on the host.
// The tile grid is seen as P x Q tiles, P the banded dimension (tile rows when along_n == 0,
// tile columns when along_n == 1). Tile t walks down a band of `band` lines of P before
// stepping one line of Q, so a run of consecutive tiles (one wave of CTAs) covers a
// band x (wave / band) rectangle of the output: band A row blocks and wave / band B column
// blocks when along M.
// ---------------------------------------------------------------------------------------

struct Raster {
  int tiles_m;
  int tiles_n;
  int band;     // lines of the banded dimension per band (the swizzle size)
  int along_n;  // 0: bands of tile rows (walk M first); 1: bands of tile columns (walk N first)

  __device__ __forceinline__ int count() const { return tiles_m * tiles_n; }

  __device__ __forceinline__ void coords(int t, int& tile_m, int& tile_n) const {
    const int p_count = along_n ? tiles_n : tiles_m;  // the banded dimension
    const int q_count = along_n ? tiles_m : tiles_n;
    const int per_band = band * q_count;
    const int b = t / per_band;
    const int first_p = b * band;
    const int band_lines = min(p_count - first_p, band);
    const int r = t - b * per_band;
    const int p = first_p + r % band_lines;
    const int q = r / band_lines;
    tile_m = along_n ? q : p;
    tile_n = along_n ? p : q;
  }
};

// ---------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------

// kTmaStoreC: C leaves through TMA stores, else through plain stores (store_chunk_plain).
template <bool kTmaStoreC>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_rasterized_kernel(const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b,
                          const __grid_constant__ CDestination<kTmaStoreC> c_dst, int M, int N,
                          int K,
                           int band, int along_n) {
  extern __shared__ uint8_t smem_raw[];
  // Round the base up to 1024 bytes (the swizzle pattern repeats every 8 x 128 bytes).
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const uint32_t smem_base = smem_addr(smem);
  const uint32_t full_bar = smem_base + kBarrierOffset;  // kStages x 8 bytes
  const uint32_t empty_bar = full_bar + kStages * 8;     // kStages x 8 bytes

  const int warpgroup = threadIdx.x / 128;
  const Raster raster{(M + kBlockM - 1) / kBlockM, (N + kBlockN - 1) / kBlockN, band, along_n};
  const int k_tiles = (K + kBlockK - 1) / kBlockK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bar + 8 * s, 1);                // the producer's arrive.expect_tx
      mbar_init(empty_bar + 8 * s, kConsumerWarps);  // one arrival per consumer warp
    }
    // Make the initialized barriers visible to the async proxy (the TMA unit).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
    if (threadIdx.x == 0) {
      tma_prefetch_map(&map_a);
      tma_prefetch_map(&map_b);
      int stage = 0;
      uint32_t phase = 0;
      for (int t = blockIdx.x; t < raster.count(); t += gridDim.x) {
        int tile_m, tile_n;
        raster.coords(t, tile_m, tile_n);
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(empty_bar + 8 * stage, phase ^ 1);
          const uint32_t bar = full_bar + 8 * stage;
          const uint32_t dst = smem_base + stage * kStageBytes;
          mbar_arrive_expect_tx(bar, kStageBytes);
          tma_load_2d(dst, &map_a, bar, kt * kBlockK, tile_m * kBlockM);
          tma_load_2d(dst + kBytesA, &map_b, bar, kt * kBlockK, tile_n * kBlockN);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
    const int consumer = warpgroup - 1;       // which 64-row half of the tile
    const int lane = threadIdx.x % 32;
    const int warp = (threadIdx.x / 32) % 4;  // warp within the warpgroup: rows 16*warp..
    const int tid = threadIdx.x % 128;
    const bool store_thread = tid == 0;       // issues this consumer's TMA stores
    const uint32_t staging =
        smem_base + kStagingOffset + consumer * kStagingBuffers * kStagingBytes;
    if constexpr (kTmaStoreC) {
      if (store_thread) tma_prefetch_map(&c_dst);
    }

    float acc[kBlockN / 2];
#pragma unroll
    for (int i = 0; i < kBlockN / 2; ++i) acc[i] = 0.f;

    int stage = 0;
    uint32_t phase = 0;
    for (int t = blockIdx.x; t < raster.count(); t += gridDim.x) {
      int tile_m, tile_n;
      raster.coords(t, tile_m, tile_n);

      // A consumer whose 64 rows all lie past M (small M) skips the math and the store but
      // still takes part in the stage hand-over.
      const bool active = tile_m * kBlockM + consumer * 64 < M;
      if (!active) {
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(full_bar + 8 * stage, phase);
          if (lane == 0) mbar_arrive(empty_bar + 8 * stage);
          __syncwarp();
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        continue;
      }

      // Main loop: one wgmma group per K tile, at most two groups in flight, so the stage of
      // K tile kt-1 is released as soon as the group of kt has been issued.
      int prev_stage = -1;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(full_bar + 8 * stage, phase);
        const uint32_t a_tile = smem_base + stage * kStageBytes + consumer * 64 * 128;
        const uint32_t b_tile = smem_base + stage * kStageBytes + kBytesA;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / 16; ++kk) {
          wgmma_m64n256k16_f16(acc, make_desc_k_sw128(a_tile + kk * 32),
                               make_desc_k_sw128(b_tile + kk * 32), (kt > 0 || kk > 0) ? 1u : 0u);
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (prev_stage >= 0 && lane == 0) mbar_arrive(empty_bar + 8 * prev_stage);
        __syncwarp();
        prev_stage = stage;
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (prev_stage >= 0 && lane == 0) mbar_arrive(empty_bar + 8 * prev_stage);
      __syncwarp();

      // Epilogue: 64-column chunks through the two staging buffers, each chunk leaving by a
      // TMA store while the next chunk is written.
      const int row0 = tile_m * kBlockM + consumer * 64;
      const int col0 = tile_n * kBlockN;
#pragma unroll
      for (int chunk = 0; chunk < kBlockN / 64; ++chunk) {
        const uint32_t buffer = staging + (chunk % kStagingBuffers) * kStagingBytes;
        // (a) The store that last read this buffer (two chunks ago, possibly in the previous
        //     tile) must have finished reading it: at most one younger store may be pending.
        //     Plain stores: each thread passes this barrier only after its copy of the
        //     previous chunk, so every copy out of this buffer two chunks ago is done.
        if constexpr (kTmaStoreC) {
          if (store_thread) bulk_wait_read<kStagingBuffers - 1>();
        }
        named_barrier_sync(1 + consumer, 128);
        // (b) stmatrix: per call four 8x8 blocks = rows 16*warp..+15, 16 columns. Lanes
        //     8i..8i+7 give the row addresses of block i; register i of every lane holds that
        //     lane's two elements of block i (the mma accumulator layout). The 16-byte unit u
        //     of row r goes to unit u ^ (r % 8): the TMA's 128B swizzle.
#pragma unroll
        for (int pair = 0; pair < 4; ++pair) {
          const int j = chunk * 8 + pair * 2;  // first of two n8 column blocks
          const uint32_t r0 = pack_half2(acc[4 * j + 0], acc[4 * j + 1]);
          const uint32_t r1 = pack_half2(acc[4 * j + 2], acc[4 * j + 3]);
          const uint32_t r2 = pack_half2(acc[4 * j + 4], acc[4 * j + 5]);
          const uint32_t r3 = pack_half2(acc[4 * j + 6], acc[4 * j + 7]);
          const int block = lane / 8;
          const int row = warp * 16 + (block & 1) * 8 + lane % 8;
          const int unit = pair * 2 + (block >> 1);  // 16-byte unit within the 128-byte row
          stmatrix_x4(buffer + row * 128 + ((unit ^ (row & 7)) << 4), r0, r1, r2, r3);
        }
        // (c) Generic-proxy writes, then the async proxy reads them: fence, meet, store.
        //     Plain stores: meet (all 64 rows written), then every thread copies its part.
        if constexpr (kTmaStoreC) {
          fence_proxy_async_shared();
          named_barrier_sync(1 + consumer, 128);
          if (store_thread) {
            tma_store_2d(&c_dst, buffer, col0 + chunk * 64, row0);
            bulk_commit();
          }
        } else {
          named_barrier_sync(1 + consumer, 128);
          store_chunk_plain(smem + (buffer - smem_base), c_dst, M, N, row0, col0 + chunk * 64, tid);
        }
      }
    }
    // The stores must have read shared memory before the CTA exits (and completed, so the
    // kernel's writes are all issued): wait for all of them.
    if constexpr (kTmaStoreC) {
      if (store_thread) bulk_wait_all();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

// cuTensorMapEncodeTiled from the driver, found through the runtime so that libcuda need
// not be linked. Looked up once; the pointer stays valid for the life of the process.
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
// matrix as zero; stores skip them.
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

// The raster for a wave of `wave` CTAs: along M or N, band 1..16, minimizing the operand rows
// the wave's tiles touch (A rows x 1 + B rows x 1, both K-long: what the wave reads from L2,
// and from HBM once). A wave longer than a band spills into the next band, whose rows count
// too.
struct RasterChoice {
  int band;
  int along_n;
};

int64_t wave_footprint(int64_t p_count, int64_t q_count, int64_t band, int64_t wave,
                       int64_t p_rows, int64_t q_rows) {
  if (band > p_count) band = p_count;  // the scheduler's band is never wider than the grid
  const int64_t per_band = band * q_count;
  int64_t p_lines, q_lines;
  if (wave <= per_band) {
    p_lines = wave < band ? wave : band;
    q_lines = (wave + band - 1) / band;
  } else {
    const int64_t bands = (wave + per_band - 1) / per_band;
    p_lines = bands * band < p_count ? bands * band : p_count;
    q_lines = q_count;
  }
  return p_lines * p_rows + q_lines * q_rows;
}

RasterChoice choose_raster(int64_t tiles_m, int64_t tiles_n, int64_t wave) {
  RasterChoice best{1, 0};
  int64_t best_cost = INT64_MAX;
  for (int along_n = 0; along_n < 2; ++along_n) {
    const int64_t p_count = along_n ? tiles_n : tiles_m;
    const int64_t q_count = along_n ? tiles_m : tiles_n;
    const int64_t p_rows = along_n ? kBlockN : kBlockM;  // operand rows per banded line
    const int64_t q_rows = along_n ? kBlockM : kBlockN;
    for (int band = 1; band <= 16; band *= 2) {
      if (band > 1 && band / 2 >= p_count) break;  // wider bands than the dimension: same order
      const int64_t cost = wave_footprint(p_count, q_count, band, wave, p_rows, q_rows);
      if (cost < best_cost) {
        best_cost = cost;
        best = {band, along_n};
      }
    }
  }
  return best;
}

// Sets one instantiation's shared-memory limit and launches it.
template <bool kTmaStoreC, typename... Args>
int launch(int grid, cudaStream_t stream, const Args&... args) {
  if (cudaFuncSetAttribute(gemm_rasterized_kernel<kTmaStoreC>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  gemm_rasterized_kernel<kTmaStoreC><<<grid, kThreads, kSmemBytes, stream>>>(args...);
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
  if (!is_row_major(a, K) || !is_row_major(b, K) || !is_row_major(c, N))
    return KILN_ERR_UNSUPPORTED;
  if (M == 0 || N == 0) return KILN_OK;
  if (M >= INT_MAX || N >= INT_MAX || K >= INT_MAX) return KILN_ERR_UNSUPPORTED;
  if (K == 0) {  // an empty sum: C = 0
    return cudaMemset2DAsync(c.data, static_cast<size_t>(c.strides[0]) * 2, 0,
                             static_cast<size_t>(N) * 2, static_cast<size_t>(M),
                             stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (!tma_compatible(a) || !tma_compatible(b)) return KILN_ERR_UNSUPPORTED;

  int device = 0;
  int sm_count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  // The TMA store needs C's pitch in 16-byte units too (N % 8 == 0 for a contiguous C);
  // otherwise C takes plain stores, which need only fp16 alignment.
  const bool tma_store_c = tma_compatible(c);
  if (reinterpret_cast<uintptr_t>(c.data) % 2 != 0) return KILN_ERR_UNSUPPORTED;
  CUtensorMap map_a, map_b, map_c;
  if (!encode_fp16_matrix(&map_a, a.data, M, K, a.strides[0], kBlockM) ||
      !encode_fp16_matrix(&map_b, b.data, N, K, b.strides[0], kBlockN) ||
      (tma_store_c && !encode_fp16_matrix(&map_c, c.data, M, N, c.strides[0], 64))) {
    return KILN_ERR_LAUNCH;
  }
  const int64_t tiles = ((M + kBlockM - 1) / kBlockM) * ((N + kBlockN - 1) / kBlockN);
  if (tiles > INT_MAX) return KILN_ERR_UNSUPPORTED;
  const int grid = static_cast<int>(tiles < sm_count ? tiles : sm_count);
  const RasterChoice raster =
      choose_raster((M + kBlockM - 1) / kBlockM, (N + kBlockN - 1) / kBlockN, grid);
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  if (tma_store_c) {
    return launch<true>(grid, stream, map_a, map_b, map_c, m, n, k, raster.band, raster.along_n);
  }
  const PlainC plain_c{static_cast<__half*>(c.data), c.strides[0]};
  return launch<false>(grid, stream, map_a, map_b, plain_c, m, n, k, raster.band, raster.along_n);
}
