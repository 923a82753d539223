// fp16_gemm exact reference on the GPU: C[M,N] = A[M,K] * B[N,K]^T, the same values as
// reference.cpp, bit for bit.
//
// The worker checks every output element of every call against this and anchors it to the
// CPU reference (reference.cpp) on sampled rows once per workload. The arithmetic is the CPU
// reference's: fp16 inputs are widened exactly (to double here); a product of two fp16
// values has at most 22 significant bits, so it is exact in double and fma(a, b, acc) rounds
// once, exactly as the CPU's acc + (a * b) does; each element sums k in ascending order in
// one double accumulator; C is rounded to fp16 once, to nearest even, straight from double
// (cvt.rn.f16.f64, no rounding through float). The result does not depend on the tiling.
//
// Tensors may have any strides. Tiles of 64 x 64 outputs, 16 k-steps per stage, each thread
// 4 x 4 outputs: simple rather than fast (fp64 FMA, about a second for every workload of the
// task on an H200), and it needs no library.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 64;                 // outputs per block side
constexpr int kStep = 16;                 // k-steps per shared-memory stage
constexpr int kMicro = 4;                 // outputs per thread side
constexpr int kThreads = kTile / kMicro;  // threads per block side (16 x 16)

struct Matrix {
  const __half* data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
  int64_t col_stride;
};

__device__ double element(const Matrix& m, int64_t r, int64_t c) {
  if (r >= m.rows || c >= m.cols) return 0.0;  // never enters a stored sum
  return static_cast<double>(__half2float(m.data[r * m.row_stride + c * m.col_stride]));
}

__global__ void __launch_bounds__(kThreads* kThreads)
    exact_gemm(Matrix a, Matrix b, __half* c, int64_t c_row_stride, int64_t c_col_stride) {
  __shared__ double a_tile[kStep][kTile];
  __shared__ double b_tile[kStep][kTile];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int flat = ty * kThreads + tx;
  double acc[kMicro][kMicro] = {};
  for (int64_t k0 = 0; k0 < a.cols; k0 += kStep) {
    // 64 x 16 values of each operand, four per thread.
    for (int i = flat; i < kTile * kStep; i += kThreads * kThreads) {
      const int r = i / kStep;
      const int k = i % kStep;
      a_tile[k][r] = element(a, row0 + r, k0 + k);
      b_tile[k][r] = element(b, col0 + r, k0 + k);
    }
    __syncthreads();
    const int steps = static_cast<int>(a.cols - k0 < kStep ? a.cols - k0 : kStep);
    for (int k = 0; k < steps; ++k) {  // ascending k, as the CPU reference sums
      double av[kMicro];
      double bv[kMicro];
      for (int u = 0; u < kMicro; ++u) {
        av[u] = a_tile[k][ty + u * kThreads];
        bv[u] = b_tile[k][tx + u * kThreads];
      }
      for (int u = 0; u < kMicro; ++u) {
        for (int v = 0; v < kMicro; ++v) acc[u][v] = fma(av[u], bv[v], acc[u][v]);
      }
    }
    __syncthreads();
  }
  for (int u = 0; u < kMicro; ++u) {
    const int64_t r = row0 + ty + u * kThreads;
    if (r >= a.rows) continue;
    for (int v = 0; v < kMicro; ++v) {
      const int64_t col = col0 + tx + v * kThreads;
      if (col < b.rows) c[r * c_row_stride + col * c_col_stride] = __double2half(acc[u][v]);
    }
  }
}

bool is_fp16_matrix(const kiln_tensor& t) {
  return t.dtype == KILN_F16 && t.rank == 2 && t.shape[0] >= 0 && t.shape[1] >= 0;
}

Matrix matrix(const kiln_tensor& t) {
  return {static_cast<const __half*>(t.data), t.shape[0], t.shape[1], t.strides[0], t.strides[1]};
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& b = tensors[1];
  const kiln_tensor& c = tensors[2];
  if (!is_fp16_matrix(a) || !is_fp16_matrix(b) || !is_fp16_matrix(c)) return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N) return KILN_ERR_BAD_ARGUMENT;
  if (M == 0 || N == 0) return KILN_OK;
  const int64_t blocks_x = (N + kTile - 1) / kTile;
  const int64_t blocks_y = (M + kTile - 1) / kTile;
  if (blocks_x > 2147483647 || blocks_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y));
  const dim3 block(kThreads, kThreads);
  exact_gemm<<<grid, block, 0, stream>>>(matrix(a), matrix(b), static_cast<__half*>(c.data),
                                         c.strides[0], c.strides[1]);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
