// transpose_smem: y[C,R] = x[R,C]^T, fp32.
//
// Variant v2 (issue 18): v1's 64 x 64 tiles with 128-bit accesses on both sides, on a
// persistent grid that keeps loads in flight while it writes. A block loops over tiles
// blockIdx.x, + gridDim.x, ... (row-major over the tile grid); the moment the current tile is
// in shared memory, it issues the 4 float4 loads of its next tile into registers and only then
// reads the current tile out and writes it to y, so every block always has a tile's loads
// outstanding, also while it stores (v1's blocks have none in their write phase). The grid is
// one wave: SMs x the resident blocks per SM from the occupancy API (kMinBlocksPerSm is the
// launch bound; 6 fits the prefetched tile in 40 registers). Tile: a block of 256 threads reads
// 64 rows of 16 float4 (16 rows per pass, 4 passes), parks them in a [64][65] shared array
// (scalar shared accesses, at most 2-way conflicted), and writes 64 rows of y as 16 float4,
// each gathered from 4 consecutive tile rows of one column; y is written with st.global.cs.
//
// Any R, C >= 0 works: 128-bit loads need x 16-byte aligned with a row stride that is a multiple
// of 4 (likewise y for the stores); otherwise, and in the partial tiles at the right and bottom
// edges, elements move one at a time with bounds checks. Column strides must be 1; row strides
// may exceed the row length.
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;
constexpr int kQuads = kTile / 4;                  // float4 per tile row: 16
constexpr int kRowsPerPass = kThreads / kQuads;    // 16
constexpr int kPasses = kTile / kRowsPerPass;      // 4 float4 per thread each way
constexpr int kMinBlocksPerSm = 6;                 // tunable: 6 (40 registers), 8, 4

struct Args {
  const float* x;
  float* y;
  int64_t rows, cols, ldx, ldy;
  int vec_load, vec_store;  // 128-bit accesses allowed on the x / y side
};

// Thread (line, quad)'s share of tile (row0, col0) of x: x[row0 + line + 16 j][col0 + 4 quad ..].
template <typename Index>
__device__ __forceinline__ void load_tile(const Args& a, Index row0, Index col0, int line,
                                          int quad, float4 (&v)[kPasses]) {
  const Index rows = static_cast<Index>(a.rows), cols = static_cast<Index>(a.cols);
  const Index ldx = static_cast<Index>(a.ldx);
  const Index c = col0 + 4 * quad;
  const float* px = a.x + (row0 + line) * ldx + c;
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
}

// Index is int32_t when every offset into x and y fits (fewer registers), int64_t otherwise.
template <typename Index>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) transpose_kernel(Args a) {
  __shared__ float tile[kTile][kTile + 1];
  const int quad = threadIdx.x % kQuads;  // which float4 of a row
  const int line = threadIdx.x / kQuads;  // which row of a pass
  const Index rows = static_cast<Index>(a.rows), cols = static_cast<Index>(a.cols);
  const Index ldy = static_cast<Index>(a.ldy);
  const int64_t tiles_x = (a.cols + kTile - 1) / kTile;
  const int64_t n_tiles = tiles_x * ((a.rows + kTile - 1) / kTile);

  int64_t t = blockIdx.x;  // uniform over the block
  if (t >= n_tiles) return;
  float4 v[kPasses];
  load_tile<Index>(a, static_cast<Index>(t / tiles_x) * kTile, static_cast<Index>(t % tiles_x) * kTile,
                   line, quad, v);
  for (; t < n_tiles; t += gridDim.x) {
    const Index row0 = static_cast<Index>(t / tiles_x) * kTile;  // first row of x
    const Index col0 = static_cast<Index>(t % tiles_x) * kTile;  // first column of x
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      float* s = &tile[line + kRowsPerPass * j][4 * quad];
      s[0] = v[j].x;
      s[1] = v[j].y;
      s[2] = v[j].z;
      s[3] = v[j].w;
    }
    __syncthreads();
    const int64_t next = t + gridDim.x;
    if (next < n_tiles) {  // the next tile's loads fly while this one is written
      load_tile<Index>(a, static_cast<Index>(next / tiles_x) * kTile,
                       static_cast<Index>(next % tiles_x) * kTile, line, quad, v);
    }
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
  const Args a{static_cast<const float*>(x.data),
               static_cast<float*>(y.data),
               rows,
               cols,
               ldx,
               ldy,
               aligned16(x.data) && ldx % 4 == 0 ? 1 : 0,
               aligned16(y.data) && ldy % 4 == 0 ? 1 : 0};
  // Offsets up to (tiles_y * 64 + 63) * ld + ...: 32-bit indices when they fit with room.
  const int64_t span = (tiles_y * kTile + kTile) * (ldx > cols ? ldx : cols) +
                       (tiles_x * kTile + kTile) * (ldy > rows ? ldy : rows);
  const bool narrow = span < (int64_t{1} << 31);
  int device = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, narrow ? transpose_kernel<int32_t> : transpose_kernel<int64_t>, kThreads, 0) !=
          cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const int64_t n_tiles = tiles_x * tiles_y;
  const int64_t wave =
      static_cast<int64_t>(sms > 0 ? sms : 1) * static_cast<int64_t>(per_sm > 0 ? per_sm : 1);
  const unsigned blocks = static_cast<unsigned>(n_tiles < wave ? n_tiles : wave);
  if (narrow) {
    transpose_kernel<int32_t><<<blocks, kThreads, 0, stream>>>(a);
  } else {
    transpose_kernel<int64_t><<<blocks, kThreads, 0, stream>>>(a);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
