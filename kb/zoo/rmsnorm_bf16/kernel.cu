// rmsnorm_bf16: y[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * w, bf16 in and out, fp32 math.
//
// Fast path (128-bit layout, H <= kFastThreads * kFastVecs * 8 = 8192 by default): one block
// per row holds the whole row in registers, kFastVecs uint4 (8 bf16) per thread, all loaded
// (streaming, __ldcs) before the sum of squares, so the block has the full row (16 KB at
// H = 8192) in flight. The row is read from HBM once and written once (__stcs): the second
// pass of the general kernel, which rereads the row from L2, is gone.
//
// Other shapes (H not a multiple of 8, unaligned data, longer rows) take the general kernel:
// one block per row (a grid-stride loop over rows when T exceeds the grid), pass 1 sums squares,
// pass 2 rereads the row (from L2), scales and writes. Each output is rounded to bf16 once.
//
// Any T, H >= 0 works. Column strides must be 1; row strides may exceed H. 128-bit accesses
// (8 bf16 per load/store) are used when H and both row strides are multiples of 8 and x, w, y
// are 16-byte aligned; otherwise a scalar path runs with the same arithmetic.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kMaxGridRows = 65535 * 8;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;  // butterfly: every lane holds the total (+ commutes, so all lanes agree bitwise)
}

// Block total, returned to every thread. `scratch` holds kThreads/32 floats. Called by every
// thread of the block.
template <int kThreads>
__device__ __forceinline__ float block_sum_all(float v, float* scratch) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = warp_sum(lane < kWarps ? scratch[lane] : 0.f);
  __syncthreads();  // scratch is written again by the next row
  return v;
}

// 8 bf16 packed in a uint4 <-> 8 floats.
__device__ __forceinline__ void unpack8(const uint4& u, float* f) {
  const uint32_t words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 pair;
    memcpy(&pair, &words[i], sizeof pair);
    const float2 v = __bfloat1622float2(pair);
    f[2 * i] = v.x;
    f[2 * i + 1] = v.y;
  }
}

__device__ __forceinline__ uint4 pack8(const float* f) {
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    memcpy(&words[i], &pair, sizeof pair);
  }
  return make_uint4(words[0], words[1], words[2], words[3]);
}

template <int kThreads, bool kVector>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                   __nv_bfloat16* __restrict__ y, int64_t rows, int64_t cols, int64_t ldx,
                   int64_t ldy, float eps) {
  __shared__ float scratch[kThreads / 32];
  const float inv_cols = 1.f / static_cast<float>(cols);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const __nv_bfloat16* xr = x + row * ldx;
    __nv_bfloat16* yr = y + row * ldy;

    float sum_sq = 0.f;
    if (kVector) {
      const uint4* xr8 = reinterpret_cast<const uint4*>(xr);
#pragma unroll 4  // several independent 16-byte loads in flight per thread
      for (int64_t v = threadIdx.x; v < cols / 8; v += kThreads) {
        float f[8];
        unpack8(__ldg(xr8 + v), f);
#pragma unroll
        for (int i = 0; i < 8; ++i) sum_sq = fmaf(f[i], f[i], sum_sq);
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        const float f = __bfloat162float(xr[c]);
        sum_sq = fmaf(f, f, sum_sq);
      }
    }
    sum_sq = block_sum_all<kThreads>(sum_sq, scratch);
    // Division and sqrtf (correctly rounded) rather than rsqrtf: once per row, costs nothing.
    const float inv_rms = 1.f / sqrtf(sum_sq * inv_cols + eps);

    if (kVector) {
      const uint4* xr8 = reinterpret_cast<const uint4*>(xr);
      const uint4* w8 = reinterpret_cast<const uint4*>(w);
      uint4* yr8 = reinterpret_cast<uint4*>(yr);
#pragma unroll 2
      for (int64_t v = threadIdx.x; v < cols / 8; v += kThreads) {
        float f[8];
        float g[8];
        unpack8(__ldg(xr8 + v), f);
        unpack8(__ldg(w8 + v), g);
#pragma unroll
        for (int i = 0; i < 8; ++i) f[i] = f[i] * inv_rms * g[i];
        yr8[v] = pack8(f);
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        const float f = __bfloat162float(xr[c]) * inv_rms * __bfloat162float(w[c]);
        yr[c] = __float2bfloat16_rn(f);
      }
    }
  }
}

// ---- Fast path: the row in registers ----------------------------------------------------

constexpr int kFastThreads = 256;  // tunable: 256 or 512 (kFastVecs 4 or 2 keeps H = 8192)
constexpr int kFastVecs = 4;       // uint4 per thread at the largest instantiation
constexpr int kFastMinBlocks = 4;  // __launch_bounds__ min blocks/SM (caps regs at 64 for 256)

