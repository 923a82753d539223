// add_rmsnorm_fp8_bf16: the fused pre-GEMM step of an fp8 transformer layer, in one pass over
// the row. For bf16 x[T, H], residual[T, H], w[H] (H a multiple of 128):
//   h            = bf16(x + residual)                     -> residual_out[T, H] (bf16)
//   y            = h / sqrt(mean(h^2) + eps) * w          (fp32, from the rounded h)
//   scales[t, g] = max |y| over channels 128g..128g+127 / 448   (f32; 1 for an all-zero group)
//   q[t, c]      = e4m3(y[t, c] / scales[t, c / 128])     (saturating, nearest even)
// so that y ~ q * scale with 1x128 blocks, the activation scaling of DeepSeek-V3-style fp8 GEMMs.
//
// Fast path (H <= kFastThreads * kFastVecs * 8 = 8192 by default): one block per row keeps
// the row in registers. Every thread issues all its 128-bit loads of x and residual (2 x 16 KB
// per row at H = 8192) before any arithmetic, so the block has the whole row in flight; h stays
// in registers (no shared-memory round trip, no second pass). residual_out is written with
// streaming 128-bit stores (__stcs). q: lanes 2j and 2j+1 hold adjacent vectors, so they swap
// 8 bytes by one shuffle and each stores a full 16-byte vector (two k steps at once): every q
// store is 128 bits, 16 lanes x 16 B = 256 contiguous bytes per instruction.
// Built for sm_90a (meta.json "arch"): cuda_fp8.h's __nv_cvt_float2_to_fp8x2 then is one
// cvt.rn.satfinite.e4m3x2.f32 instruction per pair instead of the sm_80 software conversion
// (tens of integer instructions per value), which at 8 bytes written per 8 values otherwise
// makes the quantize step compete with the loads for issue slots (NOTES.md).
// Longer rows take the general kernel below (h in shared memory).
//
// General kernel: one block of 256 threads per row. Pass 1: each thread loads 128-bit vectors
// of x and residual (8 bf16 each), adds in fp32, rounds to bf16, stores residual_out, keeps h in
// shared memory (H * 2 bytes) and sums h^2; a warp-shuffle + shared-memory reduction gives 1/rms.
// Pass 2 reads h back from shared memory, scales by 1/rms and w (128-bit loads of w). A group
// of 128 channels is 16 vectors held by 16 consecutive lanes of one warp, so its absolute
// maximum is 4 shuffle steps within a half-warp; each lane then quantizes its 8 values and
// stores them as 8 bytes, and the first lane of each half-warp writes the group's scale.
// HBM traffic per row: 4H bytes read, 3H written (+ H/32 for scales); x, residual, w never reread.
//
// Requirements: H % 128 == 0, H <= 24576 (h fits in 48 KiB of shared memory), 16-byte aligned
// contiguous tensors (else KILN_ERR_UNSUPPORTED). The fp8 conversion is cuda_fp8.h's
// __nv_cvt_float2_to_fp8x2 (__NV_SATFINITE, round to nearest even) in both kernels.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kGroup = 128;               // channels per scale
constexpr int kLanesPerGroup = kGroup / 8;  // 16 lanes of 8 channels
constexpr int64_t kMaxH = 24576;
constexpr float kE4m3Max = 448.f;

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

__device__ __forceinline__ float block_sum(float v, float* shared) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += shared[w];  // same order in every thread
  return total;
}

__global__ void __launch_bounds__(kThreads)
    add_rmsnorm_fp8_kernel(const uint4* __restrict__ x, const uint4* __restrict__ residual,
                           const uint4* __restrict__ w, uint4* __restrict__ residual_out,
                           uint2* __restrict__ q, float* __restrict__ scales, int64_t H,
                           float eps) {
  extern __shared__ uint4 h_row[];  // H / 8 vectors of h (bf16)
  __shared__ float partial[kWarps];
  const int64_t t = blockIdx.x;
  const int nvec = static_cast<int>(H / 8);
  const int64_t row = t * nvec;

  float squares = 0.f;
  for (int v = threadIdx.x; v < nvec; v += kThreads) {
    float a[8], b[8];
    to_floats(__ldg(x + row + v), a);
    to_floats(__ldg(residual + row + v), b);
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] += b[i];
    const uint4 h = to_bf16x8(a);  // h is the rounded sum: the norm uses what is stored
    residual_out[row + v] = h;
    h_row[v] = h;
    float r[8];
    to_floats(h, r);
#pragma unroll
    for (int i = 0; i < 8; ++i) squares = fmaf(r[i], r[i], squares);
  }
  const float inverse_rms = rsqrtf(block_sum(squares, partial) / static_cast<float>(H) + eps);

  // Pass 2. The loop bound is uniform per warp, so every lane reaches the shuffles.
  const int lane = threadIdx.x % 32;
  for (int base = 0; base < nvec; base += kThreads) {
    const int v = base + threadIdx.x;
    const bool active = v < nvec;
    float y[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    float amax = 0.f;
    if (active) {
      float h[8], g[8];
      to_floats(h_row[v], h);
      to_floats(__ldg(w + v), g);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        y[i] = h[i] * inverse_rms * g[i];
        amax = fmaxf(amax, fabsf(y[i]));
      }
    }
#pragma unroll
    for (int offset = kLanesPerGroup / 2; offset > 0; offset /= 2)
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    if (!active) continue;
    const float scale = amax > 0.f ? amax / kE4m3Max : 1.f;
    uint32_t packed[2] = {0, 0};
#pragma unroll
    for (int i = 0; i < 8; i += 2) {
      const __nv_fp8x2_storage_t pair = __nv_cvt_float2_to_fp8x2(
          make_float2(y[i] / scale, y[i + 1] / scale), __NV_SATFINITE, __NV_E4M3);
      packed[i / 4] |= static_cast<uint32_t>(pair) << (8 * (i % 4));
    }
    q[row + v] = make_uint2(packed[0], packed[1]);
    if (lane % kLanesPerGroup == 0) scales[t * (H / kGroup) + v / kLanesPerGroup] = scale;
  }
}

