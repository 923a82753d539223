// kv_cache_append_rope: the KV-cache write of a decode (or chunked-prefill) step, fused with the
// rotary embedding of the new keys. For token t < T at position p = positions[t]:
//   k_cache[p, h, :] = rope(k_new[t, h, :], p)   (half-split pairs (i, i + D/2), cos/sin[p, i])
//   v_cache[p, h, :] = v_new[t, h, :]
// bf16 k_new, v_new[T, HK, D]; f32 cos, sin[S, D/2]; bf16 k_cache, v_cache[S, HK, D]. Only the
// rows at the positions are written; the rest of the caches (earlier tokens) is never touched.
// Positions must be distinct (two tokens writing one row race); a position outside [0, S)
// writes nothing for that token rather than outside the cache.
//
// One flat index space over T x HK x D/16 units. A unit is 8 rotation pairs of one head: one
// 16-byte load from each half of k_new (channels i0..i0+7 and i0+D/2..), the same two of v_new,
// two 32-byte loads of the cos and sin row, and four 16-byte stores into the caches' row p.
// Loads first: each thread issues positions[t] and its 4 k/v loads (64 bytes) together (they
// are in bounds whatever p is), so no thread waits one HBM round trip for positions[t] before
// asking for its data; then cos/sin (they need p); V is stored as soon as p is known, and only
// then does K wait for cos/sin to rotate. kUnits units per thread are all loaded first.
// Grid: one unit group per thread where it fits in one wave of resident blocks, else one wave
// striding over the units.
//
// Requirements: D % 16 == 0, contiguous, 16-byte aligned tensors (else KILN_ERR_UNSUPPORTED).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

// Tunables (H200): threads per block (128, 256) and units per thread (all loaded first). kUnits
// = 1 asks ptxas for 2048 resident threads per SM (32 registers, no spill); kUnits = 2 needs
// 91 registers with 32-bit offsets (110 with int64; about 640 threads per SM).
constexpr int kThreads = 128;
constexpr int kUnits = 1;
constexpr int kMinBlocks = kUnits == 1 ? 2048 / kThreads : 1;  // resident blocks/SM for ptxas

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

