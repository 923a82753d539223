// softmax_online: y[r, :] = softmax(x[r, :]) for every row r of x[R,C], fp32 in and out.
//
// Fast path (float4 layout, C <= kFastThreads * kFastVecs * 4 = 8192 by default): one block per
// row holds the whole row in registers, kFastVecs float4 per thread, all loaded (streaming,
// __ldcs) before any arithmetic, so the block has the whole row (32 KB at C = 8192) in flight.
// The row's maximum is folded over the block, each thread replaces its values by
// e = exp(x - max) in place (one exp per value) and sums them, the sum is folded over the block,
// and e / sum is written with streaming stores (__stcs). The row is read from HBM once: 8C
// bytes per row instead of the general kernel's second read from L2.
//
// Other shapes take the general kernel: one block per row (a grid-stride loop over rows when R
// exceeds the grid), an online max-and-sum pass that rescales the running sum whenever the
// maximum grows, then a second pass over the row that writes exp(x - max) / sum.
//
// Any R, C >= 0 works. Rows may be longer than the block: each thread strides along the row.
// The column stride must be 1; the row stride may exceed C. float4 loads and stores are used
// when both base addresses are 16-byte aligned and C and both row strides are multiples of 4;
// otherwise a scalar path runs (same arithmetic, one element at a time).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kMaxGridRows = 65535 * 8;  // rows per launch wave; more rows loop in the kernel

// Folds one more value block (chunk maximum `cm`, already-summed part `cs` relative to cm) into
// the running pair (m, s). Written so that -inf maxima never form (-inf) - (-inf) = NaN.
__device__ __forceinline__ void merge(float& m, float& s, float cm, float cs) {
  const float mn = fmaxf(m, cm);
  if (mn == -INFINITY) return;  // both sides hold only -inf values: nothing to add
  s = s * expf(m - mn) + cs * expf(cm - mn);
  m = mn;
}

// Absorbs a run of values into (m, s): rescale once per run, then one exp per value.
__device__ __forceinline__ void absorb4(float& m, float& s, float a, float b, float c, float d) {
  const float cm = fmaxf(fmaxf(a, b), fmaxf(c, d));
  if (cm > m) {
    s *= expf(m - cm);  // exp(-inf) = 0 when m is still -inf (s is 0 then anyway)
    m = cm;
  }
  if (m != -INFINITY) s += (expf(a - m) + expf(b - m)) + (expf(c - m) + expf(d - m));
}

__device__ __forceinline__ void absorb1(float& m, float& s, float a) {
  if (a > m) {
    s *= expf(m - a);
    m = a;
  }
  if (m != -INFINITY) s += expf(a - m);
}

// Merges (m, s) over the block; every thread gets the same result. `scratch` holds
// 2 * kWarps floats. Called by every thread (it contains __syncthreads).
template <int kThreads>
__device__ __forceinline__ void block_merge(float& m, float& s, float* scratch) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  // Butterfly: merge is symmetric in its two arguments (max and + commute), so every lane
  // ends with bit-identical values.
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    merge(m, s, m2, s2);
  }
  if (lane == 0) {
    scratch[warp] = m;
    scratch[kWarps + warp] = s;
  }
  __syncthreads();
  // Every warp folds the kWarps partials itself, in the same order: no broadcast step needed.
  m = lane < kWarps ? scratch[lane] : -INFINITY;
  s = lane < kWarps ? scratch[kWarps + lane] : 0.f;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    merge(m, s, m2, s2);
  }
  __syncthreads();  // scratch is written again by the next row's call
}

template <int kThreads, bool kVector>
__global__ void __launch_bounds__(kThreads)
    softmax_online_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                          int64_t cols, int64_t ldx, int64_t ldy) {
  __shared__ float scratch[2 * (kThreads / 32)];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const float* xr = x + row * ldx;
    float* yr = y + row * ldy;
    float m = -INFINITY;
    float s = 0.f;
    if (kVector) {
      const int64_t n_vec = cols / 4;
      const float4* xr4 = reinterpret_cast<const float4*>(xr);
#pragma unroll 4  // several independent 16-byte loads in flight per thread
      for (int64_t v = threadIdx.x; v < n_vec; v += kThreads) {
        const float4 a = __ldg(xr4 + v);
        absorb4(m, s, a.x, a.y, a.z, a.w);
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += kThreads) absorb1(m, s, __ldg(xr + c));
    }
    block_merge<kThreads>(m, s, scratch);

    const float inv = 1.f / s;
    if (kVector) {
      const int64_t n_vec = cols / 4;
      const float4* xr4 = reinterpret_cast<const float4*>(xr);
      float4* yr4 = reinterpret_cast<float4*>(yr);
#pragma unroll 4
      for (int64_t v = threadIdx.x; v < n_vec; v += kThreads) {
        const float4 a = __ldg(xr4 + v);
        float4 o;
        o.x = expf(a.x - m) * inv;
        o.y = expf(a.y - m) * inv;
        o.z = expf(a.z - m) * inv;
        o.w = expf(a.w - m) * inv;
        yr4[v] = o;
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = expf(__ldg(xr + c) - m) * inv;
    }
  }
}

// ---- Fast path: the row in registers ----------------------------------------------------

constexpr int kFastThreads = 512;  // tunable: 512 or 256 (kFastVecs 4 or 8 keeps C = 8192)
constexpr int kFastVecs = 4;       // float4 per thread at the largest instantiation
constexpr int kFastMinBlocks = 2;  // __launch_bounds__ min blocks/SM (caps regs at 64 for 512)

