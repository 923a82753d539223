// grouped_gemm_masked_bf16: MoE grouped GEMM in the masked layout on Hopper (sm_90a).
//
//   for g < G, r < masked_m[g]:   C[g, r, :] = A[g, r, :] * B[g]^T
//   for g < G, masked_m[g] <= r:  C[g, r, :] = 0
//
// A[G, M, K] gives every group (expert) a fixed capacity of M rows, of which the first
// masked_m[g] (int32, on the device) hold tokens: the layout of decode-time MoE, where the
// buffers are sized once (CUDA graphs) and the counts change every step. The host never
// reads masked_m, so it cannot size the grid to the work; instead:
//   - the grid is persistent (one CTA per SM at most) and the valid tiles are numbered
//     group by group, group g owning ceil(masked_m[g] / 128) * ceil(N / 128) of them; every
//     role of every CTA walks the groups forward as its tile index grows (grouped_gemm_wgmma's
//     walker, with the group's rows [0, masked_m[g]) instead of [offsets[g], offsets[g+1])),
//     so tiles past a group's count are never loaded or multiplied;
//   - the rows past the counts are zeroed by the producer warpgroup's three idle warps,
//     while the consumers compute: the zeros are part of the op's contract, so the output is
//     fully defined and the same on every run.
// A and B are read through 3-D tensor maps ([G][M][K] and [G][N][K]), so a tile never reads
// another group's rows; the epilogue writes only rows < masked_m[g] of its group.
//
// The machinery is grouped_gemm_wgmma's: a TMA producer warpgroup, two wgmma consumer
// warpgroups (setmaxnreg 40/232), a 6-stage full/empty mbarrier ring with 128x128x64 tiles,
// and the stmatrix-staged epilogue.
//
// masked_m is trusted only as far as memory safety goes: each count is clamped into [0, M].
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): A, B, C with unit innermost stride; the
// outer strides of A and B multiples of 8 elements, bases 16-byte aligned (TMA); G, M, N, K
// < 2^31, G * M < 2^31.
#include <cuda.h>          // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBlockM = 128;  // two consumer warpgroups x 64 rows
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;   // 64 x 2 bytes = one 128B-swizzle row
constexpr int kStages = 6;
constexpr int kConsumerWarpgroups = 2;
constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
constexpr int kConsumerWarps = 4 * kConsumerWarpgroups;
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
constexpr int kBytesA = kBlockM * kBlockK * 2;  // 16 KB
constexpr int kBytesB = kBlockN * kBlockK * 2;  // 16 KB
constexpr int kStageBytes = kBytesA + kBytesB;
constexpr int kStagingBytes = 64 * 64 * 2;      // one 64x64 chunk per consumer
constexpr int kStagingOffset = kStages * kStageBytes;
constexpr int kBarrierOffset = kStagingOffset + kConsumerWarpgroups * kStagingBytes;
constexpr int kSmemBytes = 1024 + kBarrierOffset + 2 * kStages * 8;  // +1024: alignment
static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");

// ---------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
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
  } while (!done);
}

__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// K-major tile with 128B swizzle: start >> 4 | LBO 1 (unused) | SBO 1024 >> 4 | mode 1.
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

template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D[64x128] (+)= A[64x16] * B[128x16]^T, f16 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n128k16_f16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
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

// D[64x128] (+)= A[64x16] * B[128x16]^T, bf16 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                      uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
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

template <bool kBf16>
__device__ __forceinline__ void wgmma_tile(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                           uint32_t accumulate) {
  if constexpr (kBf16) {
    wgmma_m64n128k16_bf16(d, desc_a, desc_b, accumulate);
  } else {
    wgmma_m64n128k16_f16(d, desc_a, desc_b, accumulate);
  }
}

template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t bits;
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    bits = *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    bits = *reinterpret_cast<const uint32_t*>(&v);
  }
  return bits;  // lo in the lower 16 bits (the lower column)
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

// ---------------------------------------------------------------------------------------
// Tile scheduler over groups
// ---------------------------------------------------------------------------------------

// Walks the groups forward: seek(t) for non-decreasing t finds the group holding valid tile
// t. Every role of every CTA runs its own walker over the same counts, so they agree.
struct MaskedWalker {
  const int* masked_m;
  int groups;
  int M;
  int tiles_n;
  int group = 0;
  long long first_tile = 0;  // global index of the group's first tile
  int row_end = 0;           // the group's valid rows [0, row_end), clamped into [0, M]
  int tiles_m = 0;

