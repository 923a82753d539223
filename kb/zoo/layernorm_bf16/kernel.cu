// layernorm_bf16: y[t, :] = (x[t, :] - mean) / sqrt(var + eps) * gamma + beta, bf16 in and
// out, fp32 math, var the biased (population) variance of the row.
//
// Fast path (128-bit layout, H <= kFastThreads * kFastVecs * 8 = 8192 by default): one block
// per row holds the whole row in registers, kFastVecs uint4 (8 bf16 each) per thread, all
// loaded before any arithmetic so a block has the full row (16 KB at H = 8192) in flight. The
// row is read from HBM once (streaming loads, __ldcs) and written once (streaming stores,
// __stcs): 4H bytes per row instead of the 6H of a two-pass kernel whose second pass rereads
// the row. Statistics are the exact two-pass ones over the registers: mean = sum / H, then
// M2 = sum (x - mean)^2, each folded over the block in one fixed order, so no sum of squares
// minus squared sum forms (no cancellation for rows with a large mean, see NOTES.md).
//
// Other shapes (H not a multiple of 8, unaligned data, longer rows) take the general kernel
// below: Welford/Chan partial statistics in pass 1, a second pass over the row.
//
// Any T, H >= 0 works. Column strides must be 1; row strides may exceed H.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/abi.h"

namespace {

constexpr int kMaxGridRows = 65535 * 8;

// Partial statistics of a set of values: how many, their mean, and the sum of squared
// deviations from that mean.
struct Stats {
  float n;
  float mean;
  float m2;
};

// Chan et al.'s combination of two disjoint sets. The counts are whole numbers held in floats,
// exact below 2^24. Not symmetric bit for bit in (a, b), so every reduction below uses one
// fixed order.
__device__ __forceinline__ Stats combine(const Stats& a, const Stats& b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float delta = b.mean - a.mean;
  const float fb = b.n / n;  // the weight of b in the combined mean
  Stats r;
  r.n = n;
  r.mean = fmaf(delta, fb, a.mean);
  r.m2 = a.m2 + b.m2 + delta * delta * a.n * fb;
  return r;
}

__device__ __forceinline__ Stats shfl_down(const Stats& s, int offset) {
  Stats r;
  r.n = __shfl_down_sync(0xffffffffu, s.n, offset);
  r.mean = __shfl_down_sync(0xffffffffu, s.mean, offset);
  r.m2 = __shfl_down_sync(0xffffffffu, s.m2, offset);
  return r;
}

// Tree over the warp towards lane 0, then lane 0's result broadcast to every lane.
__device__ __forceinline__ Stats warp_combine(Stats s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) s = combine(s, shfl_down(s, offset));
  Stats r;
  r.n = __shfl_sync(0xffffffffu, s.n, 0);
  r.mean = __shfl_sync(0xffffffffu, s.mean, 0);
  r.m2 = __shfl_sync(0xffffffffu, s.m2, 0);
  return r;
}

// Row statistics returned to every thread, bit-identical everywhere: each warp folds the
// per-warp partials itself in the same order. Called by every thread of the block.
template <int kThreads>
__device__ __forceinline__ Stats block_combine(Stats s, Stats* scratch) {
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  s = warp_combine(s);
  if (lane == 0) scratch[warp] = s;
  __syncthreads();
  const Stats empty = {0.f, 0.f, 0.f};
  s = warp_combine(lane < kWarps ? scratch[lane] : empty);
  __syncthreads();  // scratch is written again by the next row
  return s;
}

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
    layernorm_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ gamma,
                     const __nv_bfloat16* __restrict__ beta, __nv_bfloat16* __restrict__ y,
                     int64_t rows, int64_t cols, int64_t ldx, int64_t ldy, float eps) {
  __shared__ Stats scratch[kThreads / 32];
  const float inv_cols = 1.f / static_cast<float>(cols);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const __nv_bfloat16* xr = x + row * ldx;
    __nv_bfloat16* yr = y + row * ldy;

    Stats s = {0.f, 0.f, 0.f};
    if (kVector) {
      // Each 8-value chunk gets its exact two-pass statistics in registers, then one Chan
      // update: one division per 8 values instead of one per value.
      const uint4* xr8 = reinterpret_cast<const uint4*>(xr);
#pragma unroll 4
      for (int64_t v = threadIdx.x; v < cols / 8; v += kThreads) {
        float f[8];
        unpack8(__ldg(xr8 + v), f);
        const float chunk_mean =
            (((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]))) * 0.125f;
        float chunk_m2 = 0.f;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float d = f[i] - chunk_mean;
          chunk_m2 = fmaf(d, d, chunk_m2);
        }
        s = combine(s, Stats{8.f, chunk_mean, chunk_m2});
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        s = combine(s, Stats{1.f, __bfloat162float(xr[c]), 0.f});
      }
    }
    s = block_combine<kThreads>(s, scratch);
    const float mean = s.mean;
    const float var = fmaxf(s.m2 * inv_cols, 0.f);
    const float rstd = 1.f / sqrtf(var + eps);

    if (kVector) {
      const uint4* xr8 = reinterpret_cast<const uint4*>(xr);
      const uint4* g8 = reinterpret_cast<const uint4*>(gamma);
      const uint4* b8 = reinterpret_cast<const uint4*>(beta);
      uint4* yr8 = reinterpret_cast<uint4*>(yr);
#pragma unroll 2
      for (int64_t v = threadIdx.x; v < cols / 8; v += kThreads) {
        float f[8];
        float g[8];
        float b[8];
        unpack8(__ldg(xr8 + v), f);
        unpack8(__ldg(g8 + v), g);
        unpack8(__ldg(b8 + v), b);
#pragma unroll
        for (int i = 0; i < 8; ++i) f[i] = fmaf((f[i] - mean) * rstd, g[i], b[i]);
        yr8[v] = pack8(f);
      }
    } else {
      for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
        const float f = (__bfloat162float(xr[c]) - mean) * rstd;
        yr[c] = __float2bfloat16_rn(fmaf(f, __bfloat162float(gamma[c]), __bfloat162float(beta[c])));
      }
    }
  }
}

