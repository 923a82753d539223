// kv_cache_append_rope: the KV-cache write of a decode (or chunked-prefill) step, fused with the
// rotary embedding of the new keys. For token t < T at position p = positions[t]:
//   k_cache[p, h, :] = rope(k_new[t, h, :], p)   (half-split pairs (i, i + D/2), cos/sin[p, i])
//   v_cache[p, h, :] = v_new[t, h, :]
// bf16 k_new, v_new[T, HK, D]; f32 cos, sin[S, D/2]; bf16 k_cache, v_cache[S, HK, D]. Only the
// rows at the positions are written; the rest of the caches (earlier tokens) is never touched.
//
// One flat index space over T x HK x D/16 units. A unit is 8 rotation pairs of one head: one
// 16-byte load from each half of k_new (channels i0..i0+7 and i0+D/2..), the same two of v_new,
// two 32-byte loads of the cos and sin row, and four 16-byte stores into the caches' row p.
// Folding V into the same unit makes every thread move 64 bytes of HBM data per step (4 loads
// in flight) and reads positions[t] once for both caches. The grid is one wave (SMs x resident
// blocks) striding over the units.
//
// Requirements: D % 16 == 0, contiguous, 16-byte aligned tensors (else KILN_ERR_UNSUPPORTED).
// Positions must be distinct (two tokens writing one row race); a position outside [0, S)
// writes nothing for that token rather than outside the cache.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 128;

__device__ __forceinline__ float2 bf16x2_to_float2(uint32_t w) {
  __nv_bfloat162 h;
  memcpy(&h, &w, sizeof h);
  return __bfloat1622float2(h);
}

__device__ __forceinline__ uint32_t float2_to_bf16x2(float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  uint32_t w;
  memcpy(&w, &h, sizeof w);
  return w;
}

// Rotates the 8 pairs (lo[j], hi[j]) by the angles whose cos/sin are c[j], s[j].
__device__ __forceinline__ void rotate(uint4& lo, uint4& hi, const float (&c)[8],
                                       const float (&s)[8]) {
  uint32_t l[4] = {lo.x, lo.y, lo.z, lo.w};
  uint32_t u[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    const float2 a = bf16x2_to_float2(l[w]);
    const float2 b = bf16x2_to_float2(u[w]);
    const int j = 2 * w;
    l[w] = float2_to_bf16x2(a.x * c[j] - b.x * s[j], a.y * c[j + 1] - b.y * s[j + 1]);
    u[w] = float2_to_bf16x2(b.x * c[j] + a.x * s[j], b.y * c[j + 1] + a.y * s[j + 1]);
  }
  lo = make_uint4(l[0], l[1], l[2], l[3]);
  hi = make_uint4(u[0], u[1], u[2], u[3]);
}

__device__ __forceinline__ void load8(const float* p, float (&f)[8]) {
  const float4 a = __ldg(reinterpret_cast<const float4*>(p));
  const float4 b = __ldg(reinterpret_cast<const float4*>(p) + 1);
  f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
}

