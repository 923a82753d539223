// rope_halfsplit_bf16: rotary position embedding on bf16 q[T, HQ, D] and k[T, HK, D], half-split
// (GPT-NeoX / Llama "rotate_half") layout: element i of a head pairs with element i + D/2. With
// p = positions[t] and the f32 cache cos[P, D/2], sin[P, D/2], for i < D/2:
//   out[i]       = x[i] * cos[p, i] - x[i + D/2] * sin[p, i]
//   out[i + D/2] = x[i + D/2] * cos[p, i] + x[i] * sin[p, i]
// fp32 math, one rounding to bf16. q and k are rotated in one launch.
//
// In place: q_out may be q and k_out may be k (the usual use: rotate Q/K where they lie). Each
// thread reads the elements it writes, and only those, before writing them, so aliasing is safe;
// the pointers are deliberately not __restrict__ and the loads are not __ldg.
//
// Work unit: 8 pairs of one (token, head): two 128-bit loads of x (i..i+7 and i+D/2..i+D/2+7),
// 128-bit loads of 8 cos and 8 sin (f32, 2 x 16 bytes each), two 128-bit stores. Needs D % 16 == 0
// and 16-byte aligned tensors; otherwise a scalar loop over pairs does the same. A grid of at most
// SMs x 8 blocks of 256 threads strides over the units of q, then k. A position outside [0, P)
// leaves that token's outputs NaN. All tensors contiguous (else KILN_ERR_UNSUPPORTED).
//
// One real wave and 32-bit index math (issue 18). The entry's first version launched an SMs x 8
// grid, which assumed 8 resident blocks per SM, but its 48 registers allow 5: the grid ran as 1.6
// waves, the last 0.6 with a fraction of the bytes in flight. Here the grid is SMs x the
// resident blocks from the occupancy API. And every unit's (token, head, chunk) came from three
// 64-bit divisions (a ~70-instruction software routine each); the vector kernel is now a
// template on the index type and takes 32-bit indices whenever T x (HQ + HK) x D / 16 fits.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // the scalar kernel's grid; the vector one asks the occupancy API

struct Tensors {
  const __nv_bfloat16* q;
  const __nv_bfloat16* k;
  const int32_t* positions;
  const float* cos;
  const float* sin;
  __nv_bfloat16* q_out;
  __nv_bfloat16* k_out;
  int64_t T, HQ, HK, half, P;
};