// ---- Fast path: the row in registers ----------------------------------------------------

constexpr int kFastThreads = 256;  // tunable: 256 or 512 (kFastVecs 4 or 2 keeps H = 8192)
constexpr int kFastVecs = 4;       // uint4 per thread at the largest instantiation (even)
constexpr int kFastMinBlocks = 4;  // __launch_bounds__ min blocks/SM (caps regs at 64 for 256)

template <int kThreads>
__device__ __forceinline__ float block_sum_t(float v, float* shared) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) total += shared[w];  // same order in every thread
  return total;
}

// 8 values / scale -> 8 e4m3 bytes (saturating, nearest even), as the general kernel does.
__device__ __forceinline__ uint2 quantize8(const float (&y)[8], float scale) {
  uint32_t packed[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < 8; i += 2) {
    const __nv_fp8x2_storage_t pair = __nv_cvt_float2_to_fp8x2(
        make_float2(y[i] / scale, y[i + 1] / scale), __NV_SATFINITE, __NV_E4M3);
    packed[i / 4] |= static_cast<uint32_t>(pair) << (8 * (i % 4));
  }
  return make_uint2(packed[0], packed[1]);
}

template <int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads, kFastMinBlocks)
    add_rmsnorm_fp8_rows_kernel(const uint4* __restrict__ x, const uint4* __restrict__ residual,
                                const uint4* __restrict__ w, uint4* __restrict__ residual_out,
                                uint2* __restrict__ q, float* __restrict__ scales, int nvec,
                                float inv_h, float eps) {
  __shared__ float partial[kThreads / 32];
  const int64_t t = blockIdx.x;
  const int64_t row = t * nvec;
  const int lane = threadIdx.x % 32;

  uint4 hv[kVecs];
  {
    uint4 rv[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {  // every load of the row issued before any use
      const int v = threadIdx.x + k * kThreads;
      const bool active = v < nvec;
      hv[k] = active ? __ldcs(x + row + v) : make_uint4(0u, 0u, 0u, 0u);
      rv[k] = active ? __ldcs(residual + row + v) : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      float a[8], b[8];
      to_floats(hv[k], a);
      to_floats(rv[k], b);
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] += b[i];
      hv[k] = to_bf16x8(a);  // h is the rounded sum: the norm uses what is stored
    }
  }
  float squares = 0.f;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = threadIdx.x + k * kThreads;
    if (v < nvec) __stcs(residual_out + row + v, hv[k]);
    float r[8];
    to_floats(hv[k], r);  // zeros for absent vectors
#pragma unroll
    for (int i = 0; i < 8; ++i) squares = fmaf(r[i], r[i], squares);
  }
  const float inverse_rms = rsqrtf(block_sum_t<kThreads>(squares, partial) * inv_h + eps);

  // Normalize, group maxima, quantize. Loop bounds are compile-time: every lane reaches the
  // shuffles; H % 128 == 0 makes nvec a multiple of 16, so a group (16 lanes) and a lane pair
  // are either wholly active or wholly absent.
  uint2 qv[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int v = threadIdx.x + k * kThreads;
    const bool active = v < nvec;
    float y[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    float amax = 0.f;
    if (active) {
      float h[8], g[8];
      to_floats(hv[k], h);
      to_floats(__ldg(w + v), g);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        y[i] = h[i] * inverse_rms * g[i];
        amax = fmaxf(amax, fabsf(y[i]));
      }
    }
#pragma unroll
    for (int offset = kLanesPerGroup / 2; offset > 0; offset /= 2)
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    const float scale = amax > 0.f ? amax / kE4m3Max : 1.f;
    qv[k] = active ? quantize8(y, scale) : make_uint2(0u, 0u);
    if (active && lane % kLanesPerGroup == 0) {
      scales[t * (nvec / kLanesPerGroup) + v / kLanesPerGroup] = scale;
    }
  }
  // 16-byte q stores: for steps (k, k + 1), the even lane of a pair stores both lanes' bytes of
  // step k, the odd lane both lanes' bytes of step k + 1.
  const bool odd = lane & 1;
  uint4* q16 = reinterpret_cast<uint4*>(q);
