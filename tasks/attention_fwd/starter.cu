// attention_fwd starter: a correct, simple candidate to begin from.
//
// O = softmax(Q K^T / sqrt(D), causal mask) V and LSE = the row log-sum-exp, bf16 Q, K, V, O
// [B, H, S, D] and fp32 LSE [B, H, S], contiguous. One warp per query row: each lane holds
// D/32 of the row's query and output columns, every key's score is a warp-shuffle sum, and the
// softmax is online (a running maximum m and sum l, the output rescaled by exp(m_old - m_new)
// when the maximum grows), all in fp32 with accurate expf/logf. Four warps of a block take
// four consecutive rows of one head, so they read the same K and V rows through L1.
//
// Any S, any D up to 128; the only reduction dimension held in registers is D. No tensor
// cores, no shared-memory tiling, one key at a time: there is a great deal of speed left to
// find (the baseline is a flash-attention kernel on wgmma).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kWarps = 4;       // query rows per block
constexpr int kMaxPerLane = 4;  // D / 32 for D = 128
constexpr int kMaxDim = 32 * kMaxPerLane;

__global__ void __launch_bounds__(kWarps * 32)
    attention_rows(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                   const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o,
                   float* __restrict__ lse, int64_t rows, int seq, int dim, int causal,
                   float scale) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= rows) return;  // the whole warp leaves together
  const int i = static_cast<int>(row % seq);
  const int64_t head = row - i;  // first row of this (b, h) in the [B*H*S, D] view
  const int keys = causal ? i + 1 : seq;

  float qv[kMaxPerLane];
  float acc[kMaxPerLane];
  for (int t = 0; t < kMaxPerLane; ++t) {
    const int d = lane + 32 * t;
    qv[t] = d < dim ? __bfloat162float(q[row * dim + d]) * scale : 0.f;
    acc[t] = 0.f;
  }
  float m = -INFINITY;  // running maximum of the scaled scores
  float l = 0.f;        // running sum of exp(score - m)
  for (int j = 0; j < keys; ++j) {
    const int64_t key = (head + j) * dim;
    float partial = 0.f;
    for (int t = 0; t < kMaxPerLane; ++t) {
      const int d = lane + 32 * t;
      if (d < dim) partial += qv[t] * __bfloat162float(k[key + d]);
    }
    for (int offset = 16; offset > 0; offset /= 2)
      partial += __shfl_xor_sync(0xffffffffu, partial, offset);
    const float score = partial;  // every lane holds the full sum
    const float m_new = fmaxf(m, score);
    const float correction = expf(m - m_new);  // 0 on the first key (m = -inf)
    const float p = expf(score - m_new);
    l = l * correction + p;
    for (int t = 0; t < kMaxPerLane; ++t) {
      const int d = lane + 32 * t;
      if (d < dim) acc[t] = acc[t] * correction + p * __bfloat162float(v[key + d]);
    }
    m = m_new;
  }
  const float inv = 1.f / l;
  for (int t = 0; t < kMaxPerLane; ++t) {
    const int d = lane + 32 * t;
    if (d < dim) o[row * dim + d] = __float2bfloat16_rn(acc[t] * inv);
  }
  if (lane == 0) lse[row] = m + logf(l);
}

bool is_bhsd(const kiln_tensor& t, kiln_dtype dtype, const int64_t* shape) {
  if (t.dtype != dtype || t.rank != 4) return false;
  for (int i = 0; i < 4; ++i)
    if (t.shape[i] != shape[i]) return false;
  return true;
}

// Dense row-major strides for the tensor's shape (extents of 1 may carry any stride).
bool is_contiguous(const kiln_tensor& t) {
  int64_t expect = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] > 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 5 || scalars == nullptr || n_scalars != 1)
    return KILN_ERR_BAD_ARGUMENT;
  if (scalars[0].dtype != KILN_I64 || (scalars[0].value.i != 0 && scalars[0].value.i != 1))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t* shape = tensors[0].shape;
  if (tensors[0].rank != 4) return KILN_ERR_BAD_ARGUMENT;
  for (int i = 0; i < 4; ++i)
    if (!is_bhsd(tensors[i], KILN_BF16, shape)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& lse = tensors[4];
  if (lse.dtype != KILN_F32 || lse.rank != 3 || lse.shape[0] != shape[0] ||
      lse.shape[1] != shape[1] || lse.shape[2] != shape[2])
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = shape[0] * shape[1] * shape[2];
  const int64_t dim = shape[3];
  if (rows == 0) return KILN_OK;
  if (dim < 1 || dim > kMaxDim || shape[2] > INT_MAX) return KILN_ERR_UNSUPPORTED;
  for (int i = 0; i < 5; ++i)
    if (!is_contiguous(tensors[i])) return KILN_ERR_UNSUPPORTED;
  const int64_t blocks = (rows + kWarps - 1) / kWarps;
  if (blocks > INT_MAX) return KILN_ERR_UNSUPPORTED;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
  attention_rows<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(tensors[0].data),
      static_cast<const __nv_bfloat16*>(tensors[1].data),
      static_cast<const __nv_bfloat16*>(tensors[2].data),
      static_cast<__nv_bfloat16*>(tensors[3].data), static_cast<float*>(lse.data), rows,
      static_cast<int>(shape[2]), static_cast<int>(dim), static_cast<int>(scalars[0].value.i),
      scale);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
