// swiglu_fused_bf16: y[t, f] = silu(x[t, f]) * x[t, F + f] for x[T, 2F] (bf16), y[T, F] (bf16),
// fp32 math, one rounding: the activation after a fused gate/up projection, whose output row
// holds the F gate values followed by the F up values.
//
// The output is cut into 16-byte vectors of 8 elements (F a multiple of 8, pointers 16-byte
// aligned): vector v is row v / (F/8), chunk v % (F/8). A grid of at most SMs x 8 blocks of
// 256 threads strides over the vectors; each step is two 128-bit loads (gate chunk, up chunk at
// +F) and one 128-bit store. Otherwise (F % 8 != 0 or unaligned) a scalar loop does the same.
// Requirements: x and y contiguous (else KILN_ERR_UNSUPPORTED); any T, F.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;

// expf(-g) overflows to +inf for g < -88.7, and g / inf = -0: the right limit.
__device__ __forceinline__ float silu_mul(float g, float u) { return g / (1.f + expf(-g)) * u; }

__device__ __forceinline__ uint32_t silu_mul_pair(uint32_t g2, uint32_t u2) {
  __nv_bfloat162 g;
  __nv_bfloat162 u;
  memcpy(&g, &g2, sizeof g);
  memcpy(&u, &u2, sizeof u);
  const float2 gf = __bfloat1622float2(g);
  const float2 uf = __bfloat1622float2(u);
  const __nv_bfloat162 out = __floats2bfloat162_rn(silu_mul(gf.x, uf.x), silu_mul(gf.y, uf.y));
  uint32_t r;
  memcpy(&r, &out, sizeof r);
  return r;
}

__global__ void __launch_bounds__(kThreads)
    swiglu_vector_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t rows,
                         int64_t chunks) {  // chunks = F / 8 per row
  const int64_t total = rows * chunks;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
#pragma unroll 2  // two gate/up pairs of loads in flight per thread
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; v < total;
       v += stride) {
    const int64_t t = v / chunks;
    const int64_t c = v - t * chunks;
    const uint4 g = __ldg(x + t * 2 * chunks + c);
    const uint4 u = __ldg(x + t * 2 * chunks + chunks + c);
    uint4 o;
    o.x = silu_mul_pair(g.x, u.x);
    o.y = silu_mul_pair(g.y, u.y);
    o.z = silu_mul_pair(g.z, u.z);
    o.w = silu_mul_pair(g.w, u.w);
    y[v] = o;
  }
}

__global__ void __launch_bounds__(kThreads)
    swiglu_scalar_kernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y,
                         int64_t rows, int64_t F) {
  const int64_t total = rows * F;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += stride) {
    const int64_t t = i / F;
    const int64_t f = i - t * F;
    const float g = __bfloat162float(x[t * 2 * F + f]);
    const float u = __bfloat162float(x[t * 2 * F + F + f]);
    y[i] = __float2bfloat16_rn(silu_mul(g, u));
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
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];  // x[T, 2F]
  const kiln_tensor& y = tensors[1];  // y[T, F]
  if (x.dtype != KILN_BF16 || y.dtype != KILN_BF16 || x.rank != 2 || y.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = y.shape[0], F = y.shape[1];
  if (T < 0 || F < 0 || x.shape[0] != T || x.shape[1] != 2 * F) return KILN_ERR_BAD_ARGUMENT;
  if (T == 0 || F == 0) return KILN_OK;
  if (x.data == nullptr || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  if (!is_contiguous(x) || !is_contiguous(y)) return KILN_ERR_UNSUPPORTED;

  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const bool vectors = F % 8 == 0 && aligned16(x.data) && aligned16(y.data);
  const int64_t work = vectors ? T * (F / 8) : T * F;
  int64_t blocks = (work + kThreads - 1) / kThreads;
  const int64_t max_blocks = static_cast<int64_t>(sms > 0 ? sms : 1) * kBlocksPerSm;
  if (blocks > max_blocks) blocks = max_blocks;
  if (vectors) {
    swiglu_vector_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const uint4*>(x.data), static_cast<uint4*>(y.data), T, F / 8);
  } else {
    swiglu_scalar_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x.data), static_cast<__nv_bfloat16*>(y.data), T, F);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
