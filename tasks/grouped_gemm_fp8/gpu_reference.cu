// grouped_gemm_fp8 exact reference on the GPU: the same values as reference.cpp, bit for bit.
//
// The worker compares every element of every checked call with this, and anchors it to the CPU
// reference on sampled rows once per workload. The arithmetic is the CPU reference's, in double:
// e4m3 values decode exactly; the block
// sum s of 128 products is exact in double in any order (each product has at most 8
// significant bits, a multiple of 2^-18 below 2^18); SA * SB is exact; then, for the k-blocks
// in ascending order, acc = acc + s * (SA * SB) with each multiply and add rounded once
// (__dmul_rn, __dadd_rn: never contracted into a fused multiply-add); D is rounded to bf16 once,
// to nearest even, straight from double (cvt.rn.bf16.f64). Rows with I = -1 are written as 0.
// Nothing but kiln/abi.h from kiln, so the harness builds it wherever kiln is installed.
//
// Tiles of 64 x 64 outputs, 16 k-steps per stage, 4 x 4 outputs per thread, the B tile of the
// group of the tile's first valid row. Groups start at multiples of 128 rows, so a 64-row tile
// holds one group (and padding); a row of another group would still be computed, directly from
// global memory. Simple rather than fast, and it needs no library.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int kMicro = 4;
constexpr int kThreads = kTile / kMicro;  // 16 x 16 threads
constexpr int kBlock = 128;               // scale block

struct Problem {
  const uint8_t* a;      // [rows, K]
  const float* sa;       // [rows, K/128]
  const uint8_t* b;      // [G, N, K]
  const float* sb;       // [G, N/128, K/128]
  const int32_t* index;  // [rows]
  uint16_t* d;           // [rows, N] bf16 bits
  int64_t rows, groups, N, K;
};

// e4m3 (bias 7; S.1111.111 is NaN) to double, exactly.
__device__ double e4m3(uint8_t v) {
  const unsigned exponent = (v >> 3) & 15u;
  const unsigned mantissa = v & 7u;
  double magnitude = 0;
  if (exponent == 15u && mantissa == 7u) {
    magnitude = __longlong_as_double(0x7ff8000000000000ll);
  } else if (exponent == 0u) {
    magnitude = static_cast<double>(mantissa) * (1.0 / 512.0);
  } else {
    magnitude = ldexp(static_cast<double>(mantissa | 8u), static_cast<int>(exponent) - 10);
  }
  return (v & 0x80u) != 0 ? -magnitude : magnitude;
}

__device__ uint16_t to_bf16(double x) { return __bfloat16_as_ushort(__double2bfloat16(x)); }

// One block's contribution, folded as the CPU reference folds it.
__device__ double fold(double acc, double s, const Problem& p, int64_t r, int64_t g, int64_t n,
                       int64_t blk) {
  const int64_t blocks = p.K / kBlock;
  const double scale =
      __dmul_rn(static_cast<double>(p.sa[r * blocks + blk]),
                static_cast<double>(p.sb[(g * (p.N / kBlock) + n / kBlock) * blocks + blk]));
  return __dadd_rn(acc, __dmul_rn(s, scale));
}

// A row whose group is not the tile's: the same sums, straight from global memory.
__device__ double direct(const Problem& p, int64_t r, int64_t g, int64_t n) {
  double acc = 0;
  for (int64_t blk = 0; blk < p.K / kBlock; ++blk) {
    double s = 0;
    for (int64_t k = blk * kBlock; k < (blk + 1) * kBlock; ++k)
      s = fma(e4m3(p.a[r * p.K + k]), e4m3(p.b[(g * p.N + n) * p.K + k]), s);  // exact
    acc = fold(acc, s, p, r, g, n, blk);
  }
  return acc;
}

