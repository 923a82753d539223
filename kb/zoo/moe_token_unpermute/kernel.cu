// moe_token_unpermute: the combine after the experts of a mixture-of-experts layer.
// out[t, :] = Σ_k weights[t, k] · y[dest_rows[t, k], :], bf16 in and out, fp32 accumulation,
// where y[T*K, H] holds the expert outputs in moe_token_permute's expert-contiguous order.
//
// A gather, not a scatter: one warp per token reads its K rows and writes its output row once,
// so there are no atomics and the sum is taken in the fixed order k = 0, 1, ..., K-1 (the result
// is deterministic, bit for bit). Lane k < K holds dest_rows[t, k] and weights[t, k] and
// broadcasts them with shuffles. With H % 8 == 0 and 16-byte aligned rows each lane owns
// 8-element column chunks (one uint4 load per row and chunk, 8 fp32 accumulators); other H
// go element by element. 8 tokens per 256-thread block.
//
// Constraints (else KILN_ERR_UNSUPPORTED): bf16, K <= 32, contiguous tensors. Rows outside
// [0, T*K) are not checked on the device (the reference rejects them).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kTokensPerBlock = kThreads / 32;
constexpr int kMaxK = 32;

__device__ __forceinline__ float bf16_bits_to_float(uint32_t bits16) {
  return __uint_as_float(bits16 << 16);
}

template <bool kVector>
__global__ void __launch_bounds__(kThreads)
    unpermute_kernel(const __nv_bfloat16* __restrict__ y, const int* __restrict__ dest_rows,
                     const float* __restrict__ weights, __nv_bfloat16* __restrict__ out,
                     int64_t tokens, int k, int64_t h) {
  const int lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kTokensPerBlock + (threadIdx.x >> 5);
  if (t >= tokens) return;  // the whole warp: no barrier follows
  const int my_row = lane < k ? __ldg(dest_rows + t * k + lane) : 0;
  const float my_weight = lane < k ? __ldg(weights + t * k + lane) : 0.f;
  if (kVector) {
    // Every lane runs every iteration (the shuffles need all 32); lanes past the row idle.
    for (int64_t c0 = 0; c0 < h / 8; c0 += 32) {
      const int64_t c = c0 + lane;
      const bool active = c < h / 8;
      float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
      for (int j = 0; j < k; ++j) {
        const int64_t row = __shfl_sync(0xffffffffu, my_row, j);
        const float w = __shfl_sync(0xffffffffu, my_weight, j);
        const uint4 u = active ? __ldg(reinterpret_cast<const uint4*>(y + row * h) + c)
                               : make_uint4(0, 0, 0, 0);
        const uint32_t words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[2 * i] = fmaf(w, __uint_as_float(words[i] << 16), acc[2 * i]);
          acc[2 * i + 1] = fmaf(w, __uint_as_float(words[i] & 0xffff0000u), acc[2 * i + 1]);
        }
      }
      uint4 packed;
      uint32_t* words = &packed.x;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
        words[i] = *reinterpret_cast<const uint32_t*>(&pair);
      }
      if (active) reinterpret_cast<uint4*>(out + t * h)[c] = packed;
    }
  } else {
    const auto* bits = reinterpret_cast<const uint16_t*>(y);
    // The shuffles sit outside the column loop: its trip count differs between lanes.
    for (int j0 = 0; j0 < h; j0 += 32) {
      const int64_t c = j0 + lane;
      float acc = 0.f;
      for (int j = 0; j < k; ++j) {
        const int64_t row = __shfl_sync(0xffffffffu, my_row, j);
        const float w = __shfl_sync(0xffffffffu, my_weight, j);
        if (c < h) acc = fmaf(w, bf16_bits_to_float(bits[row * h + c]), acc);
      }
      if (c < h) out[t * h + c] = __float2bfloat16_rn(acc);
    }
  }
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] > 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 4 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor &y = tensors[0], &dest = tensors[1], &weights = tensors[2], &out = tensors[3];
  if ((y.dtype != KILN_BF16 && y.dtype != KILN_F16) || out.dtype != y.dtype ||
      dest.dtype != KILN_I32 || weights.dtype != KILN_F32 || y.rank != 2 || dest.rank != 2 ||
      weights.rank != 2 || out.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = dest.shape[0], K = dest.shape[1], H = y.shape[1];
  if (T < 0 || K < 0 || H < 0 || y.shape[0] != T * K || weights.shape[0] != T ||
      weights.shape[1] != K || out.shape[0] != T || out.shape[1] != H) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (y.dtype != KILN_BF16 || K > kMaxK) return KILN_ERR_UNSUPPORTED;
  if (T == 0 || H == 0) return KILN_OK;
  if (!is_contiguous(y) || !is_contiguous(dest) || !is_contiguous(weights) ||
      !is_contiguous(out)) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (y.data == nullptr && K > 0) return KILN_ERR_BAD_ARGUMENT;
  if (dest.data == nullptr || weights.data == nullptr || out.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t blocks = (T + kTokensPerBlock - 1) / kTokensPerBlock;
  if (blocks > INT32_MAX) return KILN_ERR_UNSUPPORTED;
  const auto* yp = static_cast<const __nv_bfloat16*>(y.data);
  const auto* dp = static_cast<const int*>(dest.data);
  const auto* wp = static_cast<const float*>(weights.data);
  auto* op = static_cast<__nv_bfloat16*>(out.data);
  const dim3 grid(static_cast<unsigned>(blocks));
  if (H % 8 == 0 && aligned16(yp) && aligned16(op)) {
    unpermute_kernel<true><<<grid, kThreads, 0, stream>>>(yp, dp, wp, op, T, static_cast<int>(K), H);
  } else {
    unpermute_kernel<false><<<grid, kThreads, 0, stream>>>(yp, dp, wp, op, T, static_cast<int>(K), H);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
