// gemm_int8_wgmma: int8 GEMM C[M,N] = A[M,K] * B[N,K]^T on Hopper, exact in int32.
//
// A and B are s8 (one byte per element), C is s32, and the tensor cores accumulate in s32,
// so every output is the exact integer dot product (|A·B| <= 128 * 128 * K, which fits in
// int32 for K <= 131072; beyond that the hardware wraps, as the op's int32 does). The
// pipeline is gemm_wgmma_tma's (TMA into 128B-swizzled stages, full/empty mbarrier ring,
// two consumer warpgroups, thread 0 doubling as the loader); the byte-sized operands are
// handled as in gemm_fp8_wgmma:
//   - a 128-byte swizzle row holds 128 elements, so one K tile is 128 deep and the tensor
//     map's element type is a plain byte (CU_TENSOR_MAP_DATA_TYPE_UINT8);
//   - the instruction is wgmma.mma_async.m64n128k32.s32.s8.s8: K = 32 per instruction (32
//     bytes, so the descriptor advances by 32 bytes per step); integer wgmma has no scale
//     or transpose immediates, so both operands must be K-major, as in this TN GEMM;
//   - unlike fp8 there is no promotion: integer accumulation loses nothing, so the
//     wgmmas of successive K tiles all accumulate into one register set and one K tile
//     stays in flight while the next is issued (wait_group 1), as in the fp16 entry;
//   - the epilogue stores the s32 fragment as it is (pairs of columns as one 8-byte store).
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): row-major A, B, C with unit column stride;
// the row strides of A and B multiples of 16 elements (16 bytes, for TMA) and their bases
// 16-byte aligned; M, N, K < 2^31, M <= 65535 * 128. Ragged M, N, K are handled (TMA zero
// fill, which is an exact integer 0, and a masked epilogue).
#include <cuda.h>          // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;  // 128 s8 = 128 bytes: one 128B-swizzle row
constexpr int kStages = 3;    // 3 x 32 KB: two CTAs fit on one SM
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
// is defined in bytes, so it is the same for s8 as for fp16.
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
__device__ __forceinline__ void fence_accumulators(int32_t (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// D[64x128] (+)= A[64x32] * B[128x32]^T, s8 operands from shared memory, s32 accumulators
// (wrapping; no .satfinite: the exact sum fits for the K this op allows).
__device__ __forceinline__ void wgmma_m64n128k32_s8(int32_t (&d)[64], uint64_t desc_a,
                                                    uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p;\n"
      "}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// ---------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------

__global__ void __launch_bounds__(kThreads, 2)
    gemm_int8_kernel(const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b, int32_t* __restrict__ c, int M,
                     int N, int K, long long ldc, int pair_stores) {
  extern __shared__ uint8_t smem_raw[];
  // TMA's 128B swizzle repeats every 1024 bytes; the descriptors assume tiles start on it.
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const uint32_t smem_base = smem_addr(smem);
  const uint32_t full_bar = smem_base + kBarrierOffset;
  const uint32_t empty_bar = full_bar + kStages * 8;

  const int warpgroup = threadIdx.x / 128;
  const int warp = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  const int tile_n = blockIdx.x;  // consecutive CTAs share the same A rows
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
      mbar_init(full_bar + 8 * s, 1);        // thread 0's arrive.expect_tx
      mbar_init(empty_bar + 8 * s, kWarps);  // one arrival per warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    // Prologue: fill all but one stage (the last is filled once step 0's is released).
    for (int kt = 0; kt < kStages - 1 && kt < k_tiles; ++kt) load_stage(kt);
  }
  __syncthreads();

  // No zero fill: the first wgmma runs with scale-d = 0 (see gemm_wgmma_tma).
  int32_t acc[64];

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(full_bar + 8 * s, (kt / kStages) & 1);

    const uint32_t a_tile = smem_base + s * kStageBytes + warpgroup * 64 * 128;
    const uint32_t b_tile = smem_base + s * kStageBytes + kBytesA;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / 32; ++kk) {
      // +32 bytes = +32 s8 of K inside the 128-byte swizzled row.
      wgmma_m64n128k32_s8(acc, make_desc_k_sw128(a_tile + kk * 32),
                          make_desc_k_sw128(b_tile + kk * 32), (kt > 0 || kk > 0) ? 1u : 0u);
    }
    wgmma_commit();
    // This step's wgmmas stay in flight; the previous step's are complete, so its stage
    // is released and thread 0 refills it.
    wgmma_wait<1>();
    if (kt > 0 && lane == 0) mbar_arrive(empty_bar + 8 * ((kt - 1) % kStages));
    if (threadIdx.x == 0 && kt + kStages - 1 < k_tiles) load_stage(kt + kStages - 1);
    __syncwarp();  // wgmma is .aligned: the warp must be converged again
  }
  wgmma_wait<0>();
  fence_accumulators(acc);

  // Epilogue straight from the s32 fragment (the same layout as the f32 one): for column
  // block j, acc[4j+0..1] are row lane/4, columns 8j + 2*(lane%4) + {0,1}; acc[4j+2..3]
  // the row 8 below.
  const int row_base = tile_m * kBlockM + warpgroup * 64 + warp * 16 + lane / 4;
  const int col_base = tile_n * kBlockN + 2 * (lane % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row_base + 8 * half;
    if (row >= M) continue;
    int32_t* out = c + static_cast<long long>(row) * ldc;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = col_base + 8 * j;
      const int32_t v0 = acc[4 * j + 2 * half];
      const int32_t v1 = acc[4 * j + 2 * half + 1];
      if (pair_stores && col + 1 < N) {
        *reinterpret_cast<int2*>(out + col) = make_int2(v0, v1);
      } else {
        if (col < N) out[col] = v0;
        if (col + 1 < N) out[col + 1] = v1;
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

// A row-major [rows, cols] s8 matrix read in boxes of box_rows x 128 bytes with 128B
// swizzle; reads outside the matrix return zero bytes (integer 0).
bool encode_s8_matrix(CUtensorMap* map, const void* base, int64_t rows, int64_t cols,
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
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];  // A[M,K] s8
  const kiln_tensor& b = tensors[1];  // B[N,K] s8
  const kiln_tensor& c = tensors[2];  // C[M,N] s32
  if (!is_matrix(a, KILN_I8) || !is_matrix(b, KILN_I8) || !is_matrix(c, KILN_I32))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N) return KILN_ERR_BAD_ARGUMENT;
  if (!is_row_major(a, K) || !is_row_major(b, K) || !is_row_major(c, N))
    return KILN_ERR_UNSUPPORTED;
  if (M == 0 || N == 0) return KILN_OK;
  const int64_t grid_x = (N + kBlockN - 1) / kBlockN;
  const int64_t grid_y = (M + kBlockM - 1) / kBlockM;
  if (M >= INT_MAX || N >= INT_MAX || K >= INT_MAX || grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  if (K == 0) {  // an empty sum: C = 0
    return cudaMemset2DAsync(c.data, static_cast<size_t>(c.strides[0]) * 4, 0,
                             static_cast<size_t>(N) * 4, static_cast<size_t>(M),
                             stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (!tma_compatible(a) || !tma_compatible(b)) return KILN_ERR_UNSUPPORTED;

  CUtensorMap map_a;
  CUtensorMap map_b;
  if (!encode_s8_matrix(&map_a, a.data, M, K, a.strides[0], kBlockM) ||
      !encode_s8_matrix(&map_b, b.data, N, K, b.strides[0], kBlockN)) {
    return KILN_ERR_LAUNCH;
  }
  if (cudaFuncSetAttribute(gemm_int8_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           kSmemBytes) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int pair_stores =
      (reinterpret_cast<uintptr_t>(c.data) % 8 == 0 && c.strides[0] % 2 == 0) ? 1 : 0;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  gemm_int8_kernel<<<grid, kThreads, kSmemBytes, stream>>>(
      map_a, map_b, static_cast<int32_t*>(c.data), static_cast<int>(M), static_cast<int>(N),
      static_cast<int>(K), c.strides[0], pair_stores);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
