// scan_decoupled_lookback: y[i] = x[0] + ... + x[i] (inclusive prefix sum), int32 with
// wrap-around, in ONE launch that reads x once and writes y once (2N words of traffic).
//
// Single-pass scan with decoupled look-back (Merrill and Garland, 2016):
//   - Tile ids come from an atomic ticket (g_ticket), not blockIdx: a block only ever waits on
//     tiles whose blocks took their tickets earlier, so they are running or finished and will
//     publish. (With blockIdx, block 7 could spin on block 3 that the hardware has not started:
//     deadlock. On kiln's simulator, whose CTAs run one after another, the ticket order is
//     launch order, so every predecessor has finished when a block looks back.)
//   - Each tile's thread 0 holds 16 consecutive items, warps scan with __shfl_up_sync, and the
//     block combines the 8 warp totals through shared memory, as in scan_block.
//   - Status: one 64-bit word per tile in g_status, written with one store, so the flag and the
//     value can never be seen torn: bits 0-31 the value, 32-33 the flag (1: AGGREGATE, this
//     tile's sum; 2: PREFIX, the sum of tiles 0..tile), 34-63 the launch's epoch. A word from an
//     earlier launch has another epoch and reads as "not yet published", so nothing needs to
//     be reset between calls (no memset, no second launch).
//   - Tile 0 publishes PREFIX at once. Any other tile publishes AGGREGATE, then warp 0 looks
//     back 32 predecessors at a time: it waits until all 32 have published, adds the values up to
//     the nearest PREFIX and stops there, or adds all 32 AGGREGATEs and moves the window back.
//     Then it publishes PREFIX = exclusive + aggregate, and the block adds exclusive to its items.
//   - The block that takes the last ticket resets g_ticket to 0 for the next launch: every other
//     block took its ticket before, so no one can read the counter after it.
// g_status holds 2^19 tiles (4 MiB, a __device__ array: nothing is allocated per call). The
// epoch is a host-side counter (1 .. 2^30 - 1; 0 is the zeroed array's): concurrent calls on
// different streams of one device would share the ticket and the status words: serialize them.
// Requirements: 0 <= N <= 2^31 (else KILN_ERR_UNSUPPORTED), contiguous x and y.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kItems = 16;  // consecutive elements per thread
constexpr int kTile = kThreads * kItems;
constexpr int64_t kMaxTiles = int64_t{1} << 19;
constexpr uint64_t kAggregate = 1, kPrefix = 2;
constexpr uint32_t kMaxEpoch = (1u << 30) - 1;

__device__ unsigned long long g_status[kMaxTiles];
__device__ unsigned int g_ticket;

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
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ unsigned long long status_word(uint32_t epoch, uint64_t flag,
                                                          uint32_t value) {
  return (static_cast<unsigned long long>(epoch) << 34) | (flag << 32) | value;
}

__device__ __forceinline__ void publish(int tile, unsigned long long word) {
  // A relaxed store at GPU scope: one 64-bit access, never torn.
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(g_status + tile), "l"(word) : "memory");
}

__device__ __forceinline__ unsigned long long peek(int tile) {
  unsigned long long word;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(g_status + tile) : "memory");
  return word;
}

// Warp 0: the sum of tiles 0 .. tile-1, from their published status words (0 for tile 0).
__device__ uint32_t look_back(int tile, uint32_t epoch) {
  const int lane = threadIdx.x & 31;
  uint32_t exclusive = 0;
  for (int window = tile - 1;; window -= 32) {
    const int predecessor = window - lane;  // lane 0 is the nearest
    uint64_t flag = kPrefix;                 // before tile 0: a PREFIX of 0 stops the walk
    uint32_t value = 0;
    for (;;) {
      if (predecessor >= 0) {
        const unsigned long long word = peek(predecessor);
        const bool current = static_cast<uint32_t>(word >> 34) == epoch;
        flag = current ? (word >> 32) & 3u : 0u;
        value = static_cast<uint32_t>(word);
      }
      if (__all_sync(0xffffffffu, flag != 0)) break;  // all 32 have published
    }
    const unsigned prefixes = __ballot_sync(0xffffffffu, flag == kPrefix);
    if (prefixes != 0) {
      const int nearest = __ffs(prefixes) - 1;
      exclusive += warp_sum(lane <= nearest ? value : 0u);
      return exclusive;
    }
    exclusive += warp_sum(value);
  }
}

