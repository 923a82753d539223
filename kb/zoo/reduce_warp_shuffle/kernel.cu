// reduce_warp_shuffle: y[0] = sum of x[0..N), fp32 in and out, fp32 accumulation.
//
// One launch: a fixed-size grid strides over x with 16-byte loads, each thread keeps four
// running sums, the block folds its 256 partials with shfl.sync and one shared-memory hop,
// and thread 0 of each block adds the block's partial to y with one atomicAdd. y is zeroed
// on the stream first (cudaMemsetAsync), so every call starts from 0.
//
// Any N >= 0 works. x must be contiguous; it is read with float4 when its address is
// 16-byte aligned (the N % 4 tail by scalar loads), and with scalar loads otherwise.
// The order in which blocks reach the atomic is not fixed, so the last bits of y can
// differ from call to call: fp32 addition is not associative (see NOTES.md).
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kBlocksPerSm = 8;  // 8 x 256 threads fill an SM's 2048 thread slots

// Sum over the 32 lanes; the full total lands in lane 0. Every lane must call it.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the block; the total is valid in thread 0 only. Every thread must call it
// (it contains __syncthreads), so it is never placed inside divergent code.
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
    v = warp_sum(v);  // the whole of warp 0 takes part, so the full mask is right
  }
  return v;
}

// The second bound caps registers at 32 so that kBlocksPerSm blocks really fit on an SM.
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    reduce_sum_atomic_kernel(const float* __restrict__ x, int64_t n, int use_vectors,
                             float* __restrict__ y) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;

  // Four independent sums: four loads in flight per thread and four add chains.
  float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
  const int64_t n_vec = use_vectors ? n / 4 : 0;  // whole float4s
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
  // Elements not covered by whole float4s: the N % 4 tail, or all of x when unaligned.
  for (int64_t k = 4 * n_vec + tid; k < n; k += stride) acc1 += __ldg(x + k);

  const float total = block_sum((acc0 + acc1) + (acc2 + acc3));
  if (threadIdx.x == 0) atomicAdd(y, total);
}

// Contiguous: unit stride on every dimension of extent > 1.
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
  // The atomics accumulate into y, so it must start at zero on every call.
  if (cudaMemsetAsync(out, 0, sizeof(float), stream) != cudaSuccess) return KILN_ERR_LAUNCH;
  if (n == 0) return KILN_OK;

  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int use_vectors = (reinterpret_cast<uintptr_t>(x.data) % 16 == 0) ? 1 : 0;
  // One block per 4 float4 per thread at most, and never more than fill the GPU once:
  // the grid-stride loop covers the rest, and fewer blocks means fewer atomics.
  const int64_t per_block = static_cast<int64_t>(kThreads) * 16;
  int64_t blocks = (n + per_block - 1) / per_block;
  const int64_t max_blocks = static_cast<int64_t>(sms > 0 ? sms : 1) * kBlocksPerSm;
  if (blocks > max_blocks) blocks = max_blocks;

  reduce_sum_atomic_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const float*>(x.data), n, use_vectors, out);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
