// fp16_gemm candidates that are wrong on purpose, selected by KILN_TEST_MODE at build time:
// 0 skips the last k (a wrong answer), 1 asks for 64 KB of dynamic shared memory without
// cudaFuncSetAttribute (a launch error), 2 writes one row past C (a fault); 3 is right, and
// thread (0,0) of every block prints where it is with device printf (printf debugging).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "kiln/abi.h"

__global__ void naive_gemm(const __half* A, const __half* B, __half* C, int64_t M, int64_t N,
                           int64_t K, int64_t extra_rows) {
  extern __shared__ float unused[];
  const int64_t row = blockIdx.y * 16 + threadIdx.y;
  const int64_t col = blockIdx.x * 16 + threadIdx.x;
  if (KILN_TEST_MODE == 3 && threadIdx.x == 0 && threadIdx.y == 0)
    printf("block (%d,%d) of (%d,%d): M=%lld N=%lld K=%lld\n", blockIdx.x, blockIdx.y, gridDim.x,
           gridDim.y, static_cast<long long>(M), static_cast<long long>(N),
           static_cast<long long>(K));
  if (row >= M + extra_rows || col >= N) return;
  float acc = 0;
  const int64_t k_end = KILN_TEST_MODE == 0 ? K - 1 : K;
  for (int64_t k = 0; k < k_end; ++k)
    acc += __half2float(A[(row % M) * K + k]) * __half2float(B[col * K + k]);
  C[row * N + col] = __float2half_rn(acc);
  if (acc == 12345.0f) unused[0] = acc;
}

extern "C" int kiln_launch(const kiln_tensor* t, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  if (n_tensors != 3) return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = t[0].shape[0], K = t[0].shape[1], N = t[1].shape[0];
  const dim3 block(16, 16);
  const int64_t extra = KILN_TEST_MODE == 2 ? 1 : 0;
  const dim3 grid(static_cast<unsigned>((N + 15) / 16), static_cast<unsigned>((M + extra + 15) / 16));
  const size_t shared = KILN_TEST_MODE == 1 ? 64 * 1024 : 0;
  naive_gemm<<<grid, block, shared, stream>>>(static_cast<const __half*>(t[0].data),
                                              static_cast<const __half*>(t[1].data),
                                              static_cast<__half*>(t[2].data), M, N, K, extra);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