__global__ void __launch_bounds__(kThreads)
    scan_kernel(const uint32_t* __restrict__ x, uint32_t* __restrict__ y, int64_t n, int tiles,
                uint32_t epoch, int vector_ok) {
  __shared__ int s_tile;
  __shared__ uint32_t warp_totals[kWarps];
  __shared__ uint32_t s_exclusive;
  if (threadIdx.x == 0) {
    const unsigned ticket = atomicAdd(&g_ticket, 1u);
    if (ticket == static_cast<unsigned>(tiles) - 1) atomicExch(&g_ticket, 0u);
    s_tile = static_cast<int>(ticket);
  }
  __syncthreads();
  const int tile = s_tile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t first = static_cast<int64_t>(tile) * kTile + static_cast<int64_t>(threadIdx.x) * kItems;
  const bool full = vector_ok && first + kItems <= n;

  uint32_t items[kItems];
  if (full) {
    const uint4* src = reinterpret_cast<const uint4*>(x + first);
#pragma unroll
    for (int v = 0; v < kItems / 4; ++v) {
      const uint4 q = __ldg(src + v);
      items[4 * v] = q.x;
      items[4 * v + 1] = q.y;
      items[4 * v + 2] = q.z;
      items[4 * v + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) items[i] = first + i < n ? __ldg(x + first + i) : 0u;
  }
#pragma unroll
  for (int i = 1; i < kItems; ++i) items[i] += items[i - 1];
  const uint32_t thread_total = items[kItems - 1];
  const uint32_t inclusive = warp_inclusive_scan(thread_total);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  uint32_t before = inclusive - thread_total;  // this thread's exclusive prefix in the tile
  uint32_t aggregate = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    const uint32_t t = warp_totals[w];
    if (w < warp) before += t;
    aggregate += t;
  }

  if (warp == 0) {
    // Every tile runs the same collective code: tile 0's look-back window lies before the
    // array, reads nothing and returns 0 (the collectives must not sit under a branch on the
    // tile id, a value from shared memory that a static checker cannot prove warp-uniform).
    if (lane == 0 && tile != 0) publish(tile, status_word(epoch, kAggregate, aggregate));
    const uint32_t exclusive = look_back(tile, epoch);
    if (lane == 0) {
      publish(tile, status_word(epoch, kPrefix, exclusive + aggregate));
      s_exclusive = exclusive;
    }
  }
  __syncthreads();
  const uint32_t carry = s_exclusive + before;
  if (full) {
    uint4* dst = reinterpret_cast<uint4*>(y + first);
#pragma unroll
    for (int v = 0; v < kItems / 4; ++v) {
      dst[v] = make_uint4(items[4 * v] + carry, items[4 * v + 1] + carry, items[4 * v + 2] + carry,
                          items[4 * v + 3] + carry);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (first + i < n) y[first + i] = items[i] + carry;
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

// 1, 2, ..., kMaxEpoch, 1, ...: a different epoch for every call.
uint32_t next_epoch() {
  static std::atomic<uint32_t> calls{0};
  return calls.fetch_add(1) % kMaxEpoch + 1;
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
      reinterpret_cast<uintptr_t>(xp) % 16 == 0 && reinterpret_cast<uintptr_t>(yp) % 16 == 0;
  scan_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(
      xp, yp, n, static_cast<int>(tiles), next_epoch(), vector_ok);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