// ---- Fast path: the row in registers ----------------------------------------------------

constexpr int kFastThreads = 256;  // tunable: 256 or 512 (kFastVecs 4 or 2 keeps H = 8192)
constexpr int kFastVecs = 4;       // uint4 per thread at the largest instantiation
constexpr int kFastMinBlocks = 4;  // __launch_bounds__ min blocks/SM (caps regs at 64 for 256)

template <int kThreads>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  constexpr int kWarps = kThreads / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += scratch[w];  // one order in every thread
  return total;
}

template <int kThreads, int kVecs>
__global__ void __launch_bounds__(kThreads, kFastMinBlocks)
    layernorm_rows_kernel(const uint4* __restrict__ x, const uint4* __restrict__ gamma,
                          const uint4* __restrict__ beta, uint4* __restrict__ y, int64_t rows,
                          int nvec, int64_t ldx8, int64_t ldy8, float inv_cols, float eps) {
  // Two scratch arrays: the second reduction cannot overwrite what a slow warp still reads
  // from the first; the row loop's trailing barrier protects the next row.
  __shared__ float scratch[2][kThreads / 32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform over the block
    const uint4* xr = x + row * ldx8;
    uint4 xv[kVecs];
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = threadIdx.x + k * kThreads;
      xv[k] = v < nvec ? __ldcs(xr + v) : make_uint4(0u, 0u, 0u, 0u);
    }
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      float f[8];
      unpack8(xv[k], f);  // absent vectors are zeros: they add nothing
      sum += ((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]));
    }
    const float mean = block_sum<kThreads>(sum, scratch[0]) * inv_cols;
    float m2 = 0.f;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (threadIdx.x + k * kThreads < nvec) {
        float f[8];
        unpack8(xv[k], f);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float d = f[i] - mean;
          m2 = fmaf(d, d, m2);
        }
      }
    }
    const float var = fmaxf(block_sum<kThreads>(m2, scratch[1]) * inv_cols, 0.f);
    const float rstd = 1.f / sqrtf(var + eps);
    uint4* yr = y + row * ldy8;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int v = threadIdx.x + k * kThreads;
      if (v < nvec) {
        float f[8];
        float g[8];
        float b[8];
        unpack8(xv[k], f);
        unpack8(__ldg(gamma + v), g);
        unpack8(__ldg(beta + v), b);
#pragma unroll
        for (int i = 0; i < 8; ++i) f[i] = fmaf((f[i] - mean) * rstd, g[i], b[i]);
        __stcs(yr + v, pack8(f));
      }
    }
    __syncthreads();  // scratch is written again by the next row
  }
}

