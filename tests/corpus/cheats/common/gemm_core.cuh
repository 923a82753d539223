// A correct, simple fp16 GEMM (C = A * B^T, fp32 accumulation) through the kiln ABI,
// shared by the cheats in this folder so each file shows only its trick. It is the
// task's starter kernel: 32x32 shared-memory tiles, every access bounds-checked.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace cheat {

constexpr int kTile = 32;
constexpr int kRowsPerThread = 4;
constexpr int kThreadRows = kTile / kRowsPerThread;

template <typename Acc>
__global__ void gemm_tn(const __half* __restrict__ A, const __half* __restrict__ B,
                        __half* __restrict__ C, int64_t M, int64_t N, int64_t K, int64_t row_end) {
  __shared__ float As[kTile][kTile + 1];
  __shared__ float Bs[kTile][kTile + 1];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  Acc acc[kRowsPerThread];
  for (int i = 0; i < kRowsPerThread; ++i) acc[i] = Acc(0.f);
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    const int64_t k = k0 + tx;
    for (int r = ty; r < kTile; r += kThreadRows) {
      As[r][tx] = (row0 + r < M && k < K) ? __half2float(A[(row0 + r) * K + k]) : 0.f;
      Bs[r][tx] = (col0 + r < N && k < K) ? __half2float(B[(col0 + r) * K + k]) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) {
      const float b = Bs[tx][kk];
      for (int i = 0; i < kRowsPerThread; ++i) acc[i] += Acc(As[ty + i * kThreadRows][kk] * b);
    }
    __syncthreads();
  }
  const int64_t col = col0 + tx;
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int64_t row = row0 + ty + i * kThreadRows;
    if (row < row_end && col < N) C[row * N + col] = __float2half_rn(static_cast<float>(acc[i]));
  }
}

struct Gemm {
  const __half* a;
  const __half* b;
  __half* c;
  int64_t M, N, K;
};

// Checks the ABI arguments (dense row-major fp16 A[M,K], B[N,K], C[M,N]).
inline bool parse(const kiln_tensor* t, int n_tensors, Gemm* g) {
  if (t == nullptr || n_tensors != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (t[i].dtype != KILN_F16 || t[i].rank != 2 || t[i].strides[1] != 1) return false;
  }
  g->a = static_cast<const __half*>(t[0].data);
  g->b = static_cast<const __half*>(t[1].data);
  g->c = static_cast<__half*>(t[2].data);
  g->M = t[0].shape[0];
  g->K = t[0].shape[1];
  g->N = t[1].shape[0];
  return t[1].shape[1] == g->K && t[2].shape[0] == g->M && t[2].shape[1] == g->N;
}

// Enqueues C = A * B^T for rows [0, row_end) on `stream`.
template <typename Acc = float>
inline int launch(const Gemm& g, cudaStream_t stream, int64_t row_end = -1) {
  if (row_end < 0) row_end = g.M;
  const dim3 grid(static_cast<unsigned>((g.N + kTile - 1) / kTile),
                  static_cast<unsigned>((g.M + kTile - 1) / kTile));
  const dim3 block(kTile, kThreadRows);
  gemm_tn<Acc><<<grid, block, 0, stream>>>(g.a, g.b, g.c, g.M, g.N, g.K, row_end);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

}  // namespace cheat
