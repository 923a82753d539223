// gemm_fp8_blockscaled: FP8 GEMM with fine-grained scales on Hopper (sm_90a):
//   C[m,n] = sum over K blocks kb of scale_a[m,kb] * scale_b[n/128,kb] * (A[m,kb*128:+128] . B[n,kb*128:+128])
// A and B are e4m3, scale_a[M, ceil(K/128)] (one scale per row per 128 k: "1x128") and
// scale_b[ceil(N/128), ceil(K/128)] (one per 128x128 block) are f32, C is bf16, accumulation
// fp32. This is the DeepSeek-V3 / DeepGEMM scaling recipe.
//
// gemm_fp8_wgmma's kernel (TMA into 128B-swizzled stages, an mbarrier ring, two consumer
// warpgroups of wgmma.m64n128k32.e4m3, thread 0 doubling as the loader) with one idea changed:
// where that kernel promotes each K tile's tensor-core partial sum into an fp32 accumulator
// and applies one scale at the end, here the promotion *is* the scaling. The K tile (128) is
// the scale block and the N tile (128) the B scale block, so each K tile's partial sum is
// multiplied by the thread's two row scales of A (its fragment rows r and r + 8) and the
// tile's one scale of B before it is added: acc += part * scale_a[r,kt] * scale_b[tile_n,kt].
// The scales are read from global memory (L2/L1-resident: ceil(K/128) floats per row) while
// the wgmmas of the K tile run.
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): row-major A, B, C with unit column stride;
// the row strides of A and B multiples of 16 elements (16 bytes, for TMA) and their bases
// 16-byte aligned; M, N, K < 2^31, M <= 65535 * 128. Scales of any strides. Ragged M, N, K are
// handled (TMA zero fill, masked epilogue, the last scale block covering the K remainder).
#include <cuda.h>          // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;  // 128 e4m3 = 128 bytes: one 128B-swizzle row
constexpr int kStages = 4;
constexpr int kThreads = 256;  // two warpgroups, 64 rows of the tile each
constexpr int kWarps = kThreads / 32;
constexpr int kBytesA = kBlockM * kBlockK;
constexpr int kBytesB = kBlockN * kBlockK;
constexpr int kStageBytes = kBytesA + kBytesB;  // 32 KB
constexpr int kBarrierOffset = kStages * kStageBytes;
constexpr int kSmemBytes = 1024 + kBarrierOffset + 2 * kStages * 8;  // +1024 for alignment

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

// Waits for the completion of the barrier phase with this parity (a fresh barrier is in
// phase 0, so parity 1 passes at once).
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

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(bar)
      : "memory");
}

// K-major, 128B-swizzled tile: start >> 4, leading byte offset 1 (unused), stride byte
// offset 1024 >> 4 (8 rows of 128 bytes), swizzle mode 1 (128B) in bits 62-63. The layout
// is defined in bytes, so it is the same for fp8 as for fp16.
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

// D[64x128] (+)= A[64x32] * B[128x32]^T, e4m3 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                      uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1;\n"
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