// Block maximum or sum, returned to every thread (each warp folds the partials itself, in one
// order). Called by every thread; the caller's next barrier protects `scratch`.
template <int kThreads, bool kMax>
__device__ __forceinline__ float block_fold(float v, float* scratch) {
  constexpr int kWarps = kThreads / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) r = kMax ? fmaxf(r, scratch[w]) : r + scratch[w];
  return r;
}

template <int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads, kFastMinBlocks)
    softmax_rows_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t rows,
                        int nvec, int64_t ldx4, int64_t ldy4) {
  __shared__ float scratch[2][kThreads / 32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const float4* xr = x + row * ldx4;
    float4 e[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = threadIdx.x + k * kThreads;
      e[k] = v < nvec ? __ldcs(xr + v) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      m = fmaxf(m, fmaxf(fmaxf(e[k].x, e[k].y), fmaxf(e[k].z, e[k].w)));
    }
    m = block_fold<kThreads, true>(m, scratch[0]);
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (threadIdx.x + k * kThreads < nvec) {
        e[k].x = expf(e[k].x - m);
        e[k].y = expf(e[k].y - m);
        e[k].z = expf(e[k].z - m);
        e[k].w = expf(e[k].w - m);
        s += (e[k].x + e[k].y) + (e[k].z + e[k].w);
      }
    }
    s = block_fold<kThreads, false>(s, scratch[1]);
    const float inv = 1.f / s;
    float4* yr = y + row * ldy4;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = threadIdx.x + k * kThreads;
      if (v < nvec) {
        __stcs(yr + v, make_float4(e[k].x * inv, e[k].y * inv, e[k].z * inv, e[k].w * inv));
      }
    }
    __syncthreads();  // scratch is written again by the next row
  }
}

// Smallest instantiation whose capacity holds the row; false when none does.
bool launch_rows(unsigned grid, const float* x, float* y, int64_t rows, int64_t cols,
                 int64_t ldx, int64_t ldy, cudaStream_t stream) {
  if (cols > int64_t{kFastThreads} * kFastVecs * 4) return false;
  const int nvec = static_cast<int>(cols / 4);
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  if (nvec <= kFastThreads) {
    softmax_rows_kernel<kFastThreads, 1>
        <<<grid, kFastThreads, 0, stream>>>(x4, y4, rows, nvec, ldx / 4, ldy / 4);
  } else if (nvec <= 2 * kFastThreads) {
    softmax_rows_kernel<kFastThreads, 2>
        <<<grid, kFastThreads, 0, stream>>>(x4, y4, rows, nvec, ldx / 4, ldy / 4);
  } else {
    softmax_rows_kernel<kFastThreads, kFastVecs>
        <<<grid, kFastThreads, 0, stream>>>(x4, y4, rows, nvec, ldx / 4, ldy / 4);
  }
  return true;
}

// Row stride of a row-major rank-2 tensor with unit column stride, or -1.
int64_t row_stride(const kiln_tensor& t) {
  const int64_t rows = t.shape[0];
  const int64_t cols = t.shape[1];
  if (cols > 1 && t.strides[1] != 1) return -1;
  if (rows <= 1) return cols;
  return t.strides[0] >= cols ? t.strides[0] : -1;
}

template <int kThreads>
void launch(bool vector, unsigned grid, const float* x, float* y, int64_t rows, int64_t cols,
            int64_t ldx, int64_t ldy, cudaStream_t stream) {
  if (vector) {
    softmax_online_kernel<kThreads, true>
        <<<grid, kThreads, 0, stream>>>(x, y, rows, cols, ldx, ldy);
  } else {
    softmax_online_kernel<kThreads, false>
        <<<grid, kThreads, 0, stream>>>(x, y, rows, cols, ldx, ldy);
  }
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];  // x[R,C]
  const kiln_tensor& y = tensors[1];  // y[R,C]
  if (x.dtype != KILN_F32 || y.dtype != KILN_F32 || x.rank != 2 || y.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  if (rows < 0 || cols < 0 || y.shape[0] != rows || y.shape[1] != cols)
    return KILN_ERR_BAD_ARGUMENT;
  if (rows == 0 || cols == 0) return KILN_OK;
  if (x.data == nullptr || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  const int64_t ldx = row_stride(x);
  const int64_t ldy = row_stride(y);
  if (ldx < 0 || ldy < 0) return KILN_ERR_UNSUPPORTED;

  const bool vector = reinterpret_cast<uintptr_t>(x.data) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(y.data) % 16 == 0 && cols % 4 == 0 &&
                      ldx % 4 == 0 && ldy % 4 == 0;
  const unsigned grid = static_cast<unsigned>(rows < kMaxGridRows ? rows : kMaxGridRows);
  const float* xp = static_cast<const float*>(x.data);
  float* yp = static_cast<float*>(y.data);
  if (vector && launch_rows(grid, xp, yp, rows, cols, ldx, ldy, stream)) {
    return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
  }
  // Short rows waste fewer idle threads with a smaller block.
  if (cols <= 1024) {
    launch<128>(vector, grid, xp, yp, rows, cols, ldx, ldy, stream);
  } else {
    launch<256>(vector, grid, xp, yp, rows, cols, ldx, ldy, stream);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
