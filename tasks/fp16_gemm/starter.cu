// fp16_gemm starter: a correct, simple candidate to begin from.
//
// C[M,N] = A[M,K] * B[N,K]^T, fp16 row-major in and out, fp32 accumulation.
// Shared-memory tiling: each 32x32 block of C is computed by 256 threads (32 x 8),
// each thread owning 4 outputs of one column. Every load and store is bounds-checked,
// so any M, N, K works. No tensor cores, no async copies, no pipelining: there is a
// great deal of speed left to find: on an H200 this runs near 10 TFLOP/s, cuBLAS
// near 770.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 32;          // C tile side and k-step
constexpr int kRowsPerThread = 4;  // 32 rows / 8 thread rows
constexpr int kThreadRows = kTile / kRowsPerThread;

__global__ void gemm_tn_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                               __half* __restrict__ C, int64_t M, int64_t N, int64_t K, int64_t lda,
                               int64_t ldb, int64_t ldc) {
  // +1 column of padding so the B reads below (stride kTile+1) hit distinct banks.
  __shared__ float As[kTile][kTile + 1];  // As[row of C][k]
  __shared__ float Bs[kTile][kTile + 1];  // Bs[column of C][k]

  const int tx = threadIdx.x;  // 0..31: column of C within the tile, and k when loading
  const int ty = threadIdx.y;  // 0..7
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;

  float acc[kRowsPerThread] = {0.f, 0.f, 0.f, 0.f};
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    const int64_t k = k0 + tx;
    for (int r = ty; r < kTile; r += kThreadRows) {
      // Consecutive threads read consecutive k: coalesced loads of A's and B's rows.
      const int64_t a_row = row0 + r;
      const int64_t b_row = col0 + r;
      As[r][tx] = (a_row < M && k < K) ? __half2float(A[a_row * lda + k]) : 0.f;
      Bs[r][tx] = (b_row < N && k < K) ? __half2float(B[b_row * ldb + k]) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) {
      const float b = Bs[tx][kk];
      for (int i = 0; i < kRowsPerThread; ++i) acc[i] += As[ty + i * kThreadRows][kk] * b;
    }
    __syncthreads();  // the tiles are overwritten in the next step
  }

  const int64_t col = col0 + tx;
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int64_t row = row0 + ty + i * kThreadRows;
    if (row < M && col < N) C[row * ldc + col] = __float2half_rn(acc[i]);
  }
}

bool is_fp16_matrix(const kiln_tensor& t) {
  return t.dtype == KILN_F16 && t.rank == 2 && t.shape[0] >= 0 && t.shape[1] >= 0;
}

// Row-major with unit column stride; the row stride may exceed the row length.
bool is_row_major(const kiln_tensor& t, int64_t cols) {
  return t.strides[1] == 1 && t.strides[0] >= cols;
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

  const int64_t grid_x = (N + kTile - 1) / kTile;
  const int64_t grid_y = (M + kTile - 1) / kTile;
  if (grid_x > 2147483647 || grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  const dim3 block(kTile, kThreadRows);
  gemm_tn_kernel<<<grid, block, 0, stream>>>(
      static_cast<const __half*>(a.data), static_cast<const __half*>(b.data),
      static_cast<__half*>(c.data), M, N, K, a.strides[0], b.strides[0], c.strides[0]);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