// Index: int32_t where every element offset fits (the measured shape), else int64_t. 32-bit
// offsets keep the thread at <= 32 registers, so 16 blocks of 128 threads are resident per SM
// and one wave covers T x HK x D/16 = 262144 units at the measured shape.
template <typename Index>
__global__ void __launch_bounds__(kThreads, sizeof(Index) == 4 ? kMinBlocks : 1)
    kv_cache_append_rope_kernel(const __nv_bfloat16* __restrict__ k_new,
                                const __nv_bfloat16* __restrict__ v_new,
                                const int32_t* __restrict__ positions,
                                const float* __restrict__ cos, const float* __restrict__ sin,
                                __nv_bfloat16* __restrict__ k_cache,
                                __nv_bfloat16* __restrict__ v_cache, Index T, Index HK, Index D,
                                Index S) {
  const Index units_per_head = D / 16;
  const Index units_per_token = HK * units_per_head;
  const Index units = T * units_per_token;
  const Index half = D / 2;
  const Index row = HK * D;  // elements of one token's row (all heads)
  constexpr Index kPerBlock = static_cast<Index>(kThreads) * kUnits;
  const Index stride = static_cast<Index>(gridDim.x) * kPerBlock;
  for (Index first = static_cast<Index>(blockIdx.x) * kPerBlock + threadIdx.x; first < units;
       first += stride) {
    Index from[kUnits], within[kUnits], p[kUnits];
    uint4 k_lo[kUnits], k_hi[kUnits], v_lo[kUnits], v_hi[kUnits];
    bool ok[kUnits];
#pragma unroll
    for (int j = 0; j < kUnits; ++j) {  // positions and k/v: independent, all in flight
      const Index u = first + j * kThreads;
      ok[j] = u < units;
      if (!ok[j]) continue;
      const Index t = u / units_per_token;
      const Index rest = u - t * units_per_token;  // h * units_per_head + unit of the head
      // Channel i0 of head h: offset within the token's row, the same in the new rows and in
      // cache row p.
      within[j] = (rest / units_per_head) * D + (rest % units_per_head) * 8;
      from[j] = t * row + within[j];
      p[j] = __ldg(positions + t);
      k_lo[j] = __ldg(reinterpret_cast<const uint4*>(k_new + from[j]));
      k_hi[j] = __ldg(reinterpret_cast<const uint4*>(k_new + from[j] + half));
      v_lo[j] = __ldg(reinterpret_cast<const uint4*>(v_new + from[j]));
      v_hi[j] = __ldg(reinterpret_cast<const uint4*>(v_new + from[j] + half));
    }
    float c[kUnits][8], s[kUnits][8];
#pragma unroll
    for (int j = 0; j < kUnits; ++j) {  // cos/sin rows of the positions
      ok[j] = ok[j] && p[j] >= 0 && p[j] < S;
      if (!ok[j]) continue;
      const Index i0 = within[j] % D;  // < D/2
      load8(cos + p[j] * half + i0, c[j]);
      load8(sin + p[j] * half + i0, s[j]);
    }
#pragma unroll
    for (int j = 0; j < kUnits; ++j) {  // V needs only p: out before K's rotation waits
      if (!ok[j]) continue;
      __nv_bfloat16* to = v_cache + (p[j] * row + within[j]);
      *reinterpret_cast<uint4*>(to) = v_lo[j];
      *reinterpret_cast<uint4*>(to + half) = v_hi[j];
    }
#pragma unroll
    for (int j = 0; j < kUnits; ++j) {
      if (!ok[j]) continue;
      rotate(k_lo[j], k_hi[j], c[j], s[j]);
      __nv_bfloat16* to = k_cache + (p[j] * row + within[j]);
      *reinterpret_cast<uint4*>(to) = k_lo[j];
      *reinterpret_cast<uint4*>(to + half) = k_hi[j];
    }
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

  // 32-bit element offsets where every one (and the grid stride past the last unit) fits.
  const bool narrow = (T > S ? T : S) * HK * D <= INT32_MAX / 2;
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      (narrow ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                    &per_sm, kv_cache_append_rope_kernel<int32_t>, kThreads, 0)
              : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                    &per_sm, kv_cache_append_rope_kernel<int64_t>, kThreads, 0)) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  // kUnits units per thread where they fit in one wave of resident blocks, else one wave that
  // strides.
  const int64_t units = T * HK * (D / 16);
  const int64_t per_block = static_cast<int64_t>(kThreads) * kUnits;
  int64_t blocks = (units + per_block - 1) / per_block;
  const int64_t max_blocks =
      static_cast<int64_t>(sms > 0 ? sms : 1) * static_cast<int64_t>(per_sm > 0 ? per_sm : 1);
  if (blocks > max_blocks) blocks = max_blocks;
  const auto* kp = static_cast<const __nv_bfloat16*>(k_new.data);
  const auto* vp = static_cast<const __nv_bfloat16*>(v_new.data);
  const auto* pp = static_cast<const int32_t*>(positions.data);
  const auto* cp = static_cast<const float*>(cos.data);
  const auto* sp = static_cast<const float*>(sin.data);
  auto* kc = static_cast<__nv_bfloat16*>(k_cache.data);
  auto* vc = static_cast<__nv_bfloat16*>(v_cache.data);
  const auto grid = static_cast<unsigned>(blocks);
  if (narrow) {
    kv_cache_append_rope_kernel<int32_t><<<grid, kThreads, 0, stream>>>(
        kp, vp, pp, cp, sp, kc, vc, static_cast<int32_t>(T), static_cast<int32_t>(HK),
        static_cast<int32_t>(D), static_cast<int32_t>(S));
  } else {
    kv_cache_append_rope_kernel<int64_t><<<grid, kThreads, 0, stream>>>(kp, vp, pp, cp, sp, kc,
                                                                        vc, T, HK, D, S);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
