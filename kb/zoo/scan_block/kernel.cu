// scan_block: y[i] = x[0] + ... + x[i] (inclusive prefix sum), int32 with wrap-around.
//
// Reduce, scan, then scan again with carries, in three launches on the stream:
//   1. tile_sums_kernel: block b adds up tile b (kTile = 4096 elements) into g_tile_sums[b].
//   2. scan_tile_sums_kernel: one block turns g_tile_sums into exclusive prefixes, in place.
//   3. scan_tiles_kernel: block b scans tile b (per thread, then warp shfl.sync scans, then
//      the warp totals) and adds the prefix of all tiles before it.
// No block ever waits for another, so nothing can deadlock, and x is read twice and y
// written once (3N words of traffic). Arithmetic is on uint32, where wrap-around is defined
// and gives the same bits as two's-complement int32 wrap.
//
// Any 0 <= N <= 2^31 works (N > 2^31 is KILN_ERR_UNSUPPORTED: the tile-sum array holds 2^19
// entries). x and y must be contiguous. 16-byte loads/stores are used for whole tiles when x
// and y are 16-byte aligned; the last partial tile, or unaligned data, takes a scalar path.
//
// g_tile_sums is a __device__ array that lives with the module (2 MiB); step 1 overwrites
// every entry that steps 2 and 3 read, so nothing carries over between calls. Calls running
// concurrently on different streams would share it (see NOTES.md).
#include <cuda_runtime.h>

#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kItems = 16;  // consecutive elements per thread in step 3
constexpr int kTile = kThreads * kItems;
constexpr int kMaxTiles = 1 << 19;
constexpr int kSumThreads = 1024;  // the single block of step 2

__device__ uint32_t g_tile_sums[kMaxTiles];

// Inclusive scan over the lanes of a warp. Every lane must call it.
__device__ __forceinline__ uint32_t warp_inclusive_scan(uint32_t v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const uint32_t up = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += up;
  }
  return v;
}

__device__ __forceinline__ uint32_t warp_sum(uint32_t v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Step 1. Striped reads (element tile_start + i * kThreads + t) so every load is coalesced;
// the order of integer additions does not matter.
__global__ void __launch_bounds__(kThreads)
    tile_sums_kernel(const uint32_t* __restrict__ x, int64_t n) {
  __shared__ uint32_t warp_totals[kWarps];
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kTile;
  uint32_t sum = 0;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int64_t k = start + i * kThreads + threadIdx.x;
    if (k < n) sum += __ldg(x + k);
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  sum = warp_sum(sum);
  if (lane == 0) warp_totals[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = warp_sum(lane < kWarps ? warp_totals[lane] : 0u);
    if (lane == 0) g_tile_sums[blockIdx.x] = sum;
  }
}

// Step 2. One block of kSumThreads: thread t owns a run of `per_thread` consecutive tile
// sums, adds them up, the block scans those run totals, and each thread rewrites its run as
// exclusive prefixes.
__global__ void __launch_bounds__(kSumThreads) scan_tile_sums_kernel(int tiles) {
  __shared__ uint32_t warp_totals[kSumThreads / 32];
  const int per_thread = (tiles + kSumThreads - 1) / kSumThreads;
  const int begin = threadIdx.x * per_thread;
  const int end = begin + per_thread < tiles ? begin + per_thread : tiles;

  uint32_t run = 0;
#pragma unroll 4  // independent loads in flight; the runs are short (<= 512)
  for (int i = begin; i < end; ++i) run += g_tile_sums[i];

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t inclusive = warp_inclusive_scan(run);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) warp_totals[lane] = warp_inclusive_scan(warp_totals[lane]);  // 32 warps
  __syncthreads();
  uint32_t prefix = (warp > 0 ? warp_totals[warp - 1] : 0u) + (inclusive - run);

#pragma unroll 4
  for (int i = begin; i < end; ++i) {
    const uint32_t v = g_tile_sums[i];
    g_tile_sums[i] = prefix;
    prefix += v;
  }
}

// Step 3. Thread t owns elements tile_start + t * kItems ... + kItems - 1.
__global__ void __launch_bounds__(kThreads)
    scan_tiles_kernel(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t n,
                      int vector_ok) {
  __shared__ uint32_t warp_totals[kWarps];
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t first = start + static_cast<int64_t>(threadIdx.x) * kItems;
  const bool whole_tile = vector_ok && start + kTile <= n;  // uniform over the block

  uint32_t v[kItems];
  if (whole_tile) {
    const uint4* x4 = reinterpret_cast<const uint4*>(x + first);
#pragma unroll
    for (int q = 0; q < kItems / 4; ++q) {
      const uint4 u = __ldg(x4 + q);
      v[4 * q] = u.x;
      v[4 * q + 1] = u.y;
      v[4 * q + 2] = u.z;
      v[4 * q + 3] = u.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) v[i] = first + i < n ? __ldg(x + first + i) : 0u;
  }

  // Serial inclusive scan inside the thread.
#pragma unroll
  for (int i = 1; i < kItems; ++i) v[i] += v[i - 1];
  const uint32_t thread_total = v[kItems - 1];

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t inclusive = warp_inclusive_scan(thread_total);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  uint32_t offset = g_tile_sums[blockIdx.x] + (inclusive - thread_total);
#pragma unroll
  for (int w = 0; w < kWarps - 1; ++w) {
    if (w < warp) offset += warp_totals[w];
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) v[i] += offset;

  if (whole_tile) {
    uint4* y4 = reinterpret_cast<uint4*>(y + first);
#pragma unroll
    for (int q = 0; q < kItems / 4; ++q) {
      y4[q] = make_uint4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (first + i < n) y[first + i] = v[i];
    }
  }
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 2 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];  // x[N]
  const kiln_tensor& y = tensors[1];  // y[N]
  if (x.dtype != KILN_I32 || y.dtype != KILN_I32 || x.rank != 1 || y.rank != 1) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t n = x.shape[0];
  if (n < 0 || y.shape[0] != n) return KILN_ERR_BAD_ARGUMENT;
  if (n == 0) return KILN_OK;
  if (x.data == nullptr || y.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  if (!is_contiguous(x) || !is_contiguous(y)) return KILN_ERR_UNSUPPORTED;
  const int64_t tiles = (n + kTile - 1) / kTile;
  if (tiles > kMaxTiles) return KILN_ERR_UNSUPPORTED;

  const auto* xp = static_cast<const uint32_t*>(x.data);
  auto* yp = static_cast<uint32_t*>(y.data);
  const int vector_ok =
      (reinterpret_cast<uintptr_t>(xp) % 16 == 0 && reinterpret_cast<uintptr_t>(yp) % 16 == 0) ? 1
                                                                                               : 0;
  const unsigned grid = static_cast<unsigned>(tiles);
  tile_sums_kernel<<<grid, kThreads, 0, stream>>>(xp, n);
  scan_tile_sums_kernel<<<1, kSumThreads, 0, stream>>>(static_cast<int>(tiles));
  scan_tiles_kernel<<<grid, kThreads, 0, stream>>>(xp, yp, n, vector_ok);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