template <int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads, kFastMinBlocks)
    rmsnorm_rows_kernel(const uint4* __restrict__ x, const uint4* __restrict__ w,
                        uint4* __restrict__ y, int64_t rows, int nvec, int64_t ldx8,
                        int64_t ldy8, float inv_cols, float eps) {
  __shared__ float scratch[kThreads / 32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const uint4* xr = x + row * ldx8;
    uint4 xv[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = threadIdx.x + k * kThreads;
      xv[k] = v < nvec ? __ldcs(xr + v) : make_uint4(0u, 0u, 0u, 0u);
    }
    float sum_sq = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      float f[8];
      unpack8(xv[k], f);  // absent vectors are zeros: they add nothing
#pragma unroll
      for (int i = 0; i < 8; ++i) sum_sq = fmaf(f[i], f[i], sum_sq);
    }
    sum_sq = block_sum_all<kThreads>(sum_sq, scratch);  // ends with a barrier
    const float inv_rms = 1.f / sqrtf(sum_sq * inv_cols + eps);
    uint4* yr = y + row * ldy8;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = threadIdx.x + k * kThreads;
      if (v < nvec) {
        float f[8];
        float g[8];
        unpack8(xv[k], f);
        unpack8(__ldg(w + v), g);
#pragma unroll
        for (int i = 0; i < 8; ++i) f[i] = f[i] * inv_rms * g[i];
        __stcs(yr + v, pack8(f));
      }
    }
  }
}

// Smallest instantiation whose capacity holds the row; false when none does.
bool launch_rows(unsigned grid, const void* x, const void* w, void* y, int64_t rows,
                 int64_t cols, int64_t ldx, int64_t ldy, float eps, cudaStream_t stream) {
  if (cols > int64_t{kFastThreads} * kFastVecs * 8) return false;
  const int nvec = static_cast<int>(cols / 8);
  const float inv_cols = 1.f / static_cast<float>(cols);
  const auto* x8 = static_cast<const uint4*>(x);
  const auto* w8 = static_cast<const uint4*>(w);
  auto* y8 = static_cast<uint4*>(y);
  if (nvec <= kFastThreads) {
    rmsnorm_rows_kernel<kFastThreads, 1><<<grid, kFastThreads, 0, stream>>>(
        x8, w8, y8, rows, nvec, ldx / 8, ldy / 8, inv_cols, eps);
  } else if (nvec <= 2 * kFastThreads) {
    rmsnorm_rows_kernel<kFastThreads, 2><<<grid, kFastThreads, 0, stream>>>(
        x8, w8, y8, rows, nvec, ldx / 8, ldy / 8, inv_cols, eps);
  } else {
    rmsnorm_rows_kernel<kFastThreads, kFastVecs><<<grid, kFastThreads, 0, stream>>>(
        x8, w8, y8, rows, nvec, ldx / 8, ldy / 8, inv_cols, eps);
  }
  return true;
}

int64_t row_stride(const kiln_tensor& t) {
  const int64_t rows = t.shape[0];
  const int64_t cols = t.shape[1];
  if (cols > 1 && t.strides[1] != 1) return -1;
  if (rows <= 1) return cols;
  return t.strides[0] >= cols ? t.strides[0] : -1;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <int kThreads>
void launch(bool vector, unsigned grid, const __nv_bfloat16* x, const __nv_bfloat16* w,
            __nv_bfloat16* y, int64_t rows, int64_t cols, int64_t ldx, int64_t ldy, float eps,
            cudaStream_t stream) {
  if (vector) {
    rmsnorm_kernel<kThreads, true>
        <<<grid, kThreads, 0, stream>>>(x, w, y, rows, cols, ldx, ldy, eps);
  } else {
    rmsnorm_kernel<kThreads, false>
        <<<grid, kThreads, 0, stream>>>(x, w, y, rows, cols, ldx, ldy, eps);
  }
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 3 || scalars == nullptr || n_scalars != 1) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor& x = tensors[0];  // x[T,H]
  const kiln_tensor& w = tensors[1];  // w[H]
  const kiln_tensor& y = tensors[2];  // y[T,H]
  const kiln_scalar& eps = scalars[0];
  if (eps.dtype != KILN_F64 || (eps.name != nullptr && strcmp(eps.name, "eps") != 0)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (x.dtype != KILN_BF16 || w.dtype != KILN_BF16 || y.dtype != KILN_BF16) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (x.rank != 2 || w.rank != 1 || y.rank != 2) return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  if (rows < 0 || cols < 0 || w.shape[0] != cols || y.shape[0] != rows || y.shape[1] != cols) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (rows == 0 || cols == 0) return KILN_OK;
  if (x.data == nullptr || w.data == nullptr || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  const int64_t ldx = row_stride(x);
  const int64_t ldy = row_stride(y);
  if (ldx < 0 || ldy < 0 || (cols > 1 && w.strides[0] != 1)) return KILN_ERR_UNSUPPORTED;

  const bool vector = cols % 8 == 0 && ldx % 8 == 0 && ldy % 8 == 0 && aligned16(x.data) &&
                      aligned16(w.data) && aligned16(y.data);
  const unsigned grid = static_cast<unsigned>(rows < kMaxGridRows ? rows : kMaxGridRows);
  const auto* xp = static_cast<const __nv_bfloat16*>(x.data);
  const auto* wp = static_cast<const __nv_bfloat16*>(w.data);
  auto* yp = static_cast<__nv_bfloat16*>(y.data);
  const float e = static_cast<float>(eps.value.f);
  if (vector && launch_rows(grid, xp, wp, yp, rows, cols, ldx, ldy, e, stream)) {
    return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
  }
  if (cols <= 2048) {
    launch<128>(vector, grid, xp, wp, yp, rows, cols, ldx, ldy, e, stream);
  } else {
    launch<256>(vector, grid, xp, wp, yp, rows, cols, ldx, ldy, e, stream);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
