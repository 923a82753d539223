// gemv_decode_splitk: C[M,N] = A[M,K] * B[N,K]^T for decode shapes, M <= 16, fp16 in and out,
// fp32 accumulation, no tensor cores.
//
// With M <= 16 the GEMM is a stack of matrix-vector products: every element of B is used M
// times at most, so the kernel is bound by reading B (N*K*2 bytes) from HBM, not by math. The
// design moves B once, with 128-bit loads, from as many warps as the GPU can keep in flight:
//   - one block of 128 threads (4 warps) owns kCols consecutive columns n0..n0+kCols-1 of C;
//   - the block splits K among its 128 threads (split-K inside the block): thread t reads the
//     16-byte chunks c = t, t+128, t+256, ... of each of its B rows, and the same chunks of the
//     M rows of A (A is small, M*K*2 bytes, and stays in L1/L2: every block rereads it);
//   - each thread keeps M x kCols fp32 partial sums in registers; a warp shuffle tree folds
//     them per warp, shared memory folds the 4 warps, and the first M*kCols threads round and
//     store. The order of additions is fixed, so results are deterministic.
// kCols = 4 for M <= 8 and 2 for M <= 16 keeps accumulators + A chunks within the registers
// of 128-thread blocks; the row count is a template parameter (1, 2, 4, 8, 16) so the
// accumulator arrays stay in registers.
//
// M > 16 is correct but not what the kernel is for: rows go in groups of 16 (gridDim.y), and
// every group rereads all of B, so the traffic grows with ceil(M/16); use a tensor-core GEMM.
// Requirements: K a multiple of 8, A and B contiguous and 16-byte aligned (else
// KILN_ERR_UNSUPPORTED). M and N are arbitrary. No workspace, no atomics, one launch.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float2 to_float2(uint32_t bits) {
  __half2 h;
  memcpy(&h, &bits, sizeof h);
  return __half22float2(h);
}

// Sum over 8 halves of a[i] * b[i] added to acc, in fp32.
__device__ __forceinline__ float dot8(const uint4& a, const uint4& b, float acc) {
  const uint32_t av[4] = {a.x, a.y, a.z, a.w};
  const uint32_t bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 af = to_float2(av[i]);
    const float2 bf = to_float2(bv[i]);
    acc = fmaf(af.x, bf.x, acc);
    acc = fmaf(af.y, bf.y, acc);
  }
  return acc;
}

template <int kRows, int kCols>
__global__ void __launch_bounds__(kThreads)
    gemv_kernel(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C,
                int M, int N, int K) {
  // Row group blockIdx.y: rows 16*y .. 16*y+15 (only y = 0 when M <= 16).
  A += static_cast<int64_t>(blockIdx.y) * kRows * K;
  C += static_cast<int64_t>(blockIdx.y) * kRows * N;
  M = min(M - static_cast<int>(blockIdx.y) * kRows, kRows);
  const int n0 = blockIdx.x * kCols;
  const int chunks = K / 8;  // 16-byte chunks per row
  const uint4* a4 = reinterpret_cast<const uint4*>(A);
  const uint4* b4 = reinterpret_cast<const uint4*>(B);

  float acc[kRows][kCols];
#pragma unroll
  for (int m = 0; m < kRows; ++m)
#pragma unroll
    for (int j = 0; j < kCols; ++j) acc[m][j] = 0.f;

#pragma unroll 2
  for (int c = threadIdx.x; c < chunks; c += kThreads) {
    uint4 b[kCols];
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      // Columns past N read nothing and contribute zeros (never stored).
      b[j] = n0 + j < N ? __ldg(b4 + static_cast<int64_t>(n0 + j) * chunks + c)
                        : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int m = 0; m < kRows; ++m) {
      if (m >= M) break;
      const uint4 a = __ldg(a4 + static_cast<int64_t>(m) * chunks + c);
#pragma unroll
      for (int j = 0; j < kCols; ++j) acc[m][j] = dot8(a, b[j], acc[m][j]);
    }
  }

  // Fold the 32 lanes of each warp, then the warps through shared memory.
  __shared__ float partial[kWarps][kRows * kCols];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int m = 0; m < kRows; ++m) {
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      float v = acc[m][j];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
      if (lane == 0) partial[warp][m * kCols + j] = v;
    }
  }
  __syncthreads();
  const int t = threadIdx.x;
  if (t < kRows * kCols) {
    const int m = t / kCols;
    const int j = t % kCols;
    if (m < M && n0 + j < N) {
      float sum = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) sum += partial[w][t];
      C[static_cast<int64_t>(m) * N + n0 + j] = __float2half_rn(sum);
    }
  }
}

template <int kRows, int kCols>
int launch(const __half* A, const __half* B, __half* C, int M, int N, int K, cudaStream_t stream) {
  const dim3 blocks((N + kCols - 1) / kCols, (M + kRows - 1) / kRows);
  gemv_kernel<kRows, kCols><<<blocks, kThreads, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
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
    return KILN_ERR_UNSUPPORTED;  // 16-byte chunks, 32-bit indices, grid.y row groups
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
  const auto* A = static_cast<const __half*>(a.data);
  const auto* B = static_cast<const __half*>(b.data);
  auto* C = static_cast<__half*>(c.data);
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  if (M == 1) return launch<1, 4>(A, B, C, m, n, k, stream);
  if (M == 2) return launch<2, 4>(A, B, C, m, n, k, stream);
  if (M <= 4) return launch<4, 4>(A, B, C, m, n, k, stream);
  if (M <= 8) return launch<8, 4>(A, B, C, m, n, k, stream);
  return launch<16, 2>(A, B, C, m, n, k, stream);
}
