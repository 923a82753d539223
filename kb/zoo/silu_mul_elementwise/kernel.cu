// silu_mul_elementwise: y[i] = gate[i] * sigmoid(gate[i]) * up[i], bf16 in and out, fp32 math.
//
// A grid of at most (SMs x 8) blocks of 256 threads strides over the arrays. When gate, up and
// y are all 16-byte aligned, each step moves 8 elements per thread with one 128-bit load from
// each input and one 128-bit store; the last N % 8 elements (the tail) are handled one at a
// time by the first threads of the grid. Unaligned arrays take the scalar path throughout.
// Each output is rounded to bf16 once.
//
// Any N >= 0 works; all three tensors must be contiguous.
//
// One real wave: __launch_bounds__(256, 8) caps the kernel at 32 registers so that the
// 8 blocks per SM the grid assumes are all resident. Unbounded it took 37 registers, which allow
// only 6 blocks of 256 per SM: the SMs x 8 grid then ran as 1.33 waves, the last third of the
// blocks alone on the GPU with a quarter of the bytes in flight. Unroll 1 (was 2) keeps it
// at 32 registers without spills; 2048 threads x 32 bytes is 64 KiB in flight per SM.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // resident blocks per SM (the launch bounds make it so)

// silu(g) * u. expf(-g) overflows to +inf for g < -88.7, and g / inf = -0: the right limit.
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

__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    silu_mul_kernel(const __nv_bfloat16* __restrict__ gate, const __nv_bfloat16* __restrict__ up,
                    __nv_bfloat16* __restrict__ y, int64_t n, int use_vectors) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t n_vec = use_vectors ? n / 8 : 0;  // whole groups of 8

  const uint4* g8 = reinterpret_cast<const uint4*>(gate);
  const uint4* u8 = reinterpret_cast<const uint4*>(up);
  uint4* y8 = reinterpret_cast<uint4*>(y);
#pragma unroll 1  // one pair of 16-byte loads per thread: 64 KiB in flight per SM at 2048 threads
  for (int64_t i = tid; i < n_vec; i += stride) {
    const uint4 g = __ldg(g8 + i);
    const uint4 u = __ldg(u8 + i);
    uint4 o;
    o.x = silu_mul_pair(g.x, u.x);
    o.y = silu_mul_pair(g.y, u.y);
    o.z = silu_mul_pair(g.z, u.z);
    o.w = silu_mul_pair(g.w, u.w);
    y8[i] = o;
  }
  // The tail after the last whole group (all of the array on the scalar path).
  for (int64_t i = 8 * n_vec + tid; i < n; i += stride) {
    y[i] = __float2bfloat16_rn(silu_mul(__bfloat162float(gate[i]), __bfloat162float(up[i])));
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
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& gate = tensors[0];  // gate[N]
  const kiln_tensor& up = tensors[1];    // up[N]
  const kiln_tensor& y = tensors[2];     // y[N]
  if (gate.dtype != KILN_BF16 || up.dtype != KILN_BF16 || y.dtype != KILN_BF16) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (gate.rank != 1 || up.rank != 1 || y.rank != 1) return KILN_ERR_BAD_ARGUMENT;
  const int64_t n = gate.shape[0];
  if (n < 0 || up.shape[0] != n || y.shape[0] != n) return KILN_ERR_BAD_ARGUMENT;
  if (n == 0) return KILN_OK;
  if (gate.data == nullptr || up.data == nullptr || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  if (!is_contiguous(gate) || !is_contiguous(up) || !is_contiguous(y)) return KILN_ERR_UNSUPPORTED;

  int device = 0;
  int sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int use_vectors = aligned16(gate.data) && aligned16(up.data) && aligned16(y.data) ? 1 : 0;
  // Enough blocks for one 8-element group per thread, capped at one full wave of the GPU.
  const int64_t per_block = static_cast<int64_t>(kThreads) * 8;
  int64_t blocks = (n + per_block - 1) / per_block;
  const int64_t max_blocks = static_cast<int64_t>(sms > 0 ? sms : 1) * kBlocksPerSm;
  if (blocks > max_blocks) blocks = max_blocks;

  silu_mul_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(gate.data), static_cast<const __nv_bfloat16*>(up.data),
      static_cast<__nv_bfloat16*>(y.data), n, use_vectors);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
