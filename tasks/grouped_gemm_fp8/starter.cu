// grouped_gemm_fp8 starter: a correct, simple candidate to begin from.
//
// D[r, :] = dequant(A[r, :]) * dequant(B[g])^T for every row r of group g = I[r]; rows with
// I = -1 are written as 0 (they are outside the contract, so that is optional).
// One thread block per 32 x 32 tile of D, 256 threads (32 x 8), 4 outputs each. A tile lies in
// one group (groups start at multiples of 128 rows), read from I on the device. For each
// 128-wide k-block the raw e4m3 products are summed in fp32 registers from 32 x 32 shared-memory
// tiles (e4m3 decoded through a 256-entry table), then scaled by SA[r, b] * SB[g, n/128, b] and
// added to an fp32 accumulator: the dequantization happens per block, in registers. No tensor
// cores, no TMA, no pipelining: nearly all of the speed is still to find.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 32;  // D tile side and k-step
constexpr int kRowsPerThread = 4;
constexpr int kThreadRows = kTile / kRowsPerThread;  // 8
constexpr int kBlock = 128;                          // scale block

// e4m3 (1 sign, 4 exponent, 3 mantissa bits, bias 7, no infinities) to float, exactly.
__device__ float decode_e4m3(unsigned v) {
  const unsigned exponent = (v >> 3) & 15u;
  const unsigned mantissa = v & 7u;
  float magnitude = 0.f;
  if (exponent == 15u && mantissa == 7u) {
    magnitude = __int_as_float(0x7fc00000);  // NaN (S.1111.111)
  } else if (exponent == 0u) {
    magnitude = ldexpf(static_cast<float>(mantissa), -9);
  } else {
    magnitude = ldexpf(static_cast<float>(mantissa | 8u), static_cast<int>(exponent) - 10);
  }
  return (v & 0x80u) != 0 ? -magnitude : magnitude;
}

__global__ void grouped_gemm_kernel(const uint8_t* __restrict__ A, const float* __restrict__ SA,
                                    const uint8_t* __restrict__ B, const float* __restrict__ SB,
                                    const int32_t* __restrict__ I, __nv_bfloat16* __restrict__ D,
                                    int64_t rows, int64_t N, int64_t K) {
  __shared__ float lut[256];
  __shared__ float As[kTile][kTile + 1];  // As[row of D][k]
  __shared__ float Bs[kTile][kTile + 1];  // Bs[column of D][k]
  __shared__ int tile_group;
  const int tx = threadIdx.x;  // column of D within the tile, and k when loading
  const int ty = threadIdx.y;
  const int flat = ty * kTile + tx;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  lut[flat] = decode_e4m3(static_cast<unsigned>(flat));
  if (flat == 0) {
    int g = -1;
    for (int64_t r = row0; r < row0 + kTile && r < rows && g < 0; ++r) g = I[r];
    tile_group = g;
  }
  __syncthreads();
  const int64_t g = tile_group;
  const int64_t col = col0 + tx;
  const int64_t blocks = K / kBlock;
  // A tile of padding rows only still runs the loop (on group 0's operands) and writes zeros:
  // an early return there would put the loop's barriers under a data-dependent branch, which
  // synccheck's static engine rightly cannot prove uniform.
  const bool padding = g < 0;
  const int64_t ge = padding ? 0 : g;
  const uint8_t* Bg = B + ge * N * K;
  const float* SBg = SB + ge * (N / kBlock) * blocks;
  float acc[kRowsPerThread] = {0.f, 0.f, 0.f, 0.f};
  for (int64_t blk = 0; blk < blocks; ++blk) {
    float partial[kRowsPerThread] = {0.f, 0.f, 0.f, 0.f};
    for (int64_t k0 = blk * kBlock; k0 < (blk + 1) * kBlock; k0 += kTile) {
      const int64_t k = k0 + tx;  // K is a multiple of 128, so k < K
      for (int r = ty; r < kTile; r += kThreadRows) {
        const int64_t a_row = row0 + r;
        const int64_t b_row = col0 + r;
        As[r][tx] = a_row < rows ? lut[A[a_row * K + k]] : 0.f;
        Bs[r][tx] = b_row < N ? lut[Bg[b_row * K + k]] : 0.f;
      }
      __syncthreads();
      for (int kk = 0; kk < kTile; ++kk) {
        const float b = Bs[tx][kk];
        for (int i = 0; i < kRowsPerThread; ++i) partial[i] += As[ty + i * kThreadRows][kk] * b;
      }
      __syncthreads();
    }
    const float sb = col < N ? SBg[(col / kBlock) * blocks + blk] : 0.f;
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int64_t row = row0 + ty + i * kThreadRows;
      const float sa = row < rows ? SA[row * blocks + blk] : 0.f;
      acc[i] += partial[i] * (sa * sb);
    }
  }
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int64_t row = row0 + ty + i * kThreadRows;
    if (row >= rows || col >= N) continue;
    D[row * N + col] = __float2bfloat16_rn(!padding && I[row] == g ? acc[i] : 0.f);
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
  const kiln_tensor& a = tensors[0];   // A [rows, K] e4m3
  const kiln_tensor& sa = tensors[1];  // SA [rows, K/128] f32
  const kiln_tensor& b = tensors[2];   // B [G, N, K] e4m3
  const kiln_tensor& sb = tensors[3];  // SB [G, N/128, K/128] f32
  const kiln_tensor& idx = tensors[4];  // I [rows] i32
  const kiln_tensor& d = tensors[5];   // D [rows, N] bf16
  if (!dense(a, KILN_E4M3, 2) || !dense(sa, KILN_F32, 2) || !dense(b, KILN_E4M3, 3) ||
      !dense(sb, KILN_F32, 3) || !dense(idx, KILN_I32, 1) || !dense(d, KILN_BF16, 2))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t N = b.shape[1];
  if (K % kBlock != 0 || N % kBlock != 0) return KILN_ERR_UNSUPPORTED;
  if (b.shape[2] != K || sa.shape[0] != rows || sa.shape[1] != K / kBlock ||
      sb.shape[0] != b.shape[0] || sb.shape[1] != N / kBlock || sb.shape[2] != K / kBlock ||
      idx.shape[0] != rows || d.shape[0] != rows || d.shape[1] != N)
    return KILN_ERR_BAD_ARGUMENT;
  if (rows == 0 || N == 0) return KILN_OK;
  const int64_t grid_x = (N + kTile - 1) / kTile;
  const int64_t grid_y = (rows + kTile - 1) / kTile;
  if (grid_y > 65535) return KILN_ERR_UNSUPPORTED;
  const dim3 grid(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
  grouped_gemm_kernel<<<grid, dim3(kTile, kThreadRows), 0, stream>>>(
      static_cast<const uint8_t*>(a.data), static_cast<const float*>(sa.data),
      static_cast<const uint8_t*>(b.data), static_cast<const float*>(sb.data),
      static_cast<const int32_t*>(idx.data), static_cast<__nv_bfloat16*>(d.data), rows, N, K);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
