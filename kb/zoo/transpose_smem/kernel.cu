// transpose_smem: y[C,R] = x[R,C]^T, fp32.
//
// A block of 32 x 8 threads moves one 32 x 32 tile: it reads 32 rows of 32 consecutive x
// elements (each warp reads 128 contiguous bytes per row), parks them in shared memory, and
// writes 32 rows of 32 consecutive y elements, reading the tile column-wise. The tile is
// declared [32][33]: the extra column shifts each row by one bank, so the column-wise reads
// of a warp (32 different rows, same column) land in 32 different banks.
//
// Any R, C >= 0 works: partial tiles at the right and bottom edges are bounds-checked on
// both the read and the write side. Column strides must be 1; row strides may exceed the
// row length. Tile rows beyond gridDim.y * 32 are handled by a loop inside the kernel.
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // blockDim.y: each thread moves kTile / kRowsPerPass elements
constexpr int64_t kMaxGridY = 65535;

__global__ void __launch_bounds__(kTile* kRowsPerPass)
    transpose_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols,
                     int64_t ldx, int64_t ldy) {
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;  // first column of x
  const int64_t tile_rows = (rows + kTile - 1) / kTile;

  for (int64_t tr = blockIdx.y; tr < tile_rows; tr += gridDim.y) {  // uniform over the block
    const int64_t row0 = tr * kTile;                                // first row of x
    // Read: lane tx takes column col0 + tx of rows row0 + ty, ty + 8, ...
    const int64_t c = col0 + tx;
#pragma unroll
    for (int j = 0; j < kTile; j += kRowsPerPass) {
      const int64_t r = row0 + ty + j;
      if (r < rows && c < cols) tile[ty + j][tx] = __ldg(x + r * ldx + c);
    }
    __syncthreads();
    // Write: y row = x column. Lane tx writes y[col0 + ty + j][row0 + tx], which is
    // x[row0 + tx][col0 + ty + j] = tile[tx][ty + j]: stride-33 reads, distinct banks.
    const int64_t yc = row0 + tx;  // column of y
#pragma unroll
    for (int j = 0; j < kTile; j += kRowsPerPass) {
      const int64_t yr = col0 + ty + j;  // row of y
      if (yr < cols && yc < rows) y[yr * ldy + yc] = tile[tx][ty + j];
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
  const dim3 grid(static_cast<unsigned>(tiles_x),
                  static_cast<unsigned>(tiles_y < kMaxGridY ? tiles_y : kMaxGridY));
  const dim3 block(kTile, kRowsPerPass);
  transpose_kernel<<<grid, block, 0, stream>>>(static_cast<const float*>(x.data),
                                               static_cast<float*>(y.data), rows, cols, ldx, ldy);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
