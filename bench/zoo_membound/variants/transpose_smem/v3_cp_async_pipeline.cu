// transpose_smem: y[C,R] = x[R,C]^T, fp32.
//
// Variant v3 (issue 18): a persistent block streams 64 x 64 tiles through a kStages-deep ring
// of shared-memory tiles filled with cp.async (16-byte cp.async.cg: global to shared without
// registers, bypassing L1). While a block reads tile k out of shared memory and writes it to y,
// the copies of tiles k + 1 .. k + kStages - 1 are in flight: with kStages = 3 and 4 blocks of
// 48 KiB per SM, 128 KiB of loads per SM are outstanding all the time, and no register holds
// them. The grid is one wave (SMs x resident blocks per SM, from the occupancy API); block b
// takes tiles b, b + gridDim.x, ... (row-major over the tile grid).
//
// Shared layout: a tile is 64 rows of 16 float4 slots, float4 q of row r stored in slot
// q ^ ((r / 4) % 16) (16-byte aligned for cp.async, no pad). The write phase reads, per float4
// of y, one column of 4 consecutive rows 4 rq .. 4 rq + 3 of the tile; across a warp's 16 rq
// values the swizzle spreads them over 8 bank groups: at most 2-way conflicts, absorbed many
// times over by shared-memory bandwidth at HBM rates. y is written as float4 with st.global.cs.
//
// Any R, C >= 0 works: cp.async needs x 16-byte aligned with a row stride that is a multiple of
// 4 and a whole tile; other tiles are filled with bounds-checked scalar loads into the same
// layout. 128-bit stores need y aligned likewise, else (and in partial tiles) elements are
// written one at a time. Column strides must be 1; row strides may exceed the row length.
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;
constexpr int kQuads = kTile / 4;                // float4 per tile row: 16
constexpr int kRowsPerPass = kThreads / kQuads;  // 16
constexpr int kPasses = kTile / kRowsPerPass;    // 4 float4 per thread each way
constexpr int kStages = 3;  // tunable: 3 (48 KiB, 4 blocks/SM), 2 (32 KiB, 7 blocks/SM)

struct Args {
  const float* x;
  float* y;
  int64_t rows, cols, ldx, ldy;
  int vec_load, vec_store;  // 128-bit accesses allowed on the x / y side
};

// Word offset of float4 slot `quad` of tile row r.
__device__ __forceinline__ int slot(int r, int quad) {
  return r * kTile + 4 * (quad ^ ((r / 4) % kQuads));
}

__device__ __forceinline__ void cp_async16(float* smem, const float* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Starts filling `stage` with tile t (cp.async for whole tiles, scalar loads otherwise).
template <typename Index>
__device__ __forceinline__ void fill(const Args& a, float* stage, int64_t t, int64_t tiles_x,
                                     int line, int quad) {
  const Index rows = static_cast<Index>(a.rows), cols = static_cast<Index>(a.cols);
  const Index ldx = static_cast<Index>(a.ldx);
  const Index row0 = static_cast<Index>(t / tiles_x) * kTile;
  const Index col0 = static_cast<Index>(t % tiles_x) * kTile;
  const Index c = col0 + 4 * quad;
  const float* px = a.x + (row0 + line) * ldx + c;
  if (a.vec_load && row0 + kTile <= rows && col0 + kTile <= cols) {  // uniform over the block
#pragma unroll
    for (int j = 0; j < kPasses; ++j)
      cp_async16(stage + slot(line + kRowsPerPass * j, quad), px + j * kRowsPerPass * ldx);
  } else {
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      const bool in = row0 + line + kRowsPerPass * j < rows;
      const float* p = px + j * kRowsPerPass * ldx;
      float* s = stage + slot(line + kRowsPerPass * j, quad);
      s[0] = in && c < cols ? __ldg(p) : 0.f;
      s[1] = in && c + 1 < cols ? __ldg(p + 1) : 0.f;
      s[2] = in && c + 2 < cols ? __ldg(p + 2) : 0.f;
      s[3] = in && c + 3 < cols ? __ldg(p + 3) : 0.f;
    }
  }
}

// Index is int32_t when every offset into x and y fits (fewer registers), int64_t otherwise.
template <typename Index>
__global__ void __launch_bounds__(kThreads) transpose_kernel(Args a) {
  __shared__ __align__(16) float ring[kStages][kTile * kTile];
  const int quad = threadIdx.x % kQuads;  // which float4 of a row
  const int line = threadIdx.x / kQuads;  // which row of a pass
  const Index rows = static_cast<Index>(a.rows), cols = static_cast<Index>(a.cols);
  const Index ldy = static_cast<Index>(a.ldy);
  const int64_t tiles_x = (a.cols + kTile - 1) / kTile;
  const int64_t n_tiles = tiles_x * ((a.rows + kTile - 1) / kTile);
  const int64_t step = gridDim.x;
  const int64_t first = blockIdx.x;

  // Prologue: tiles 0 .. kStages - 2 of this block. One commit group per tile, empty or not,
  // so that "group k complete" always means "tile k landed".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    const int64_t t = first + s * step;
    if (t < n_tiles) fill<Index>(a, ring[s], t, tiles_x, line, quad);
    cp_async_commit();
  }
  for (int64_t k = 0;; ++k) {  // uniform over the block
    const int64_t t = first + k * step;
    if (t >= n_tiles) break;
    cp_async_wait<kStages - 2>();  // this thread's copies of tile k have landed
    __syncthreads();               // everyone's have; and stage (k - 1) % kStages is free
    const int64_t ahead = t + (kStages - 1) * step;
    if (ahead < n_tiles)
      fill<Index>(a, ring[(k + kStages - 1) % kStages], ahead, tiles_x, line, quad);
    cp_async_commit();
    const float* tile = ring[k % kStages];
    const Index row0 = static_cast<Index>(t / tiles_x) * kTile;  // first row of x
    const Index col0 = static_cast<Index>(t % tiles_x) * kTile;  // first column of x
    // Write: y row col0 + line + 16 j (a column of the tile), y columns row0 + 4 quad .. + 3
    // (4 consecutive tile rows).
    const Index yc = row0 + 4 * quad;
    float* py = a.y + (col0 + line) * ldy + yc;
    const bool whole = a.vec_store && row0 + kTile <= rows && col0 + kTile <= cols;
#pragma unroll
    for (int j = 0; j < kPasses; ++j) {
      const int tc = line + kRowsPerPass * j;
      const int q = tc / 4, w = tc % 4;
      const float4 o = make_float4(
          tile[slot(4 * quad, q) + w], tile[slot(4 * quad + 1, q) + w],
          tile[slot(4 * quad + 2, q) + w], tile[slot(4 * quad + 3, q) + w]);
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
  }
  cp_async_wait<0>();  // no copy outlives the block (the trailing groups are empty)
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
