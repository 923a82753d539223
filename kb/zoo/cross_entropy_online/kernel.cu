// cross_entropy_online: loss[r] = logsumexp(logits[r, :]) - logits[r, targets[r]] for bf16
// logits[R, V], int32 targets[R], fp32 loss[R]; one pass over the logits.
//
// One block of 256 threads per row. Each thread keeps a running maximum m and a running sum
// s = sum(exp(x - m)) over its strided part of the row (online logsumexp, as online softmax):
// for each 128-bit vector of 8 logits it takes the vector's maximum, rescales s once if the
// maximum grew, and adds the 8 exponentials. The (m, s) pairs are then merged across the warp
// by shuffles and across the 8 warps through shared memory, with
//   merge((m1, s1), (m2, s2)) = (M, s1 * exp(m1 - M) + s2 * exp(m2 - M)), M = max(m1, m2).
// Thread 0 writes m + log(s) - logits[r, target]. Exponentials are exp2f of log2(e)-scaled
// values (one ex2 each). The row is read once: V*2 bytes per row, the kernel's whole traffic.
//
// V % 8 == 0 with 16-byte aligned logits takes the vector path; otherwise a scalar loop.
// A target outside [0, V) gives loss = NaN (the kernel cannot fail per row). logits and loss
// contiguous (else KILN_ERR_UNSUPPORTED); V >= 1.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kLog2e = 1.4426950408889634f;

struct Lse {
  float m;  // running maximum, in log2 units (x * log2e)
  float s;  // sum of exp2(x * log2e - m)
};

__device__ __forceinline__ Lse merge(Lse a, Lse b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.s * exp2f(a.m - m) + b.s * exp2f(b.m - m)};
}

// Adds n values (already scaled by log2e) to the running pair.
template <int n>
__device__ __forceinline__ void add(Lse& acc, const float (&v)[n]) {
  float vmax = v[0];
#pragma unroll
  for (int i = 1; i < n; ++i) vmax = fmaxf(vmax, v[i]);
  if (vmax > acc.m) {  // rescale once per vector, not per element
    acc.s = acc.m == -INFINITY ? 0.f : acc.s * exp2f(acc.m - vmax);
    acc.m = vmax;
  }
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < n; ++i) sum += exp2f(v[i] - acc.m);
  acc.s += sum;
}

__device__ __forceinline__ void unpack(uint32_t bits, float& lo, float& hi) {
  __nv_bfloat162 h;
  memcpy(&h, &bits, sizeof h);
  const float2 f = __bfloat1622float2(h);
  lo = f.x * kLog2e;
  hi = f.y * kLog2e;
}

__global__ void __launch_bounds__(kThreads)
    cross_entropy_kernel(const __nv_bfloat16* __restrict__ logits,
                         const int32_t* __restrict__ targets, float* __restrict__ loss, int64_t V,
                         int vectors) {
  const int64_t r = blockIdx.x;
  const __nv_bfloat16* row = logits + r * V;
  Lse acc{-INFINITY, 0.f};
  if (vectors) {
    const uint4* row8 = reinterpret_cast<const uint4*>(row);
    const int64_t n = V / 8;
#pragma unroll 2
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      const uint4 q = __ldg(row8 + i);
      float v[8];
      unpack(q.x, v[0], v[1]);
      unpack(q.y, v[2], v[3]);
      unpack(q.z, v[4], v[5]);
      unpack(q.w, v[6], v[7]);
      add(acc, v);
    }
  } else {
    for (int64_t i = threadIdx.x; i < V; i += kThreads) {
      const float v[1] = {__bfloat162float(row[i]) * kLog2e};
      add(acc, v);
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const Lse other{__shfl_xor_sync(0xffffffffu, acc.m, offset),
                    __shfl_xor_sync(0xffffffffu, acc.s, offset)};
    acc = merge(acc, other);
  }
  __shared__ Lse warp_lse[kWarps];
  if (threadIdx.x % 32 == 0) warp_lse[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    Lse total = warp_lse[0];
    for (int w = 1; w < kWarps; ++w) total = merge(total, warp_lse[w]);
    const int32_t target = targets[r];
    const float lse = (total.m + log2f(total.s)) / kLog2e;  // back to natural units
    loss[r] = target >= 0 && target < V ? lse - __bfloat162float(row[target]) : NAN;
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

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& logits = tensors[0];   // logits[R, V]
  const kiln_tensor& targets = tensors[1];  // targets[R]
  const kiln_tensor& loss = tensors[2];     // loss[R]
  if (logits.dtype != KILN_BF16 || targets.dtype != KILN_I32 || loss.dtype != KILN_F32 ||
      logits.rank != 2 || targets.rank != 1 || loss.rank != 1) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t R = logits.shape[0], V = logits.shape[1];
  if (R < 0 || V < 0 || targets.shape[0] != R || loss.shape[0] != R) return KILN_ERR_BAD_ARGUMENT;
  if (R == 0) return KILN_OK;
  if (V == 0) return KILN_ERR_BAD_ARGUMENT;  // the logsumexp of nothing
  if (R > 0x7fffffff) return KILN_ERR_UNSUPPORTED;  // one block per row
  if (logits.data == nullptr || targets.data == nullptr || loss.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (!is_contiguous(logits) || !is_contiguous(targets) || !is_contiguous(loss)) {
    return KILN_ERR_UNSUPPORTED;
  }
  const int vectors = V % 8 == 0 && reinterpret_cast<uintptr_t>(logits.data) % 16 == 0 ? 1 : 0;
  cross_entropy_kernel<<<static_cast<unsigned>(R), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(logits.data), static_cast<const int32_t*>(targets.data),
      static_cast<float*>(loss.data), V, vectors);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