#pragma unroll
  for (int k = 0; k + 1 < kVecs; k += 2) {
    const uint2 give = odd ? qv[k] : qv[k + 1];
    uint2 got;
    got.x = __shfl_xor_sync(0xffffffffu, give.x, 1);
    got.y = __shfl_xor_sync(0xffffffffu, give.y, 1);
    const int ks = odd ? k + 1 : k;          // the step this lane stores
    const int v = threadIdx.x + ks * kThreads;  // this lane's vector in that step
    if (v < nvec) {
      const uint2 mine = odd ? qv[k + 1] : qv[k];
      const uint4 out = odd ? make_uint4(got.x, got.y, mine.x, mine.y)
                            : make_uint4(mine.x, mine.y, got.x, got.y);
      __stcs(q16 + (row + (v & ~1)) / 2, out);
    }
  }
  if (kVecs % 2 == 1) {  // an odd last step keeps 8-byte stores
    const int v = threadIdx.x + (kVecs - 1) * kThreads;
    if (v < nvec) q[row + v] = qv[kVecs - 1];
  }
}

// Smallest instantiation whose capacity holds the row; false when none does.
bool launch_rows(unsigned grid, const void* x, const void* r, const void* w, void* ro, void* q,
                 void* s, int64_t H, float eps, cudaStream_t stream) {
  if (H > int64_t{kFastThreads} * kFastVecs * 8) return false;
  const int nvec = static_cast<int>(H / 8);
  const float inv_h = 1.f / static_cast<float>(H);
  const auto* x8 = static_cast<const uint4*>(x);
  const auto* r8 = static_cast<const uint4*>(r);
  const auto* w8 = static_cast<const uint4*>(w);
  auto* ro8 = static_cast<uint4*>(ro);
  auto* q8 = static_cast<uint2*>(q);
  auto* sp = static_cast<float*>(s);
  if (nvec <= 2 * kFastThreads) {
    add_rmsnorm_fp8_rows_kernel<kFastThreads, 2>
        <<<grid, kFastThreads, 0, stream>>>(x8, r8, w8, ro8, q8, sp, nvec, inv_h, eps);
  } else {
    add_rmsnorm_fp8_rows_kernel<kFastThreads, kFastVecs>
        <<<grid, kFastThreads, 0, stream>>>(x8, r8, w8, ro8, q8, sp, nvec, inv_h, eps);
  }
  return true;
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
  if (tensors == nullptr || n_tensors != 6 || scalars == nullptr || n_scalars != 1 ||
      scalars[0].dtype != KILN_F64) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor& x = tensors[0];             // x[T, H]
  const kiln_tensor& residual = tensors[1];      // residual[T, H]
  const kiln_tensor& w = tensors[2];             // w[H]
  const kiln_tensor& residual_out = tensors[3];  // residual_out[T, H]
  const kiln_tensor& q = tensors[4];             // q[T, H] e4m3
  const kiln_tensor& scales = tensors[5];        // scales[T, H / 128] f32
  if (x.dtype != KILN_BF16 || residual.dtype != KILN_BF16 || w.dtype != KILN_BF16 ||
      residual_out.dtype != KILN_BF16 || q.dtype != KILN_E4M3 || scales.dtype != KILN_F32 ||
      x.rank != 2 || residual.rank != 2 || w.rank != 1 || residual_out.rank != 2 || q.rank != 2 ||
      scales.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1];
  if (T < 0 || H < 0 || H % kGroup != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor* rows[] = {&residual, &residual_out, &q};
  for (const kiln_tensor* r : rows) {
    if (r->shape[0] != T || r->shape[1] != H) return KILN_ERR_BAD_ARGUMENT;
  }
  if (w.shape[0] != H || scales.shape[0] != T || scales.shape[1] != H / kGroup) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (T == 0 || H == 0) return KILN_OK;
  if (H > kMaxH || T > 0x7fffffff) return KILN_ERR_UNSUPPORTED;
  const kiln_tensor* all[] = {&x, &residual, &w, &residual_out, &q, &scales};
  for (const kiln_tensor* t : all) {
    if (t->data == nullptr) return KILN_ERR_BAD_ARGUMENT;
    if (!is_contiguous(*t) || !aligned16(t->data)) return KILN_ERR_UNSUPPORTED;
  }
  const float e = static_cast<float>(scalars[0].value.f);
  if (launch_rows(static_cast<unsigned>(T), x.data, residual.data, w.data, residual_out.data,
                  q.data, scales.data, H, e, stream)) {
    return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
  }
  const size_t smem = static_cast<size_t>(H) * 2;
  add_rmsnorm_fp8_kernel<<<static_cast<unsigned>(T), kThreads, smem, stream>>>(
      static_cast<const uint4*>(x.data), static_cast<const uint4*>(residual.data),
      static_cast<const uint4*>(w.data), static_cast<uint4*>(residual_out.data),
      static_cast<uint2*>(q.data), static_cast<float*>(scales.data), H,
      static_cast<float>(scalars[0].value.f));
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
