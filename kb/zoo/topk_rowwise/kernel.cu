// topk_rowwise: for each row of x[R,C] (fp32), the K largest values in descending order and
// their column indices; among equal values the lower index comes first. K <= 64.
//
// One block of 256 threads per row (a grid-stride loop over rows when R exceeds the grid).
// Thread t owns columns t, t + 256, t + 512, ... and always holds one candidate: its best
// element that has not been output yet. K rounds follow; in each, the block finds the best of
// the 256 candidates (shfl.sync butterfly inside each warp, then the 8 warp winners through
// shared memory), thread 0 writes it out, and only the owning thread rescans its columns for
// its next-best element. "Best" is the strict total order
//     (v1, i1) beats (v2, i2)  <=>  v1 > v2  or  (v1 == v2 and i1 < i2),
// which is exactly the order of the reference's output (so -0.0 and +0.0 tie and go by index).
//
// Rows of up to kMaxStagedCols floats are first copied into shared memory, so the rescans
// read shared memory; longer rows are rescanned from global memory (L1/L2), same algorithm.
//
// Constraints: 1 <= K <= 64 (K > 64 is KILN_ERR_UNSUPPORTED: the cost grows with K, and a
// sort wins long before), K <= C (else KILN_ERR_BAD_ARGUMENT), C < 2^31 - 1. Column strides
// must be 1; row strides may exceed the row length. NaN inputs are not supported: a NaN is
// never selected, and a row with fewer than K non-NaN values gets NaN / -1 in the slots left.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;  // a power of two (the cross-warp butterfly needs it)
constexpr int kMaxK = 64;
constexpr int kMaxStagedCols = 48 * 1024 / 4;  // default dynamic shared-memory limit, in floats
constexpr int kMaxGridRows = 65535 * 8;
constexpr int kNone = INT_MAX;  // index of "no candidate"; loses to every real element

struct Candidate {
  float v;
  int i;
};

__device__ __forceinline__ bool beats(float v1, int i1, float v2, int i2) {
  return v1 > v2 || (v1 == v2 && i1 < i2);
}

// The best of this thread's columns that the last output element (last_v, last_i) beats,
// i.e. that has not been output yet. `src` is the row, in shared or global memory.
__device__ __forceinline__ Candidate best_below(const float* src, int cols, float last_v,
                                                int last_i) {
  Candidate best = {-INFINITY, kNone};
  for (int c = threadIdx.x; c < cols; c += kThreads) {
    const float v = src[c];
    if (beats(last_v, last_i, v, c) && beats(v, c, best.v, best.i)) best = {v, c};
  }
  return best;
}

// Every lane ends with the best candidate of its group of `width` lanes (a power of two).
// The order is total, so all lanes of the group agree.
template <int kWidth>
__device__ __forceinline__ Candidate argmax_butterfly(Candidate c) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, c.v, offset);
    const int i = __shfl_xor_sync(0xffffffffu, c.i, offset);
    if (beats(v, i, c.v, c.i)) c = {v, i};
  }
  return c;
}

template <bool kStaged>
__global__ void __launch_bounds__(kThreads)
    topk_kernel(const float* __restrict__ x, float* __restrict__ values, int* __restrict__ indices,
                int64_t rows, int cols, int k, int64_t ldx, int64_t ldv, int64_t ldi) {
  extern __shared__ float staged_row[];  // cols floats when kStaged, else unused
  // Round j uses slot j & 1; see the barrier argument below.
  __shared__ float warp_best_v[2][kWarps];
  __shared__ int warp_best_i[2][kWarps];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const float* xr = x + row * ldx;
    const float* src = xr;
    if (kStaged) {
      for (int c = threadIdx.x; c < cols; c += kThreads) staged_row[c] = __ldg(xr + c);
      __syncthreads();
      src = staged_row;
    }

    // Nothing output yet: (+inf, -1) beats every non-NaN element.
    Candidate mine = best_below(src, cols, INFINITY, -1);
    for (int j = 0; j < k; ++j) {
      const Candidate warp_best = argmax_butterfly<32>(mine);
      if (lane == 0) {
        warp_best_v[j & 1][warp] = warp_best.v;
        warp_best_i[j & 1][warp] = warp_best.i;
      }
      // One barrier per round suffices: slot j & 1 is rewritten in round j + 2 only by a
      // thread that has passed round j + 1's barrier, which every thread reaches only after
      // it has finished reading slot j & 1 in round j.
      __syncthreads();
      const int w = lane & (kWarps - 1);
      const Candidate winner =
          argmax_butterfly<kWarps>(Candidate{warp_best_v[j & 1][w], warp_best_i[j & 1][w]});
      if (threadIdx.x == 0) {
        const bool found = winner.i != kNone;
        values[row * ldv + j] = found ? winner.v : NAN;
        indices[row * ldi + j] = found ? winner.i : -1;
      }
      // Only the owner of the winning column moves on to its next-best element.
      if (winner.i != kNone && winner.i == mine.i && j + 1 < k) {
        mine = best_below(src, cols, winner.v, winner.i);
      }
    }
    __syncthreads();  // the staged row and the slots are reused by the next row
  }
}

int64_t row_stride(const kiln_tensor& t) {
  const int64_t rows = t.shape[0];
  const int64_t cols = t.shape[1];
  if (cols > 1 && t.strides[1] != 1) return -1;
  if (rows <= 1) return cols;
  return t.strides[0] >= cols ? t.strides[0] : -1;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];        // x[R,C]
  const kiln_tensor& values = tensors[1];   // values[R,K]
  const kiln_tensor& indices = tensors[2];  // indices[R,K]
  if (x.dtype != KILN_F32 || values.dtype != KILN_F32 || indices.dtype != KILN_I32) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (x.rank != 2 || values.rank != 2 || indices.rank != 2) return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  const int64_t k = values.shape[1];
  if (rows < 0 || cols < 0 || k < 0 || values.shape[0] != rows || indices.shape[0] != rows ||
      indices.shape[1] != k) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (k > cols) return KILN_ERR_BAD_ARGUMENT;  // there are not K elements to return
  if (k > kMaxK) return KILN_ERR_UNSUPPORTED;
  if (cols >= kNone) return KILN_ERR_UNSUPPORTED;
  if (rows == 0 || k == 0) return KILN_OK;
  if (x.data == nullptr || values.data == nullptr || indices.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t ldx = row_stride(x);
  const int64_t ldv = row_stride(values);
  const int64_t ldi = row_stride(indices);
  if (ldx < 0 || ldv < 0 || ldi < 0) return KILN_ERR_UNSUPPORTED;

  const unsigned grid = static_cast<unsigned>(rows < kMaxGridRows ? rows : kMaxGridRows);
  const auto* xp = static_cast<const float*>(x.data);
  auto* vp = static_cast<float*>(values.data);
  auto* ip = static_cast<int*>(indices.data);
  if (cols <= kMaxStagedCols) {
    const size_t smem = static_cast<size_t>(cols) * sizeof(float);
    topk_kernel<true><<<grid, kThreads, smem, stream>>>(xp, vp, ip, rows, static_cast<int>(cols),
                                                        static_cast<int>(k), ldx, ldv, ldi);
  } else {
    topk_kernel<false><<<grid, kThreads, 0, stream>>>(xp, vp, ip, rows, static_cast<int>(cols),
                                                      static_cast<int>(k), ldx, ldv, ldi);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