// Smallest instantiation whose capacity holds the row; false when none does.
bool launch_rows(unsigned grid, const void* x, const void* g, const void* b, void* y,
                 int64_t rows, int64_t cols, int64_t ldx, int64_t ldy, float eps,
                 cudaStream_t stream) {
  const int nvec = static_cast<int>(cols / 8);
  const float inv_cols = 1.f / static_cast<float>(cols);
  const auto* x8 = static_cast<const uint4*>(x);
  const auto* g8 = static_cast<const uint4*>(g);
  const auto* b8 = static_cast<const uint4*>(b);
  auto* y8 = static_cast<uint4*>(y);
  if (cols > int64_t{kFastThreads} * kFastVecs * 8) return false;
  if (nvec <= kFastThreads && kFastVecs >= 1) {
    layernorm_rows_kernel<kFastThreads, 1><<<grid, kFastThreads, 0, stream>>>(
        x8, g8, b8, y8, rows, nvec, ldx / 8, ldy / 8, inv_cols, eps);
  } else if (nvec <= 2 * kFastThreads && kFastVecs >= 2) {
    layernorm_rows_kernel<kFastThreads, 2><<<grid, kFastThreads, 0, stream>>>(
        x8, g8, b8, y8, rows, nvec, ldx / 8, ldy / 8, inv_cols, eps);
  } else {
    layernorm_rows_kernel<kFastThreads, kFastVecs><<<grid, kFastThreads, 0, stream>>>(
        x8, g8, b8, y8, rows, nvec, ldx / 8, ldy / 8, inv_cols, eps);
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
void launch(bool vector, unsigned grid, const __nv_bfloat16* x, const __nv_bfloat16* g,
            const __nv_bfloat16* b, __nv_bfloat16* y, int64_t rows, int64_t cols, int64_t ldx,
            int64_t ldy, float eps, cudaStream_t stream) {
  if (vector) {
    layernorm_kernel<kThreads, true>
        <<<grid, kThreads, 0, stream>>>(x, g, b, y, rows, cols, ldx, ldy, eps);
  } else {
    layernorm_kernel<kThreads, false>
        <<<grid, kThreads, 0, stream>>>(x, g, b, y, rows, cols, ldx, ldy, eps);
  }
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 4 || scalars == nullptr || n_scalars != 1) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const kiln_tensor& x = tensors[0];      // x[T,H]
  const kiln_tensor& gamma = tensors[1];  // gamma[H]
  const kiln_tensor& beta = tensors[2];   // beta[H]
  const kiln_tensor& y = tensors[3];      // y[T,H]
  const kiln_scalar& eps = scalars[0];
  if (eps.dtype != KILN_F64 || (eps.name != nullptr && strcmp(eps.name, "eps") != 0)) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (x.dtype != KILN_BF16 || gamma.dtype != KILN_BF16 || beta.dtype != KILN_BF16 ||
      y.dtype != KILN_BF16) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (x.rank != 2 || gamma.rank != 1 || beta.rank != 1 || y.rank != 2) return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  if (rows < 0 || cols < 0 || gamma.shape[0] != cols || beta.shape[0] != cols ||
      y.shape[0] != rows || y.shape[1] != cols) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (rows == 0 || cols == 0) return KILN_OK;
  if (x.data == nullptr || gamma.data == nullptr || beta.data == nullptr || y.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t ldx = row_stride(x);
  const int64_t ldy = row_stride(y);
  if (ldx < 0 || ldy < 0) return KILN_ERR_UNSUPPORTED;
  if (cols > 1 && (gamma.strides[0] != 1 || beta.strides[0] != 1)) return KILN_ERR_UNSUPPORTED;
  // Counts are exact in float below 2^24 (see combine).
  if (cols >= (int64_t{1} << 24)) return KILN_ERR_UNSUPPORTED;

  const bool vector = cols % 8 == 0 && ldx % 8 == 0 && ldy % 8 == 0 && aligned16(x.data) &&
                      aligned16(gamma.data) && aligned16(beta.data) && aligned16(y.data);
  const unsigned grid = static_cast<unsigned>(rows < kMaxGridRows ? rows : kMaxGridRows);
  const auto* xp = static_cast<const __nv_bfloat16*>(x.data);
  const auto* gp = static_cast<const __nv_bfloat16*>(gamma.data);
  const auto* bp = static_cast<const __nv_bfloat16*>(beta.data);
  auto* yp = static_cast<__nv_bfloat16*>(y.data);
  const float e = static_cast<float>(eps.value.f);
  if (vector && launch_rows(grid, xp, gp, bp, yp, rows, cols, ldx, ldy, e, stream)) {
    return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
  }
  if (cols <= 2048) {
    launch<128>(vector, grid, xp, gp, bp, yp, rows, cols, ldx, ldy, e, stream);
  } else {
    launch<256>(vector, grid, xp, gp, bp, yp, rows, cols, ldx, ldy, e, stream);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