__global__ void __launch_bounds__(kThreads* kThreads) exact_grouped_gemm(Problem p) {
  __shared__ double a_tile[kStep][kTile];
  __shared__ double b_tile[kStep][kTile];
  __shared__ int tile_group;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int flat = ty * kThreads + tx;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  if (flat == 0) {
    int g = -1;
    for (int64_t r = row0; r < row0 + kTile && r < p.rows && g < 0; ++r) g = p.index[r];
    tile_group = g;
  }
  __syncthreads();
  const int64_t g = tile_group;
  double acc[kMicro][kMicro] = {};
  double s[kMicro][kMicro] = {};
  if (g >= 0) {
    for (int64_t k0 = 0; k0 < p.K; k0 += kStep) {
      for (int i = flat; i < kTile * kStep; i += kThreads * kThreads) {
        const int r = i / kStep;
        const int k = i % kStep;
        const int64_t ar = row0 + r;
        const int64_t bn = col0 + r;
        a_tile[k][r] = ar < p.rows ? e4m3(p.a[ar * p.K + k0 + k]) : 0.0;
        b_tile[k][r] = bn < p.N ? e4m3(p.b[(g * p.N + bn) * p.K + k0 + k]) : 0.0;
      }
      __syncthreads();
      for (int k = 0; k < kStep; ++k) {
        for (int u = 0; u < kMicro; ++u) {
          for (int v = 0; v < kMicro; ++v)
            s[u][v] = fma(a_tile[k][ty + u * kThreads], b_tile[k][tx + v * kThreads], s[u][v]);
        }
      }
      __syncthreads();
      if ((k0 + kStep) % kBlock == 0) {  // the end of a scale block: fold its exact sum
        const int64_t blk = k0 / kBlock;
        for (int u = 0; u < kMicro; ++u) {
          const int64_t r = row0 + ty + u * kThreads;
          for (int v = 0; v < kMicro; ++v) {
            const int64_t n = col0 + tx + v * kThreads;
            if (r < p.rows && n < p.N) acc[u][v] = fold(acc[u][v], s[u][v], p, r, g, n, blk);
            s[u][v] = 0;
          }
        }
      }
    }
  }
  for (int u = 0; u < kMicro; ++u) {
    const int64_t r = row0 + ty + u * kThreads;
    if (r >= p.rows) continue;
    const int64_t rg = p.index[r];
    for (int v = 0; v < kMicro; ++v) {
      const int64_t n = col0 + tx + v * kThreads;
      if (n >= p.N) continue;
      double value = 0;  // padding rows (I = -1)
      if (rg == g && rg >= 0) value = acc[u][v];
      if (rg != g && rg >= 0) value = direct(p, r, rg, n);
      p.d[r * p.N + n] = to_bf16(value);
    }
  }
}

bool dense(const kiln_tensor& t, kiln_dtype dtype, int rank) {
  if (t.dtype != dtype || t.rank != rank) return false;
  int64_t stride = 1;
  for (int d = rank; d-- > 0;) {
    if (t.shape[d] < 0) return false;
    if (t.shape[d] > 1 && t.strides[d] != stride) return false;
    stride *= t.shape[d];
  }
  return true;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 6 || n_scalars != 2) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& sa = tensors[1];
  const kiln_tensor& b = tensors[2];
  const kiln_tensor& sb = tensors[3];
  const kiln_tensor& idx = tensors[4];
  const kiln_tensor& d = tensors[5];
  if (!dense(a, KILN_E4M3, 2) || !dense(sa, KILN_F32, 2) || !dense(b, KILN_E4M3, 3) ||
      !dense(sb, KILN_F32, 3) || !dense(idx, KILN_I32, 1) || !dense(d, KILN_BF16, 2))
    return KILN_ERR_BAD_ARGUMENT;
  Problem p{static_cast<const uint8_t*>(a.data),
            static_cast<const float*>(sa.data),
            static_cast<const uint8_t*>(b.data),
            static_cast<const float*>(sb.data),
            static_cast<const int32_t*>(idx.data),
            static_cast<uint16_t*>(d.data),
            a.shape[0],
            b.shape[0],
            b.shape[1],
            a.shape[1]};
  if (p.K % kBlock != 0 || p.N % kBlock != 0) return KILN_ERR_UNSUPPORTED;
  if (b.shape[2] != p.K || sa.shape[0] != p.rows || sa.shape[1] != p.K / kBlock ||
      sb.shape[0] != p.groups || sb.shape[1] != p.N / kBlock || sb.shape[2] != p.K / kBlock ||
      idx.shape[0] != p.rows || d.shape[0] != p.rows || d.shape[1] != p.N)
    return KILN_ERR_BAD_ARGUMENT;
  if (p.rows == 0 || p.N == 0) return KILN_OK;
  const int64_t blocks_x = (p.N + kTile - 1) / kTile;
  const int64_t blocks_y = (p.rows + kTile - 1) / kTile;
  if (blocks_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y));
  exact_grouped_gemm<<<grid, dim3(kThreads, kThreads), 0, stream>>>(p);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
