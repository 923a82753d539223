// moe_topk_gating_softmax: the router of a mixture-of-experts layer. For each token of
// logits[T, E] (fp32): the K experts with the largest logits (descending, ties to the lower
// expert index) and their softmax weights over all E experts, or, with renormalize = 1,
// divided by the sum of the K chosen weights (= a softmax over the K chosen logits).
//
// One warp per token, 8 tokens per 256-thread block. Lane l holds the logits of experts
// l, l + 32, l + 64, ... in registers (kPerLane = ceil(E / 32) rounded up to 1, 2, 4, 8 or
// 16, a template parameter so the array stays in registers); each load instruction of the warp
// reads 128 consecutive bytes. Then, with no shared memory and no barrier:
//   1. max and Σ exp(x - max) over the row by xor-shuffle butterflies (every lane gets both);
//   2. K rounds of an argmax butterfly on (value, index) under the strict total order
//      "larger value, or equal value and lower index"; the lane that owns the winner marks it
//      taken (value -inf, index INT_MAX), and lane k remembers round k's winner;
//   3. lanes 0..K-1 write their weight and index: K consecutive floats and ints per token.
// Selection compares the fp32 logits themselves (exact), not the rounded probabilities, so
// ties resolve the same way as the reference.
//
// Constraints (else KILN_ERR_UNSUPPORTED): E <= 512, K <= 32, row strides >= the row length
// with unit column strides. K > E is KILN_ERR_BAD_ARGUMENT. NaN logits are not supported.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kTokensPerBlock = kThreads / 32;
constexpr int kMaxExperts = 512;
constexpr int kMaxK = 32;
constexpr int kTaken = INT_MAX;  // index of a taken (or absent) expert: loses every tie

__device__ __forceinline__ bool beats(float v1, int i1, float v2, int i2) {
  return v1 > v2 || (v1 == v2 && i1 < i2);
}

template <int kPerLane>
__global__ void __launch_bounds__(kThreads)
    gating_kernel(const float* __restrict__ logits, float* __restrict__ weights,
                  int* __restrict__ indices, int64_t tokens, int experts, int k, int64_t ldl,
                  int64_t ldw, int64_t ldi, int renormalize) {
  const int lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kTokensPerBlock + (threadIdx.x >> 5);
  if (t >= tokens) return;  // a whole warp leaves together: no barrier follows
  const float* row = logits + t * ldl;

  float x[kPerLane];
  int id[kPerLane];
  float max = -INFINITY;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int e = lane + 32 * i;
    const bool present = e < experts;
    x[i] = present ? __ldg(row + e) : -INFINITY;
    id[i] = present ? e : kTaken;
    max = fmaxf(max, x[i]);
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, offset));
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) sum += id[i] != kTaken ? expf(x[i] - max) : 0.f;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);

  float my_weight = 0.f, chosen_sum = 0.f;
  int my_index = -1;
  for (int round = 0; round < k; ++round) {
    // This lane's best remaining candidate, then the warp's.
    float best_v = -INFINITY;
    int best_i = kTaken;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      if (beats(x[i], id[i], best_v, best_i)) {
        best_v = x[i];
        best_i = id[i];
      }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float v = __shfl_xor_sync(0xffffffffu, best_v, offset);
      const int i = __shfl_xor_sync(0xffffffffu, best_i, offset);
      if (beats(v, i, best_v, best_i)) {
        best_v = v;
        best_i = i;
      }
    }
    // The order is total, so every lane holds the same winner; its owner removes it.
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      if (id[i] == best_i) {
        x[i] = -INFINITY;
        id[i] = kTaken;
      }
    }
    const float p = expf(best_v - max);
    chosen_sum += p;
    if (lane == round) {
      my_weight = p;
      my_index = best_i;
    }
  }
  if (lane < k) {
    const float denominator = renormalize ? chosen_sum : sum;
    weights[t * ldw + lane] = my_weight / denominator;
    indices[t * ldi + lane] = my_index;
  }
}

int64_t row_stride(const kiln_tensor& t) {
  const int64_t rows = t.shape[0], cols = t.shape[1];
  if (cols > 1 && t.strides[1] != 1) return -1;
  if (rows <= 1) return cols;
  return t.strides[0] >= cols ? t.strides[0] : -1;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 3 || scalars == nullptr || n_scalars != 1 ||
      scalars[0].dtype != KILN_I64 || (scalars[0].value.i != 0 && scalars[0].value.i != 1)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor& logits = tensors[0];   // [T, E]
  const kiln_tensor& weights = tensors[1];  // [T, K]
  const kiln_tensor& indices = tensors[2];  // [T, K]
  if (logits.dtype != KILN_F32 || weights.dtype != KILN_F32 || indices.dtype != KILN_I32 ||
      logits.rank != 2 || weights.rank != 2 || indices.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = logits.shape[0], E = logits.shape[1], K = weights.shape[1];
  if (T < 0 || E < 0 || K < 0 || weights.shape[0] != T || indices.shape[0] != T ||
      indices.shape[1] != K || K > E) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (E > kMaxExperts || K > kMaxK) return KILN_ERR_UNSUPPORTED;
  if (T == 0 || K == 0) return KILN_OK;
  if (logits.data == nullptr || weights.data == nullptr || indices.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t ldl = row_stride(logits), ldw = row_stride(weights), ldi = row_stride(indices);
  if (ldl < 0 || ldw < 0 || ldi < 0) return KILN_ERR_UNSUPPORTED;
  const int64_t blocks = (T + kTokensPerBlock - 1) / kTokensPerBlock;
  if (blocks > INT32_MAX) return KILN_ERR_UNSUPPORTED;

  const auto* lp = static_cast<const float*>(logits.data);
  auto* wp = static_cast<float*>(weights.data);
  auto* ip = static_cast<int*>(indices.data);
  const int e = static_cast<int>(E), k = static_cast<int>(K);
  const int renormalize = static_cast<int>(scalars[0].value.i);
  const dim3 grid(static_cast<unsigned>(blocks));
  if (E <= 32) {
    gating_kernel<1><<<grid, kThreads, 0, stream>>>(lp, wp, ip, T, e, k, ldl, ldw, ldi, renormalize);
  } else if (E <= 64) {
    gating_kernel<2><<<grid, kThreads, 0, stream>>>(lp, wp, ip, T, e, k, ldl, ldw, ldi, renormalize);
  } else if (E <= 128) {
    gating_kernel<4><<<grid, kThreads, 0, stream>>>(lp, wp, ip, T, e, k, ldl, ldw, ldi, renormalize);
  } else if (E <= 256) {
    gating_kernel<8><<<grid, kThreads, 0, stream>>>(lp, wp, ip, T, e, k, ldl, ldw, ldi, renormalize);
  } else {
    gating_kernel<16><<<grid, kThreads, 0, stream>>>(lp, wp, ip, T, e, k, ldl, ldw, ldi, renormalize);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
