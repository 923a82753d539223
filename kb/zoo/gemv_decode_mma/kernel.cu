// gemv_decode_mma: C[M,N] = A[M,K] * B[N,K]^T for decode shapes, M <= 16, fp16 in and out,
// fp32 accumulation, on the tensor cores with mma.sync.m16n8k16.
//
// The neighbour entry gemv_decode_splitk does the same on the CUDA cores and, measured on the
// H200, is bound by instructions, not by HBM: at M = 16 every half of B costs 16 fp32 FMAs plus
// its conversion. Here the 16 rows of A are exactly the m16 of one tensor-core MMA, so one
// mma.sync does 16x8x16 multiply-adds for a lane's share of 4 loaded halves of B.
//
//   - A block of 16 warps owns kTiles * 8 consecutive columns of C (kTiles n8 tiles). Its warps
//     split K (split-K inside the block): warp w takes the 32-wide K chunks w, w+16, w+32, ...
//   - Per chunk, lane l loads one 16-byte piece of B for each tile: row n0 + l/4, halves
//     k0 + 8*(l%4) .. +7. The MMA's K order is free (a sum), so its fragments are taken straight
//     from that load: logical k {2t, 2t+1, 2t+8, 2t+9} of lane t = l%4 is physical
//     {8t, 8t+1, 8t+2, 8t+3} in the first MMA and {8t+4, .., 8t+7} in the second. A's fragments
//     follow the same map, so a lane loads 16 bytes of row l/4 and of row l/4 + 8 of A per
//     chunk: A is read once per block, not once per column.
//   - The warps' 16 x (8*kTiles) partial tiles meet in shared memory and are summed in warp
//     order by all threads: a fixed order, results reproducible bit for bit.
// Rows M..15 of A read as zeros and are never stored; columns past N read zeros.
// Requirements: K a multiple of 8, A and B contiguous and 16-byte aligned (else
// KILN_ERR_UNSUPPORTED). M > 16 goes in row groups of 16 (gridDim.y), each rereading B: correct,
// but a tiled GEMM is the kernel for it. No workspace, no atomics, one launch.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kWarps = 16;
constexpr int kThreads = kWarps * 32;
constexpr int kTiles = 4;  // n8 tiles per block: 32 columns of C
constexpr int kCols = kTiles * 8;

__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint4 load16(const __half* p, bool valid) {
  return valid ? __ldg(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0);
}

__global__ void __launch_bounds__(kThreads)
    gemv_mma_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                    __half* __restrict__ C, int M, int N, int K) {
  A += static_cast<int64_t>(blockIdx.y) * 16 * K;
  C += static_cast<int64_t>(blockIdx.y) * 16 * N;
  M = min(M - static_cast<int>(blockIdx.y) * 16, 16);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int n0 = static_cast<int>(blockIdx.x) * kCols;
  const int group = lane / 4;  // A row (and row + 8), B row within a tile
  const int quad = lane % 4;   // which 8 halves of the 32-wide chunk

  const __half* a_lo = A + static_cast<int64_t>(group) * K;
  const __half* a_hi = A + static_cast<int64_t>(group + 8) * K;
  const bool lo_valid = group < M;
  const bool hi_valid = group + 8 < M;

  float acc[kTiles][4];
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[t][i] = 0.f;

  const int chunks = (K + 31) / 32;
#pragma unroll 2
  for (int c = warp; c < chunks; c += kWarps) {
    const int k = c * 32 + quad * 8;
    const bool k_valid = k < K;  // K is a multiple of 8: a piece is all in or all out
    uint4 b[kTiles];
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      const int n = n0 + t * 8 + group;
      b[t] = load16(B + static_cast<int64_t>(n) * K + k, k_valid && n < N);
    }
    const uint4 lo = load16(a_lo + k, k_valid && lo_valid);
    const uint4 hi = load16(a_hi + k, k_valid && hi_valid);
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      mma_16816(acc[t], lo.x, hi.x, lo.y, hi.y, b[t].x, b[t].y);
      mma_16816(acc[t], lo.z, hi.z, lo.w, hi.w, b[t].z, b[t].w);
    }
  }

  // partial[warp][row][col]: the accumulator of lane l holds rows l/4 and l/4 + 8,
  // columns 2*(l%4) and 2*(l%4) + 1 of each tile.
  __shared__ float partial[kWarps][16][kCols];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    const int col = t * 8 + quad * 2;
    partial[warp][group][col] = acc[t][0];
    partial[warp][group][col + 1] = acc[t][1];
    partial[warp][group + 8][col] = acc[t][2];
    partial[warp][group + 8][col + 1] = acc[t][3];
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < 16 * kCols; i += kThreads) {
    const int row = i / kCols;
    const int col = i % kCols;
    if (row < M && n0 + col < N) {
      float sum = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) sum += partial[w][row][col];
      C[static_cast<int64_t>(row) * N + n0 + col] = __float2half_rn(sum);
    }
  }
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];  // A[M, K]
  const kiln_tensor& b = tensors[1];  // B[N, K]
  const kiln_tensor& c = tensors[2];  // C[M, N]
  if (a.dtype != KILN_F16 || b.dtype != KILN_F16 || c.dtype != KILN_F16) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N || M < 0 || N < 0 || K < 0) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (M == 0 || N == 0) return KILN_OK;
  if (K % 8 != 0 || K > (int64_t{1} << 30) || N > (int64_t{1} << 30) ||
      M > int64_t{16} * 65535) {
    return KILN_ERR_UNSUPPORTED;  // 16-byte pieces, 32-bit indices, grid.y row groups
  }
  if (a.data == nullptr || b.data == nullptr || c.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  if (!is_contiguous(a) || !is_contiguous(b) || !is_contiguous(c) || !aligned16(a.data) ||
      !aligned16(b.data)) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (K == 0) {  // an empty sum: C = 0
    return cudaMemsetAsync(c.data, 0, static_cast<size_t>(M * N) * sizeof(__half), stream) ==
                   cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  const dim3 blocks(static_cast<unsigned>((N + kCols - 1) / kCols),
                    static_cast<unsigned>((M + 15) / 16));
  gemv_mma_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const __half*>(a.data),
                                                   static_cast<const __half*>(b.data),
                                                   static_cast<__half*>(c.data), static_cast<int>(M),
                                                   static_cast<int>(N), static_cast<int>(K));
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