__global__ void __launch_bounds__(kThreads)
    kv_cache_append_rope_kernel(const __nv_bfloat16* __restrict__ k_new,
                                const __nv_bfloat16* __restrict__ v_new,
                                const int32_t* __restrict__ positions,
                                const float* __restrict__ cos, const float* __restrict__ sin,
                                __nv_bfloat16* __restrict__ k_cache,
                                __nv_bfloat16* __restrict__ v_cache, int64_t T, int64_t HK,
                                int64_t D, int64_t S) {
  const int64_t units_per_head = D / 16;
  const int64_t units_per_token = HK * units_per_head;
  const int64_t units = T * units_per_token;
  const int64_t half = D / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; u < units;
       u += stride) {
    const int64_t t = u / units_per_token;
    const int64_t rest = u - t * units_per_token;  // h * units_per_head + j
    const int64_t i0 = (rest % units_per_head) * 8;
    const int64_t p = __ldg(positions + t);
    if (p < 0 || p >= S) continue;
    // Element offsets of channel i0 of head h, in the new rows and in cache row p.
    const int64_t from = t * HK * D + (rest / units_per_head) * D + i0;
    const int64_t to = p * HK * D + (rest / units_per_head) * D + i0;
    uint4 k_lo = __ldg(reinterpret_cast<const uint4*>(k_new + from));
    uint4 k_hi = __ldg(reinterpret_cast<const uint4*>(k_new + from + half));
    const uint4 v_lo = __ldg(reinterpret_cast<const uint4*>(v_new + from));
    const uint4 v_hi = __ldg(reinterpret_cast<const uint4*>(v_new + from + half));
    float c[8], s[8];
    load8(cos + p * half + i0, c);
    load8(sin + p * half + i0, s);
    rotate(k_lo, k_hi, c, s);
    *reinterpret_cast<uint4*>(k_cache + to) = k_lo;
    *reinterpret_cast<uint4*>(k_cache + to + half) = k_hi;
    *reinterpret_cast<uint4*>(v_cache + to) = v_lo;
    *reinterpret_cast<uint4*>(v_cache + to + half) = v_hi;
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

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

bool has_shape(const kiln_tensor& t, int64_t a, int64_t b, int64_t c) {
  return t.shape[0] == a && t.shape[1] == b && t.shape[2] == c;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 7 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& k_new = tensors[0];      // k_new[T, HK, D] bf16
  const kiln_tensor& v_new = tensors[1];      // v_new[T, HK, D] bf16
  const kiln_tensor& positions = tensors[2];  // positions[T] i32
  const kiln_tensor& cos = tensors[3];        // cos[S, D/2] f32
  const kiln_tensor& sin = tensors[4];        // sin[S, D/2] f32
  const kiln_tensor& k_cache = tensors[5];    // k_cache[S, HK, D] bf16
  const kiln_tensor& v_cache = tensors[6];    // v_cache[S, HK, D] bf16
  if (k_new.dtype != KILN_BF16 || v_new.dtype != KILN_BF16 || positions.dtype != KILN_I32 ||
      cos.dtype != KILN_F32 || sin.dtype != KILN_F32 || k_cache.dtype != KILN_BF16 ||
      v_cache.dtype != KILN_BF16 || k_new.rank != 3 || v_new.rank != 3 || positions.rank != 1 ||
      cos.rank != 2 || sin.rank != 2 || k_cache.rank != 3 || v_cache.rank != 3) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = k_new.shape[0], HK = k_new.shape[1], D = k_new.shape[2];
  const int64_t S = k_cache.shape[0];
  if (T < 0 || HK < 0 || D < 0 || S < 0 || D % 2 != 0 || !has_shape(v_new, T, HK, D) ||
      positions.shape[0] != T || !has_shape(k_cache, S, HK, D) || !has_shape(v_cache, S, HK, D) ||
      cos.shape[0] != S || cos.shape[1] != D / 2 || sin.shape[0] != S || sin.shape[1] != D / 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (T == 0 || HK == 0 || D == 0) return KILN_OK;
  const kiln_tensor* all[] = {&k_new, &v_new, &positions, &cos, &sin, &k_cache, &v_cache};
  for (const kiln_tensor* t : all) {
    if (t->data == nullptr) return KILN_ERR_BAD_ARGUMENT;
    if (!is_contiguous(*t) || !aligned16(t->data)) return KILN_ERR_UNSUPPORTED;
  }
  if (D % 16 != 0) return KILN_ERR_UNSUPPORTED;

  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kv_cache_append_rope_kernel, kThreads,
                                                    0) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  // One unit per thread where the problem is small (a decode step: T x HK x D/16 units), at most
  // one wave of resident blocks that strides where it is large.
  const int64_t units = T * HK * (D / 16);
  int64_t blocks = (units + kThreads - 1) / kThreads;
  const int64_t max_blocks =
      static_cast<int64_t>(sms > 0 ? sms : 1) * static_cast<int64_t>(per_sm > 0 ? per_sm : 1);
  if (blocks > max_blocks) blocks = max_blocks;
  kv_cache_append_rope_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(k_new.data), static_cast<const __nv_bfloat16*>(v_new.data),
      static_cast<const int32_t*>(positions.data), static_cast<const float*>(cos.data),
      static_cast<const float*>(sin.data), static_cast<__nv_bfloat16*>(k_cache.data),
      static_cast<__nv_bfloat16*>(v_cache.data), T, HK, D, S);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
