// reduce_two_pass: y[0] = sum of x[0..N), fp32 in and out, fp32 accumulation, deterministic.
//
// Pass 1: G blocks stride over x (float4 loads when x is 16-byte aligned), each block folds
// its threads' sums with shfl.sync and writes one partial to a scratch array. Pass 2: one
// block reads the G partials in a fixed order and writes y. No atomics, and G depends on N
// only (not on the GPU), so the same x gives the same bits of y on every call and every GPU.
//
// The scratch array is a __device__ global of kMaxBlocks floats that lives as long as the
// module: nothing is allocated per call. Every partial is overwritten by pass 1 before pass 2
// reads it, so nothing carries over between calls. Two calls running at the same time on
// different streams would share it: issue them on one stream (see NOTES.md).
//
// Any N >= 0 works; x must be contiguous.
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxBlocks = 1024;         // pass-1 grid cap = size of the scratch array
constexpr int64_t kPerBlock = 256 * 16;  // elements per block before the cap applies

__device__ float g_partials[kMaxBlocks];

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Block total, valid in thread 0. Called by every thread of the block.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_totals[kWarps];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  v = 0.f;
  if (warp == 0) {
    v = lane < kWarps ? warp_totals[lane] : 0.f;
    v = warp_sum(v);
  }
  return v;
}

// Pass 1: the partial sum of block b is written to g_partials[b]. Each thread's sequence
// of elements, and the tree that folds the threads, are fixed by (N, G) alone.
__global__ void __launch_bounds__(kThreads)
    reduce_partials_kernel(const float* __restrict__ x, int64_t n, int use_vectors) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;

  float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
  const int64_t n_vec = use_vectors ? n / 4 : 0;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  int64_t i = tid;
  for (; i + 3 * stride < n_vec; i += 4 * stride) {
    const float4 a = __ldg(x4 + i);
    const float4 b = __ldg(x4 + i + stride);
    const float4 c = __ldg(x4 + i + 2 * stride);
    const float4 d = __ldg(x4 + i + 3 * stride);
    acc0 += (a.x + a.y) + (a.z + a.w);
    acc1 += (b.x + b.y) + (b.z + b.w);
    acc2 += (c.x + c.y) + (c.z + c.w);
    acc3 += (d.x + d.y) + (d.z + d.w);
  }
  for (; i < n_vec; i += stride) {
    const float4 a = __ldg(x4 + i);
    acc0 += (a.x + a.y) + (a.z + a.w);
  }
  for (int64_t k = 4 * n_vec + tid; k < n; k += stride) acc1 += __ldg(x + k);

  const float total = block_sum((acc0 + acc1) + (acc2 + acc3));
  if (threadIdx.x == 0) g_partials[blockIdx.x] = total;
}

// Pass 2: one block of kThreads sums the `count` partials (count <= kMaxBlocks).
__global__ void __launch_bounds__(kThreads) reduce_final_kernel(int count, float* __restrict__ y) {
  float acc = 0.f;
  for (int i = threadIdx.x; i < count; i += kThreads) acc += g_partials[i];
  const float total = block_sum(acc);
  if (threadIdx.x == 0) y[0] = total;
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];  // x[N]
  const kiln_tensor& y = tensors[1];  // y[1]
  if (x.dtype != KILN_F32 || y.dtype != KILN_F32) return KILN_ERR_BAD_ARGUMENT;
  if (x.rank != 1 || y.rank != 1 || x.shape[0] < 0 || y.shape[0] != 1) return KILN_ERR_BAD_ARGUMENT;
  const int64_t n = x.shape[0];
  if ((n > 0 && x.data == nullptr) || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  if (!is_contiguous(x)) return KILN_ERR_UNSUPPORTED;

  float* out = static_cast<float*>(y.data);
  if (n == 0) {
    return cudaMemsetAsync(out, 0, sizeof(float), stream) == cudaSuccess ? KILN_OK
                                                                         : KILN_ERR_LAUNCH;
  }
  const int use_vectors = (reinterpret_cast<uintptr_t>(x.data) % 16 == 0) ? 1 : 0;
  int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;

  reduce_partials_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const float*>(x.data), n, use_vectors);
  reduce_final_kernel<<<1, kThreads, 0, stream>>>(static_cast<int>(blocks), out);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