__global__ void __launch_bounds__(kThreads, 1)
    gemm_fp8_blockscaled_kernel(const __grid_constant__ CUtensorMap map_a,
                                const __grid_constant__ CUtensorMap map_b,
                                const float* __restrict__ scale_a, long long sa_row,
                                long long sa_col, const float* __restrict__ scale_b,
                                long long sb_row, long long sb_col, __nv_bfloat16* __restrict__ c,
                                int M, int N, int K, long long ldc, int pair_stores) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const uint32_t smem_base = smem_addr(smem);
  const uint32_t full_bar = smem_base + kBarrierOffset;
  const uint32_t empty_bar = full_bar + kStages * 8;

  const int warpgroup = threadIdx.x / 128;
  const int warp = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  const int tile_n = blockIdx.x;
  const int tile_m = blockIdx.y;
  const int k_tiles = (K + kBlockK - 1) / kBlockK;

  // Issues K tile kt into its stage once all warps have released the stage's last use.
  auto load_stage = [&](int kt) {
    const int s = kt % kStages;
    mbar_wait(empty_bar + 8 * s, ((kt / kStages) & 1) ^ 1);
    const uint32_t bar = full_bar + 8 * s;
    const uint32_t dst = smem_base + s * kStageBytes;
    mbar_arrive_expect_tx(bar, kStageBytes);
    tma_load_2d(dst, &map_a, bar, kt * kBlockK, tile_m * kBlockM);
    tma_load_2d(dst + kBytesA, &map_b, bar, kt * kBlockK, tile_n * kBlockN);
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bar + 8 * s, 1);
      mbar_init(empty_bar + 8 * s, kWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (int kt = 0; kt < kStages && kt < k_tiles; ++kt) load_stage(kt);  // fill the ring
  }
  __syncthreads();

  // This thread's two fragment rows (r and r + 8 of its warp's 16) and their scale rows.
  const int row_base = tile_m * kBlockM + warpgroup * 64 + warp * 16 + lane / 4;
  const float* scale_row0 = row_base < M ? scale_a + row_base * sa_row : nullptr;
  const float* scale_row1 = row_base + 8 < M ? scale_a + (row_base + 8) * sa_row : nullptr;
  const float* scale_col = scale_b + tile_n * sb_row;

  float acc[64];   // fp32 sums over all K tiles so far, scaled
  float part[64];  // this K tile's sum, as the tensor cores accumulate it
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(full_bar + 8 * s, (kt / kStages) & 1);

    const uint32_t a_tile = smem_base + s * kStageBytes + warpgroup * 64 * 128;
    const uint32_t b_tile = smem_base + s * kStageBytes + kBytesA;
    wgmma_fence();  // part[] was read by the adds below: order them before the overwrite
#pragma unroll
    for (int kk = 0; kk < kBlockK / 32; ++kk) {
      wgmma_m64n128k32_e4m3(part, make_desc_k_sw128(a_tile + kk * 32),
                            make_desc_k_sw128(b_tile + kk * 32), kk > 0 ? 1u : 0u);
    }
    wgmma_commit();
    // The K tile's scales, loaded while its wgmmas run. Rows past M get 0 (never stored).
    const float sb = __ldg(scale_col + kt * sb_col);
    const float s0 = scale_row0 != nullptr ? __ldg(scale_row0 + kt * sa_col) * sb : 0.f;
    const float s1 = scale_row1 != nullptr ? __ldg(scale_row1 + kt * sa_col) * sb : 0.f;
    wgmma_wait<0>();
    fence_accumulators(part);
    if (lane == 0) mbar_arrive(empty_bar + 8 * s);  // this warp is done with stage s
    // Promotion with scaling: part[4j + 0..1] is row r, part[4j + 2..3] row r + 8.
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      acc[4 * j + 0] += part[4 * j + 0] * s0;
      acc[4 * j + 1] += part[4 * j + 1] * s0;
      acc[4 * j + 2] += part[4 * j + 2] * s1;
      acc[4 * j + 3] += part[4 * j + 3] * s1;
    }
    if (threadIdx.x == 0 && kt + kStages < k_tiles) load_stage(kt + kStages);
    __syncwarp();  // reconverge before the next .aligned wgmma
  }

  // Epilogue: round to bf16, store the fragment (see gemm_wgmma_tma for the layout).
  const int col_base = tile_n * kBlockN + 2 * (lane % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row_base + 8 * half;
    if (row >= M) continue;
    __nv_bfloat16* out = c + static_cast<long long>(row) * ldc;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = col_base + 8 * j;
      const float v0 = acc[4 * j + 2 * half];
      const float v1 = acc[4 * j + 2 * half + 1];
      if (pair_stores && col + 1 < N) {
        *reinterpret_cast<__nv_bfloat162*>(out + col) = __floats2bfloat162_rn(v0, v1);
      } else {
        if (col < N) out[col] = __float2bfloat16_rn(v0);
        if (col + 1 < N) out[col + 1] = __float2bfloat16_rn(v1);
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

// A row-major [rows, cols] byte matrix (e4m3) read in boxes of box_rows x 128 bytes with
// 128B swizzle; reads outside the matrix return zero bytes (0 is +0.0 in e4m3).
bool encode_fp8_matrix(CUtensorMap* map, const void* base, int64_t rows, int64_t cols,
                       int64_t row_stride, uint32_t box_rows) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride)};  // bytes
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kBlockK), box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box,
                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool is_matrix(const kiln_tensor& t, kiln_dtype dtype) {
  return t.dtype == dtype && t.rank == 2 && t.shape[0] >= 0 && t.shape[1] >= 0;
}

