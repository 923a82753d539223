// rmsnorm baseline: kiln's own one-pass RMSNorm, the speed to beat (no vendor library
// has a plain bf16 RMSNorm to call).
//
// y[t,h] = x[t,h] * rsqrt(mean_h(x[t,:]^2) + eps) * w[h], fp32 math, y rounded once.
// Each row is read from HBM once: a group of TX threads loads the whole row into
// registers with 128-bit loads (8 bf16 each, VPT loads per thread), reduces the sum of
// squares with warp shuffles (and shared memory across the row's warps), then scales
// the registers and writes the row with 128-bit stores. w is read per vector (it stays
// in L2). Short rows pack several rows into one block (blockDim.y) so blocks keep
// 256 threads. Rows not a multiple of 8 wide, strided or unaligned tensors take a
// simple two-pass fallback.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kMaxVectorsPerThread = 8;

union Pack {
  uint4 raw;
  __nv_bfloat162 pairs[4];
};

template <int VPT>
__global__ void rmsnorm_rows(const uint4* __restrict__ x, const uint4* __restrict__ w,
                             uint4* __restrict__ y, int64_t T, int vectors, float inv_h,
                             float eps) {
  __shared__ float partial[32][33];  // [row in block][warp of the row]
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool active = row < T;
  const uint4* xr = x + (active ? row : 0) * vectors;

  Pack v[VPT];
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    v[i].raw =
        (active && c < vectors) ? __ldcs(xr + c) : make_uint4(0, 0, 0, 0);  // streamed: read once
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const float2 f = __bfloat1622float2(v[i].pairs[p]);
      sum += f.x * f.x + f.y * f.y;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  const int warps = blockDim.x / 32;
  if (warps > 1) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) partial[threadIdx.y][warp] = sum;
    __syncthreads();
    sum = lane < warps ? partial[threadIdx.y][lane] : 0.f;
    for (int offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  if (!active) return;
  const float scale = rsqrtf(sum * inv_h + eps);
  uint4* yr = y + row * vectors;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c >= vectors) continue;
    Pack g;
    g.raw = __ldg(w + c);
    Pack out;
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const float2 xv = __bfloat1622float2(v[i].pairs[p]);
      const float2 wv = __bfloat1622float2(g.pairs[p]);
      out.pairs[p] = __floats2bfloat162_rn(xv.x * scale * wv.x, xv.y * scale * wv.y);
    }
    __stcs(yr + c, out.raw);  // streamed: written once
  }
}

// Any strides, any H: two passes over the row (the second from L2), one block per row.
__global__ void rmsnorm_fallback(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y,
                                 int64_t H, int64_t xs0, int64_t xs1, int64_t ws, int64_t ys0,
                                 int64_t ys1, float eps) {
  __shared__ float warp_sums[32];
  const int64_t row = blockIdx.x;
  float sum = 0.f;
  for (int64_t h = threadIdx.x; h < H; h += blockDim.x) {
    const float v = __bfloat162float(x[row * xs0 + h * xs1]);
    sum += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) warp_sums[0] = sum;
  }
  __syncthreads();
  const float scale = rsqrtf(warp_sums[0] / static_cast<float>(H) + eps);
  for (int64_t h = threadIdx.x; h < H; h += blockDim.x) {
    const float v = __bfloat162float(x[row * xs0 + h * xs1]);
    y[row * ys0 + h * ys1] = __float2bfloat16_rn(v * scale * __bfloat162float(w[h * ws]));
  }
}

template <int VPT>
void launch_rows(const kiln_tensor& x, const kiln_tensor& w, const kiln_tensor& y, int tx,
                 int vectors, float eps, cudaStream_t stream) {
  const int64_t T = x.shape[0];
  int ry = tx >= 256 ? 1 : 256 / tx;
  if (ry > T) ry = static_cast<int>(T);
  const dim3 block(tx, ry);
  const dim3 grid(static_cast<unsigned>((T + ry - 1) / ry));
  rmsnorm_rows<VPT><<<grid, block, 0, stream>>>(
      static_cast<const uint4*>(x.data), static_cast<const uint4*>(w.data),
      static_cast<uint4*>(y.data), T, vectors, 1.0f / static_cast<float>(x.shape[1]), eps);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 3 || scalars == nullptr || n_scalars != 1)
    return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& w = tensors[1];
  const kiln_tensor& y = tensors[2];
  if (x.dtype != KILN_BF16 || w.dtype != KILN_BF16 || y.dtype != KILN_BF16)
    return KILN_ERR_BAD_ARGUMENT;
  if (x.rank != 2 || w.rank != 1 || y.rank != 2 || scalars[0].dtype != KILN_F64)
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t T = x.shape[0];
  const int64_t H = x.shape[1];
  if (H < 1 || w.shape[0] != H || y.shape[0] != T || y.shape[1] != H) return KILN_ERR_BAD_ARGUMENT;
  if (T == 0) return KILN_OK;
  if (T > 2147483647) return KILN_ERR_UNSUPPORTED;
  const float eps = static_cast<float>(scalars[0].value.f);

  const bool dense = x.strides[1] == 1 && x.strides[0] == H && y.strides[1] == 1 &&
                     y.strides[0] == H && w.strides[0] == 1;
  const int64_t vectors = H / 8;
  if (dense && H % 8 == 0 && aligned16(x.data) && aligned16(w.data) && aligned16(y.data) &&
      vectors <= 1024 * kMaxVectorsPerThread) {
    // About four 16-byte vectors per thread, a whole number of warps per row.
    int64_t tx = ((vectors + 3) / 4 + 31) / 32 * 32;
    if (tx > 1024) tx = 1024;
    const int vpt = static_cast<int>((vectors + tx - 1) / tx);
    const int v = static_cast<int>(vectors);
    const int t = static_cast<int>(tx);
    switch (vpt) {
      case 1:
        launch_rows<1>(x, w, y, t, v, eps, stream);
        break;
      case 2:
        launch_rows<2>(x, w, y, t, v, eps, stream);
        break;
      case 3:
        launch_rows<3>(x, w, y, t, v, eps, stream);
        break;
      case 4:
        launch_rows<4>(x, w, y, t, v, eps, stream);
        break;
      case 5:
        launch_rows<5>(x, w, y, t, v, eps, stream);
        break;
      case 6:
        launch_rows<6>(x, w, y, t, v, eps, stream);
        break;
      case 7:
        launch_rows<7>(x, w, y, t, v, eps, stream);
        break;
      default:
        launch_rows<8>(x, w, y, t, v, eps, stream);
        break;
    }
  } else {
    rmsnorm_fallback<<<static_cast<unsigned>(T), 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x.data), static_cast<const __nv_bfloat16*>(w.data),
        static_cast<__nv_bfloat16*>(y.data), H, x.strides[0], x.strides[1], w.strides[0],
        y.strides[0], y.strides[1], eps);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