  __device__ void load_group() {
    row_end = min(max(__ldg(masked_m + group), 0), M);
    tiles_m = (row_end + kBlockM - 1) / kBlockM;
  }

  __device__ void start() {
    group = 0;
    first_tile = 0;
    if (groups > 0) load_group();
  }

  // False once t lies past the last group's tiles.
  __device__ bool seek(long long t) {
    while (group < groups && t >= first_tile + static_cast<long long>(tiles_m) * tiles_n) {
      first_tile += static_cast<long long>(tiles_m) * tiles_n;
      ++group;
      if (group < groups) load_group();
    }
    return group < groups;
  }

  // Tile t of the current group: tile rows vary fastest, so CTAs working at the same time
  // share the group's B column blocks.
  __device__ void coords(long long t, int& tile_m, int& tile_n) const {
    const int r = static_cast<int>(t - first_tile);
    tile_m = r % tiles_m;
    tile_n = r / tiles_m;
  }
};

// Zeroes the rows past each group's count: row slot s = g*M + r (r >= masked_m[g]) of the
// flattened [G*M] rows goes to CTA s % gridDim.x, whose `threads` zero-fill threads write it
// in 16-byte pieces (2-byte stores where C's layout does not allow them).
__device__ void zero_masked_rows(const int* masked_m, int groups, int M, int N,
                                 uint16_t* __restrict__ c, long long ldc_group, long long ldc,
                                 int vector_stores, int thread, int threads) {
  const long long slots = static_cast<long long>(groups) * M;
  for (long long s = blockIdx.x; s < slots; s += gridDim.x) {
    const int g = static_cast<int>(s / M);
    const int r = static_cast<int>(s % M);
    if (r < min(max(__ldg(masked_m + g), 0), M)) continue;
    uint16_t* row = c + g * ldc_group + r * ldc;
    for (int col = 8 * thread; col < N; col += 8 * threads) {
      if (vector_stores && col + 8 <= N) {
        *reinterpret_cast<uint4*>(row + col) = make_uint4(0, 0, 0, 0);
      } else {
        for (int e = col; e < N && e < col + 8; ++e) row[e] = 0;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------

template <bool kBf16>
__global__ void __launch_bounds__(kThreads, 1)
    grouped_gemm_masked_kernel(const __grid_constant__ CUtensorMap map_a,
                               const __grid_constant__ CUtensorMap map_b,
                               const int* __restrict__ masked_m, int groups,
                               uint16_t* __restrict__ c, int M, int N, int K, long long ldc_group,
                               long long ldc, int vector_stores) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const uint32_t smem_base = smem_addr(smem);
  const uint32_t full_bar = smem_base + kBarrierOffset;
  const uint32_t empty_bar = full_bar + kStages * 8;

  const int warpgroup = threadIdx.x / 128;
  const int k_tiles = (K + kBlockK - 1) / kBlockK;
  MaskedWalker walker{masked_m, groups, M, (N + kBlockN - 1) / kBlockN};

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bar + 8 * s, 1);
      mbar_init(empty_bar + 8 * s, kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
    if (threadIdx.x == 0) {
      walker.start();
      int stage = 0;
      uint32_t phase = 0;
      for (long long t = blockIdx.x; walker.seek(t); t += gridDim.x) {
        int tile_m, tile_n;
        walker.coords(t, tile_m, tile_n);
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(empty_bar + 8 * stage, phase ^ 1);
          const uint32_t bar = full_bar + 8 * stage;
          const uint32_t dst = smem_base + stage * kStageBytes;
          mbar_arrive_expect_tx(bar, kStageBytes);
          tma_load_3d(dst, &map_a, bar, kt * kBlockK, tile_m * kBlockM, walker.group);
          tma_load_3d(dst + kBytesA, &map_b, bar, kt * kBlockK, tile_n * kBlockN, walker.group);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    } else if (threadIdx.x >= 32) {
      // Warps 1-3 have nothing to load: they write the zeros of the masked-out rows.
      zero_masked_rows(masked_m, groups, M, N, c, ldc_group, ldc, vector_stores,
                       threadIdx.x - 32, 96);
    }
  } else {
    // ---------------------------------------------------------------- consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
    const int consumer = warpgroup - 1;
    const int lane = threadIdx.x % 32;
    const int warp = (threadIdx.x / 32) % 4;
    const int tid = threadIdx.x % 128;
    const uint32_t staging = smem_base + kStagingOffset + consumer * kStagingBytes;
    const uint8_t* staging_ptr = smem + kStagingOffset + consumer * kStagingBytes;

    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;

    walker.start();
    int stage = 0;
    uint32_t phase = 0;
    for (long long t = blockIdx.x; walker.seek(t); t += gridDim.x) {
      int tile_m, tile_n;
      walker.coords(t, tile_m, tile_n);
      const int row0 = tile_m * kBlockM + consumer * 64;  // within the group
      const int row_end = walker.row_end;
      const int col0 = tile_n * kBlockN;
      uint16_t* c_group = c + walker.group * ldc_group;

      // A consumer whose 64 rows all lie past the group's count only passes the stages on.
      if (row0 >= row_end) {
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

      int prev_stage = -1;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(full_bar + 8 * stage, phase);
        const uint32_t a_tile = smem_base + stage * kStageBytes + consumer * 64 * 128;
        const uint32_t b_tile = smem_base + stage * kStageBytes + kBytesA;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / 16; ++kk) {
          wgmma_tile<kBf16>(acc, make_desc_k_sw128(a_tile + kk * 32),
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

      // Epilogue: two 64-column chunks through the swizzled staging tile (stmatrix, then
      // 16-byte row segments), writing only rows < row_end and columns < N.
#pragma unroll
      for (int chunk = 0; chunk < kBlockN / 64; ++chunk) {
#pragma unroll
        for (int pair = 0; pair < 4; ++pair) {
          const int j = chunk * 8 + pair * 2;
          const uint32_t r0 = pack2<kBf16>(acc[4 * j + 0], acc[4 * j + 1]);
          const uint32_t r1 = pack2<kBf16>(acc[4 * j + 2], acc[4 * j + 3]);
          const uint32_t r2 = pack2<kBf16>(acc[4 * j + 4], acc[4 * j + 5]);
          const uint32_t r3 = pack2<kBf16>(acc[4 * j + 6], acc[4 * j + 7]);
          const int block = lane / 8;
          const int row = warp * 16 + (block & 1) * 8 + lane % 8;
          const int unit = pair * 2 + (block >> 1);
          stmatrix_x4(staging + row * 128 + ((unit ^ (row & 7)) << 4), r0, r1, r2, r3);
        }
        named_barrier_sync(1 + consumer, 128);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int u = tid + 128 * i;
          const int row = u >> 3;
          const int unit = u & 7;
          const uint4 v =
              *reinterpret_cast<const uint4*>(staging_ptr + row * 128 + ((unit ^ (row & 7)) << 4));
          const int grow = row0 + row;
          const int gcol = col0 + chunk * 64 + unit * 8;
          if (grow < row_end && gcol < N) {
            uint16_t* dst = c_group + static_cast<long long>(grow) * ldc + gcol;
            if (vector_stores && gcol + 8 <= N) {
              *reinterpret_cast<uint4*>(dst) = v;
            } else {
              const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
              for (int e = 0; e < 8; ++e) {
                if (gcol + e < N) dst[e] = static_cast<uint16_t>(words[e >> 1] >> ((e & 1) * 16));
              }
            }
          }
        }
        named_barrier_sync(1 + consumer, 128);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

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

// A rank-3 tensor [G][rows][K] with unit innermost stride, read in boxes of 64 (K) x
// box_rows x 1 with 128B swizzle; elements past the rows of a group read as zero.
bool encode_map(CUtensorMap* map, CUtensorMapDataType type, const kiln_tensor& t,
                uint32_t box_rows) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(t.shape[2]),
                              static_cast<cuuint64_t>(t.shape[1]),
                              static_cast<cuuint64_t>(t.shape[0])};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(t.strides[1]) * 2,
                                 static_cast<cuuint64_t>(t.strides[0]) * 2};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kBlockK), box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  return encode(map, type, 3, t.data, dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool shapes_nonnegative(const kiln_tensor& t) {
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] < 0) return false;
  return true;
}

// Unit innermost stride, outer strides covering the inner extent, and the TMA rules:
// 16-byte aligned base, every outer stride a multiple of 16 bytes.
bool tma_layout_ok(const kiln_tensor& t) {
  if (t.strides[t.rank - 1] != 1 || reinterpret_cast<uintptr_t>(t.data) % 16 != 0) return false;
  int64_t extent = t.shape[t.rank - 1];
  for (int i = t.rank - 2; i >= 0; --i) {
    if (t.strides[i] < extent || t.strides[i] % 8 != 0) return false;
    extent = t.strides[i] * t.shape[i];
  }
  return true;
}

template <bool kBf16>
int launch(const kiln_tensor& a, const kiln_tensor& b, const kiln_tensor& masked_m,
           const kiln_tensor& c, int groups, int M, int N, int K, cudaStream_t stream) {
  const CUtensorMapDataType type =
      kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  CUtensorMap map_a;
  CUtensorMap map_b;
  if (!encode_map(&map_a, type, a, kBlockM) || !encode_map(&map_b, type, b, kBlockN)) {
    return KILN_ERR_LAUNCH;
  }
  auto kernel = grouped_gemm_masked_kernel<kBf16>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) !=
      cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  int device = 0;
  int sm_count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  // The valid tiles are only known on the device; all of them full is the upper bound.
  const int64_t tiles_n = (N + kBlockN - 1) / kBlockN;
  const int64_t max_tiles = static_cast<int64_t>(groups) * ((M + kBlockM - 1) / kBlockM) * tiles_n;
  const int grid = static_cast<int>(max_tiles < sm_count ? max_tiles : sm_count);
  if (grid <= 0) return KILN_OK;
  const int vector_stores = (reinterpret_cast<uintptr_t>(c.data) % 16 == 0 &&
                             c.strides[1] % 8 == 0 && c.strides[0] % 8 == 0)
                                ? 1
                                : 0;
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(
      map_a, map_b, static_cast<const int*>(masked_m.data), groups,
      static_cast<uint16_t*>(c.data), M, N, K, c.strides[0], c.strides[1], vector_stores);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

// K = 0: every valid row is an empty sum and every other row is zero, so C = 0.
int zero_output(const kiln_tensor& c, int64_t G, int64_t M, int64_t N, cudaStream_t stream) {
  for (int64_t g = 0; g < G; ++g) {
    uint16_t* base = static_cast<uint16_t*>(c.data) + g * c.strides[0];
    if (cudaMemset2DAsync(base, static_cast<size_t>(c.strides[1]) * 2, 0,
                          static_cast<size_t>(N) * 2, static_cast<size_t>(M),
                          stream) != cudaSuccess)
      return KILN_ERR_LAUNCH;
  }
  return KILN_OK;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 4 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];         // A[G,M,K]
  const kiln_tensor& b = tensors[1];         // B[G,N,K]
  const kiln_tensor& masked_m = tensors[2];  // masked_m[G] int32
  const kiln_tensor& c = tensors[3];         // C[G,M,N]
  const kiln_dtype dtype = a.dtype;
  if (dtype != KILN_F16 && dtype != KILN_BF16) return KILN_ERR_BAD_ARGUMENT;
  if (b.dtype != dtype || c.dtype != dtype || masked_m.dtype != KILN_I32)
    return KILN_ERR_BAD_ARGUMENT;
  if (a.rank != 3 || b.rank != 3 || masked_m.rank != 1 || c.rank != 3) return KILN_ERR_BAD_ARGUMENT;
  if (!shapes_nonnegative(a) || !shapes_nonnegative(b) || !shapes_nonnegative(masked_m) ||
      !shapes_nonnegative(c)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t G = a.shape[0];
  const int64_t M = a.shape[1];
  const int64_t K = a.shape[2];
  const int64_t N = b.shape[1];
  if (b.shape[0] != G || b.shape[2] != K || masked_m.shape[0] != G || c.shape[0] != G ||
      c.shape[1] != M || c.shape[2] != N)
    return KILN_ERR_BAD_ARGUMENT;
  if (c.strides[2] != 1 || c.strides[1] < N || c.strides[0] < M * c.strides[1] ||
      masked_m.strides[0] != 1)
    return KILN_ERR_UNSUPPORTED;
  if (G == 0 || M == 0 || N == 0) return KILN_OK;
  if (M >= INT_MAX || N >= INT_MAX || K >= INT_MAX || G >= INT_MAX || G * M >= INT_MAX)
    return KILN_ERR_UNSUPPORTED;
  if (K == 0) return zero_output(c, G, M, N, stream);
  if (!tma_layout_ok(a) || !tma_layout_ok(b)) return KILN_ERR_UNSUPPORTED;
  if (reinterpret_cast<uintptr_t>(masked_m.data) % 4 != 0) return KILN_ERR_UNSUPPORTED;

  const int groups = static_cast<int>(G);
  if (dtype == KILN_BF16) {
    return launch<true>(a, b, masked_m, c, groups, static_cast<int>(M), static_cast<int>(N),
                        static_cast<int>(K), stream);
  }
  return launch<false>(a, b, masked_m, c, groups, static_cast<int>(M), static_cast<int>(N),
                       static_cast<int>(K), stream);
}
