// silu_mul_elementwise: y[i] = gate[i] * sigmoid(gate[i]) * up[i], bf16 in and out, fp32 math.
//
// Variant v3 (issue 18): v2's kBatch loads per input in flight per thread, but each warp owns
// kBatch consecutive 512-byte segments of every array per step (vectors 32 kBatch w + lane,
// + 32, ...: 2 KiB contiguous per warp and array with kBatch = 4) and the warps stride over the
// arrays by the grid's warp count times that. v2's thread takes vectors a grid stride
// (~2 MiB) apart; here the requests in flight of one warp hit a few DRAM pages instead of
// kBatch, the access pattern of the quant_fp8_group128 entry. Grid: one wave (SMs x resident
// blocks per SM from the occupancy API); ld.global.nc.L1::no_allocate loads, st.global.cs
// stores; vectors past the end are skipped one by one, the N % 8 tail and unaligned arrays take
// a scalar loop. Each output is rounded to bf16 once.
//
// Any N >= 0 works; all three tensors must be contiguous.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBatch = 4;        // tunable: 2, 4, 8 vectors per input in flight per thread
constexpr int kMinBlocksPerSm = 0;  // tunable: 0 (registers decide), 4, 6, 8 (launch bounds)

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

__device__ __forceinline__ uint4 load_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ void store_vector(uint4* p, const uint4& g, const uint4& u) {
  uint4 o;
  o.x = silu_mul_pair(g.x, u.x);
  o.y = silu_mul_pair(g.y, u.y);
  o.z = silu_mul_pair(g.z, u.z);
  o.w = silu_mul_pair(g.w, u.w);
  __stcs(p, o);
}

__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    silu_mul_kernel(const __nv_bfloat16* __restrict__ gate, const __nv_bfloat16* __restrict__ up,
                    __nv_bfloat16* __restrict__ y, int64_t n, int use_vectors) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t n_vec = use_vectors ? n / 8 : 0;  // whole groups of 8

  const uint4* g8 = reinterpret_cast<const uint4*>(gate);
  const uint4* u8 = reinterpret_cast<const uint4*>(up);
  uint4* y8 = reinterpret_cast<uint4*>(y);
  const int lane = threadIdx.x % 32;
  const int64_t warp = tid / 32;
  const int64_t step = stride * kBatch;  // vectors per step of the whole grid
  for (int64_t i = warp * 32 * kBatch + lane; i - lane < n_vec; i += step) {
    uint4 g[kBatch], u[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {  // every load of the step before any use
      if (i + 32 * b < n_vec) {
        g[b] = load_stream(g8 + i + 32 * b);
        u[b] = load_stream(u8 + i + 32 * b);
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (i + 32 * b < n_vec) store_vector(y8 + i + 32 * b, g[b], u[b]);
  }
  // The tail after the last whole group (all of the array on the scalar path).
  for (int64_t j = 8 * n_vec + tid; j < n; j += stride) {
    y[j] = __float2bfloat16_rn(silu_mul(__bfloat162float(gate[j]), __bfloat162float(up[j])));
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

  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, silu_mul_kernel, kThreads, 0) !=
          cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int use_vectors = aligned16(gate.data) && aligned16(up.data) && aligned16(y.data) ? 1 : 0;
  // Enough blocks for one step of kBatch groups of 8 per thread, capped at one wave.
  const int64_t per_block = static_cast<int64_t>(kThreads) * 8 * kBatch;
  int64_t blocks = (n + per_block - 1) / per_block;
  const int64_t max_blocks =
      static_cast<int64_t>(sms > 0 ? sms : 1) * static_cast<int64_t>(per_sm > 0 ? per_sm : 1);
  if (blocks > max_blocks) blocks = max_blocks;

  silu_mul_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(gate.data), static_cast<const __nv_bfloat16*>(up.data),
      static_cast<__nv_bfloat16*>(y.data), n, use_vectors);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
