// transpose_smem: y[C,R] = x[R,C]^T, fp32.
//
// 64 x 64 tiles moved with 128-bit accesses on both sides. A block of
// 256 threads reads a tile as 64 rows of 16 float4 (16 threads per row, 16 rows per pass, 4
// passes: each thread has 4 x 16 bytes in flight, all issued before the first is used), parks
// it in a [64][65] shared array, and writes 64 rows of y as 16 float4 each, gathering every
// float4 from 4 consecutive tile rows of one column. The pad column makes the scalar shared
// accesses at most 2-way conflicted (lanes 4r and 4r + 32 of a column share a bank), which the
// shared-memory bandwidth absorbs many times over at HBM rates. __launch_bounds__(256, 8) keeps
// 8 blocks (2048 threads, 8 x 16.6 KB shared) resident per SM: 128 KiB of loads in flight per
// SM against the 32 KiB of the entry's first version (32 x 32 tiles, 4-byte loads, 6 blocks
// per SM by its 40 registers). y is written with st.global.cs (evict-first): it is never
// re-read here.
//
// Any R, C >= 0 works: 128-bit loads need x 16-byte aligned with a row stride that is a multiple
// of 4 (likewise y for the stores); otherwise, and in the partial tiles at the right and bottom
// edges, elements move one at a time with bounds checks. Column strides must be 1; row strides
// may exceed the row length. Tile rows beyond gridDim.y tiles are handled by a loop.
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;
constexpr int kQuads = kTile / 4;                  // float4 per tile row: 16
constexpr int kRowsPerPass = kThreads / kQuads;    // 16
constexpr int kPasses = kTile / kRowsPerPass;      // 4 float4 per thread each way
constexpr int kMinBlocksPerSm = 8;                 // tunable: 8 (32 registers), 6, 4
constexpr int64_t kMaxGridY = 65535;

struct Args {
  const float* x;
  float* y;
  int64_t rows, cols, ldx, ldy;
  int vec_load, vec_store;  // 128-bit accesses allowed on the x / y side
};

// Index is int32_t when every offset into x and y fits (fewer registers: 8 blocks per SM
// without spills), int64_t otherwise.
template <typename Index>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) transpose_kernel(Args a) {
  __shared__ float tile[kTile][kTile + 1];
  const int quad = threadIdx.x % kQuads;  // which float4 of a row
  const int line = threadIdx.x / kQuads;  // which row of a pass
  const Index rows = static_cast<Index>(a.rows), cols = static_cast<Index>(a.cols);
  const Index ldx = static_cast<Index>(a.ldx), ldy = static_cast<Index>(a.ldy);
  const Index col0 = static_cast<Index>(blockIdx.x) * kTile;  // first column of x
  const Index tile_rows = (rows + kTile - 1) / kTile;

  for (Index tr = blockIdx.y; tr < tile_rows; tr += gridDim.y) {  // uniform over the block
    const Index row0 = tr * kTile;                                // first row of x
    // Read: thread (line, quad) takes x[row0 + line + 16 j][col0 + 4 quad .. + 3].
    const Index c = col0 + 4 * quad;
    const float* px = a.x + (row0 + line) * ldx + c;
    float4 v[kPasses];
    if (a.vec_load && row0 + kTile <= rows && col0 + kTile <= cols) {  // a whole tile
#pragma unroll
      for (int j = 0; j < kPasses; ++j)
        v[j] = __ldg(reinterpret_cast<const float4*>(px + j * kRowsPerPass * ldx));
    } else {
#pragma unroll
      for (int j = 0; j < kPasses; ++j) {
        const bool in = row0 + line + kRowsPerPass * j < rows;
        const float* p = px + j * kRowsPerPass * ldx;
        v[j].x = in && c < cols ? __ldg(p) : 0.f;
        v[j].y = in && c + 1 < cols ? __ldg(p + 1) : 0.f;
        v[j].z = in && c + 2 < cols ? __ldg(p + 2) : 0.f;
        v[j].w = in && c + 3 < cols ? __ldg(p + 3) : 0.f;
      }
    }
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      float* t = &tile[line + kRowsPerPass * j][4 * quad];
      t[0] = v[j].x;
      t[1] = v[j].y;
      t[2] = v[j].z;
      t[3] = v[j].w;
    }
    __syncthreads();
    // Write: y row col0 + line + 16 j (a column of the tile), y columns row0 + 4 quad .. + 3
    // (4 consecutive tile rows).
    const Index yc = row0 + 4 * quad;
    float* py = a.y + (col0 + line) * ldy + yc;
    const bool whole = a.vec_store && row0 + kTile <= rows && col0 + kTile <= cols;
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      const int tc = line + kRowsPerPass * j;
      const float4 o = make_float4(tile[4 * quad][tc], tile[4 * quad + 1][tc],
                                   tile[4 * quad + 2][tc], tile[4 * quad + 3][tc]);
      float* p = py + j * kRowsPerPass * ldy;
      if (whole) {
        __stcs(reinterpret_cast<float4*>(p), o);
      } else if (col0 + tc < cols) {
        if (yc < rows) p[0] = o.x;
        if (yc + 1 < rows) p[1] = o.y;
        if (yc + 2 < rows) p[2] = o.z;
        if (yc + 3 < rows) p[3] = o.w;
      }
    }
    __syncthreads();  // the tile is refilled by the next iteration
  }
}

int64_t row_stride(const kiln_tensor& t) {
  const int64_t rows = t.shape[0];
  const int64_t cols = t.shape[1];
  if (cols > 1 && t.strides[1] != 1) return -1;
  if (rows <= 1) return cols;
  return t.strides[0] >= cols ? t.strides[0] : -1;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];  // x[R,C]
  const kiln_tensor& y = tensors[1];  // y[C,R]
  if (x.dtype != KILN_F32 || y.dtype != KILN_F32 || x.rank != 2 || y.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  if (rows < 0 || cols < 0 || y.shape[0] != cols || y.shape[1] != rows)
    return KILN_ERR_BAD_ARGUMENT;
  if (rows == 0 || cols == 0) return KILN_OK;
  if (x.data == nullptr || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  const int64_t ldx = row_stride(x);
  const int64_t ldy = row_stride(y);
  if (ldx < 0 || ldy < 0) return KILN_ERR_UNSUPPORTED;

  const int64_t tiles_x = (cols + kTile - 1) / kTile;
  const int64_t tiles_y = (rows + kTile - 1) / kTile;
  if (tiles_x > 2147483647) return KILN_ERR_UNSUPPORTED;
  const Args a{static_cast<const float*>(x.data),
               static_cast<float*>(y.data),
               rows,
               cols,
               ldx,
               ldy,
               aligned16(x.data) && ldx % 4 == 0 ? 1 : 0,
               aligned16(y.data) && ldy % 4 == 0 ? 1 : 0};
  const dim3 grid(static_cast<unsigned>(tiles_x),
                  static_cast<unsigned>(tiles_y < kMaxGridY ? tiles_y : kMaxGridY));
  // Offsets up to (tiles_y * 64 + 63) * ld + ...: 32-bit indices when they fit with room.
  const int64_t span = (tiles_y * kTile + kTile) * (ldx > cols ? ldx : cols) +
                       (tiles_x * kTile + kTile) * (ldy > rows ? ldy : rows);
  if (span < (int64_t{1} << 31)) {
    transpose_kernel<int32_t><<<grid, kThreads, 0, stream>>>(a);
  } else {
    transpose_kernel<int64_t><<<grid, kThreads, 0, stream>>>(a);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