__device__ __forceinline__ void to_floats(const uint4& v, float (&f)[8]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h;
    memcpy(&h, &w[i], sizeof h);
    const float2 p = __bfloat1622float2(h);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

__device__ __forceinline__ uint4 to_bf16x8(const float (&f)[8]) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    memcpy(&w[i], &h, sizeof h);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// The head's first element for unit (t, head) across q then k, and where it goes.
__device__ __forceinline__ void locate(const Tensors& a, int64_t t, int64_t head,
                                       const __nv_bfloat16*& in, __nv_bfloat16*& out) {
  const int64_t D = 2 * a.half;
  if (head < a.HQ) {
    in = a.q + (t * a.HQ + head) * D;
    out = a.q_out + (t * a.HQ + head) * D;
  } else {
    in = a.k + (t * a.HK + head - a.HQ) * D;
    out = a.k_out + (t * a.HK + head - a.HQ) * D;
  }
}

// Index is int32_t when the unit count and every element offset fit in it, int64_t otherwise.
template <typename Index>
__global__ void __launch_bounds__(kThreads) rope_vector_kernel(Tensors a) {
  const Index chunks = static_cast<Index>(a.half / 8);  // units per head
  const Index heads = static_cast<Index>(a.HQ + a.HK);
  const Index total = static_cast<Index>(a.T) * heads * chunks;
  const Index stride = static_cast<Index>(gridDim.x) * kThreads;
  for (Index u = static_cast<Index>(blockIdx.x) * kThreads + threadIdx.x; u < total;
       u += stride) {
    const Index row = u / chunks;  // (token, head) pair
    const Index c = u - row * chunks;
    const Index t = row / heads;
    const Index head = row - t * heads;
    const __nv_bfloat16* in;
    __nv_bfloat16* out;
    locate(a, t, head, in, out);
    const int32_t p = a.positions[t];
    const int64_t i = 8 * c;
    float lo[8], hi[8];
    to_floats(*reinterpret_cast<const uint4*>(in + i), lo);
    to_floats(*reinterpret_cast<const uint4*>(in + a.half + i), hi);
    if (p < 0 || p >= a.P) {
#pragma unroll
      for (int j = 0; j < 8; ++j) lo[j] = hi[j] = NAN;
    } else {
      const float4* cs = reinterpret_cast<const float4*>(a.cos + p * a.half + i);
      const float4* sn = reinterpret_cast<const float4*>(a.sin + p * a.half + i);
      const float4 c0 = __ldg(cs), c1 = __ldg(cs + 1), s0 = __ldg(sn), s1 = __ldg(sn + 1);
      const float cv[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
      const float sv[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float x0 = lo[j], x1 = hi[j];
        lo[j] = x0 * cv[j] - x1 * sv[j];
        hi[j] = x1 * cv[j] + x0 * sv[j];
      }
    }
    *reinterpret_cast<uint4*>(out + i) = to_bf16x8(lo);
    *reinterpret_cast<uint4*>(out + a.half + i) = to_bf16x8(hi);
  }
}

__global__ void __launch_bounds__(kThreads) rope_scalar_kernel(Tensors a) {
  const int64_t heads = a.HQ + a.HK;
  const int64_t total = a.T * heads * a.half;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; u < total;
       u += stride) {
    const int64_t i = u % a.half;
    const int64_t head = (u / a.half) % heads;
    const int64_t t = u / (a.half * heads);
    const __nv_bfloat16* in;
    __nv_bfloat16* out;
    locate(a, t, head, in, out);
    const int32_t p = a.positions[t];
    const float x0 = __bfloat162float(in[i]);
    const float x1 = __bfloat162float(in[i + a.half]);
    float y0 = NAN, y1 = NAN;
    if (p >= 0 && p < a.P) {
      const float c = a.cos[p * a.half + i], s = a.sin[p * a.half + i];
      y0 = x0 * c - x1 * s;
      y1 = x1 * c + x0 * s;
    }
    out[i] = __float2bfloat16_rn(y0);
    out[i + a.half] = __float2bfloat16_rn(y1);
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

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 7 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& q = tensors[0];          // q[T, HQ, D]
  const kiln_tensor& k = tensors[1];          // k[T, HK, D]
  const kiln_tensor& positions = tensors[2];  // positions[T]
  const kiln_tensor& cos = tensors[3];        // cos[P, D/2]
  const kiln_tensor& sin = tensors[4];        // sin[P, D/2]
  const kiln_tensor& q_out = tensors[5];      // q_out[T, HQ, D]
  const kiln_tensor& k_out = tensors[6];      // k_out[T, HK, D]
  if (q.dtype != KILN_BF16 || k.dtype != KILN_BF16 || positions.dtype != KILN_I32 ||
      cos.dtype != KILN_F32 || sin.dtype != KILN_F32 || q_out.dtype != KILN_BF16 ||
      k_out.dtype != KILN_BF16 || q.rank != 3 || k.rank != 3 || positions.rank != 1 ||
      cos.rank != 2 || sin.rank != 2 || q_out.rank != 3 || k_out.rank != 3) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = q.shape[0], HQ = q.shape[1], D = q.shape[2], HK = k.shape[1];
  const int64_t P = cos.shape[0];
  if (T < 0 || HQ < 0 || HK < 0 || D < 0 || P < 0 || D % 2 != 0 || k.shape[0] != T ||
      k.shape[2] != D || positions.shape[0] != T || cos.shape[1] != D / 2 || sin.shape[0] != P ||
      sin.shape[1] != D / 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  for (int d = 0; d < 3; ++d) {
    if (q_out.shape[d] != q.shape[d] || k_out.shape[d] != k.shape[d]) return KILN_ERR_BAD_ARGUMENT;
  }
  if (T == 0 || D == 0 || HQ + HK == 0) return KILN_OK;
  const kiln_tensor* all[] = {&q, &k, &positions, &cos, &sin, &q_out, &k_out};
  bool aligned = true;
  for (const kiln_tensor* t : all) {
    const bool empty = t->shape[0] == 0 || (t->rank > 1 && t->shape[1] == 0);
    if (t->data == nullptr && !empty) return KILN_ERR_BAD_ARGUMENT;
    if (!is_contiguous(*t)) return KILN_ERR_UNSUPPORTED;
    aligned = aligned && aligned16(t->data);
  }

  const bool vectors_ok = D % 16 == 0 && aligned;
  // Offsets reach T x (HQ + HK) x D elements of q/k and P x D/2 of cos/sin (+ u's stride).
  const int64_t span = T * (HQ + HK) * D + P * (D / 2) + T + (int64_t{1} << 24);
  const bool narrow = span < (int64_t{1} << 31);
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  if (vectors_ok &&
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, narrow ? rope_vector_kernel<int32_t> : rope_vector_kernel<int64_t>, kThreads,
          0) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  Tensors a{static_cast<const __nv_bfloat16*>(q.data),
            static_cast<const __nv_bfloat16*>(k.data),
            static_cast<const int32_t*>(positions.data),
            static_cast<const float*>(cos.data),
            static_cast<const float*>(sin.data),
            static_cast<__nv_bfloat16*>(q_out.data),
            static_cast<__nv_bfloat16*>(k_out.data),
            T,
            HQ,
            HK,
            D / 2,
            P};
  const bool vectors = vectors_ok;
  const int64_t work = T * (HQ + HK) * (vectors ? D / 16 : D / 2);
  int64_t blocks = (work + kThreads - 1) / kThreads;
  const int64_t max_blocks = static_cast<int64_t>(sms > 0 ? sms : 1) *
                             (vectors && per_sm > 0 ? per_sm : kBlocksPerSm);
  if (blocks > max_blocks) blocks = max_blocks;
  if (vectors) {
    if (narrow) {
      rope_vector_kernel<int32_t><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    } else {
      rope_vector_kernel<int64_t><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    }
  } else {
    rope_scalar_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