// An f32 matrix of exactly rows x cols (any strides).
bool is_scale_matrix(const kiln_tensor& t, int64_t rows, int64_t cols) {
  return t.dtype == KILN_F32 && t.rank == 2 && t.shape[0] == rows && t.shape[1] == cols &&
         (t.data != nullptr || rows * cols == 0);
}

bool is_row_major(const kiln_tensor& t, int64_t cols) {
  return t.strides[1] == 1 && t.strides[0] >= cols;
}

bool tma_compatible(const kiln_tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data) % 16 == 0 && t.strides[0] % 16 == 0;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 5 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];        // A[M,K] e4m3
  const kiln_tensor& b = tensors[1];        // B[N,K] e4m3
  const kiln_tensor& scale_a = tensors[2];  // [M, ceil(K/128)] f32
  const kiln_tensor& scale_b = tensors[3];  // [ceil(N/128), ceil(K/128)] f32
  const kiln_tensor& c = tensors[4];        // C[M,N] bf16
  if (!is_matrix(a, KILN_E4M3) || !is_matrix(b, KILN_E4M3) || !is_matrix(c, KILN_BF16)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t M = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N) return KILN_ERR_BAD_ARGUMENT;
  const int64_t k_blocks = (K + kBlockK - 1) / kBlockK;
  if (!is_scale_matrix(scale_a, M, k_blocks) ||
      !is_scale_matrix(scale_b, (N + kBlockN - 1) / kBlockN, k_blocks)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (!is_row_major(a, K) || !is_row_major(b, K) || !is_row_major(c, N))
    return KILN_ERR_UNSUPPORTED;
  if (M == 0 || N == 0) return KILN_OK;
  const int64_t grid_x = (N + kBlockN - 1) / kBlockN;
  const int64_t grid_y = (M + kBlockM - 1) / kBlockM;
  if (M >= INT_MAX || N >= INT_MAX || K >= INT_MAX || grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  if (K == 0) {  // an empty sum: C = 0 (bf16 +0.0 is all-zero bits)
    return cudaMemset2DAsync(c.data, static_cast<size_t>(c.strides[0]) * 2, 0,
                             static_cast<size_t>(N) * 2, static_cast<size_t>(M),
                             stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (!tma_compatible(a) || !tma_compatible(b)) return KILN_ERR_UNSUPPORTED;

  CUtensorMap map_a;
  CUtensorMap map_b;
  if (!encode_fp8_matrix(&map_a, a.data, M, K, a.strides[0], kBlockM) ||
      !encode_fp8_matrix(&map_b, b.data, N, K, b.strides[0], kBlockN)) {
    return KILN_ERR_LAUNCH;
  }
  if (cudaFuncSetAttribute(gemm_fp8_blockscaled_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           kSmemBytes) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int pair_stores =
      (reinterpret_cast<uintptr_t>(c.data) % 4 == 0 && c.strides[0] % 2 == 0) ? 1 : 0;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  gemm_fp8_blockscaled_kernel<<<grid, kThreads, kSmemBytes, stream>>>(
      map_a, map_b, static_cast<const float*>(scale_a.data), scale_a.strides[0],
      scale_a.strides[1], static_cast<const float*>(scale_b.data), scale_b.strides[0],
      scale_b.strides[1], static_cast<__nv_bfloat16*>(c.data),
      static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), c.strides[0], pair_stores);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
