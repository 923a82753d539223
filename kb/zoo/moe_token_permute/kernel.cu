// moe_token_permute: tokens into expert-contiguous order for a mixture-of-experts layer. From
// x[T, H] (bf16 or f16, copied bit for bit) and the router's indices[T, K] (experts in
// [0, E)), writes expert_offsets[E + 1], x_sorted[T*K, H] (expert by expert; within one expert
// in increasing order of the slot t*K + k: a stable, deterministic order) and dest_rows[T, K]
// (the row of x_sorted that slot (t, k) went to, what the combine gathers).
//
// A counting sort by expert over the T*K slots, in four launches with no atomics on global
// memory, so the order never depends on timing:
//   1. count_kernel: block b counts the experts of its tile of kTile slots in a shared-memory
//      histogram (shared atomics) and writes all E counts to counts[b][:];
//   2. offsets_kernel (one block, thread e per expert): walks the blocks in order taking
//      exclusive running sums of counts[:][e], scans the expert totals across the block, and
//      writes bases[b][e] = the first row of x_sorted for expert e's slots of tile b, and
//      expert_offsets;
//   3. rank_kernel: block b ranks its slots in slot order and writes dest_rows. Per chunk of
//      256 slots (one per thread), __match_any_sync groups the lanes of a warp by expert, a
//      lane's rank is the number of matching lower lanes, and the warps claim their rows from
//      the shared running base[e] one after another (warp w between barriers w and w+1): warp
//      order is slot order, so ranks are stable;
//   4. copy_kernel: one warp per slot copies the token's row to its dest row, 16 bytes per
//      lane, over T*K/8 blocks (the copy is nearly all the traffic: it must fill the GPU).
// Workspace: counts and bases, blocks x E ints each, cudaMalloc'd once per device
// (kWorkspaceInts, 16 MiB) and reused; every call overwrites what it reads, and each kernel
// can be rerun on its inputs (none updates its input in place). Concurrent calls on different streams of
// one device would share it: serialize them.
// Constraints (else KILN_ERR_UNSUPPORTED): E <= 1024, T*K < 2^31, blocks x E within the
// workspace, contiguous tensors. H % 8 == 0 with 16-byte aligned rows copies with uint4;
// other H copy element by element.
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kChunks = 8;                  // chunks of kThreads slots per tile
constexpr int kTile = kThreads * kChunks;   // slots per block
constexpr int kMaxExperts = 1024;
constexpr int64_t kWorkspaceInts = 4 << 20;
constexpr int kMaxDevices = 16;

__global__ void __launch_bounds__(kThreads)
    count_kernel(const int* __restrict__ indices, int* __restrict__ counts, int slots,
                 int experts) {
  extern __shared__ int histogram[];  // experts ints
  for (int e = threadIdx.x; e < experts; e += kThreads) histogram[e] = 0;
  __syncthreads();
  const int first = blockIdx.x * kTile;
  for (int i = threadIdx.x; i < kTile; i += kThreads) {
    if (first + i < slots) atomicAdd(&histogram[__ldg(indices + first + i)], 1);
  }
  __syncthreads();
  for (int e = threadIdx.x; e < experts; e += kThreads) {
    counts[static_cast<size_t>(blockIdx.x) * experts + e] = histogram[e];
  }
}

// One block of (E rounded up to warps) threads, thread e owning expert e.
__global__ void __launch_bounds__(kMaxExperts)
    offsets_kernel(const int* __restrict__ counts, int* __restrict__ bases, int* __restrict__ offsets,
                   int blocks, int experts) {
  __shared__ int warp_totals[kMaxExperts / 32];
  const int e = threadIdx.x, lane = e & 31, warp = e >> 5;
  int total = 0;
  if (e < experts) {
    for (int b = 0; b < blocks; ++b) {  // column e, in block order: coalesced across threads
      const size_t at = static_cast<size_t>(b) * experts + e;
      bases[at] = total;
      total += counts[at];
    }
  }
  // Exclusive scan of the expert totals across the block: warp scans, then the warp totals.
  int inclusive = total;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int up = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += up;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  int before = 0;
  for (int w = 0; w < warp; ++w) before += warp_totals[w];
  const int start = before + inclusive - total;
  if (e < experts) {
    offsets[e] = start;
    if (e == experts - 1) offsets[experts] = start + total;
    for (int b = 0; b < blocks; ++b) bases[static_cast<size_t>(b) * experts + e] += start;
  }
}

__global__ void __launch_bounds__(kThreads)
    rank_kernel(const int* __restrict__ indices, const int* __restrict__ bases,
                int* __restrict__ dest_rows, int slots, int experts) {
  extern __shared__ int base[];  // experts ints: the next free row of each expert
  for (int e = threadIdx.x; e < experts; e += kThreads) {
    base[e] = bases[static_cast<size_t>(blockIdx.x) * experts + e];
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned lower_lanes = (1u << lane) - 1;
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    const int slot = blockIdx.x * kTile + chunk * kThreads + threadIdx.x;
    const bool present = slot < slots;
    const int expert = present ? __ldg(indices + slot) : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, expert);
    const int rank = __popc(peers & lower_lanes);
    const bool leader = rank == 0;
    int row = 0;
    // Warps claim rows in warp order (= slot order). Barrier w + 1 publishes warp w's update.
    for (int w = 0; w < kWarps; ++w) {
      __syncthreads();
      if (warp == w && present && leader) {
        row = base[expert];
        base[expert] = row + __popc(peers);
      }
    }
    __syncthreads();
    row = __shfl_sync(0xffffffffu, row, __ffs(peers) - 1) + rank;
    if (present) dest_rows[slot] = row;
  }
}

// One warp per slot (t, k), 8 per block: copies row t of x to row dest_rows[t*K + k] of
// x_sorted. A grid of T*K/8 blocks keeps every SM streaming, whatever the tile count of the
// ranking kernels (a 65536-slot problem is only 32 ranking tiles).
template <bool kVector>
__global__ void __launch_bounds__(kThreads)
    copy_kernel(const uint16_t* __restrict__ x, const int* __restrict__ dest_rows,
                uint16_t* __restrict__ x_sorted, int slots, int k, int64_t h) {
  const int lane = threadIdx.x & 31;
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (slot >= slots) return;
  const int64_t token = slot / k, row = __ldg(dest_rows + slot);
  if (kVector) {
    const uint4* from = reinterpret_cast<const uint4*>(x + token * h);
    uint4* to = reinterpret_cast<uint4*>(x_sorted + row * h);
#pragma unroll 4
    for (int64_t c = lane; c < h / 8; c += 32) to[c] = __ldg(from + c);
  } else {
    for (int64_t c = lane; c < h; c += 32) x_sorted[row * h + c] = x[token * h + c];
  }
}

bool is_contiguous(const kiln_tensor& t) {
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    if (t.shape[d] > 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int* device_workspace() {
  static std::mutex mutex;
  static int* buffers[kMaxDevices] = {};
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (buffers[device] == nullptr) {
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(kWorkspaceInts) * sizeof(int)) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    buffers[device] = static_cast<int*>(p);
  }
  return buffers[device];
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 5 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor &x = tensors[0], &indices = tensors[1], &x_sorted = tensors[2],
                    &offsets = tensors[3], &dest = tensors[4];
  if ((x.dtype != KILN_BF16 && x.dtype != KILN_F16) || x_sorted.dtype != x.dtype ||
      indices.dtype != KILN_I32 || offsets.dtype != KILN_I32 || dest.dtype != KILN_I32 ||
      x.rank != 2 || indices.rank != 2 || x_sorted.rank != 2 || offsets.rank != 1 ||
      dest.rank != 2) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const int64_t T = x.shape[0], H = x.shape[1], K = indices.shape[1], E = offsets.shape[0] - 1;
  if (T < 0 || H < 0 || K < 0 || E < 0 || indices.shape[0] != T || x_sorted.shape[0] != T * K ||
      x_sorted.shape[1] != H || dest.shape[0] != T || dest.shape[1] != K) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (E == 0) return T * K == 0 ? KILN_OK : KILN_ERR_BAD_ARGUMENT;
  const int64_t slots = T * K;
  const int64_t blocks = (slots + kTile - 1) / kTile;
  if (E > kMaxExperts || slots >= INT32_MAX || 2 * blocks * E > kWorkspaceInts) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (!is_contiguous(x) || !is_contiguous(indices) || !is_contiguous(x_sorted) ||
      !is_contiguous(offsets) || !is_contiguous(dest)) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (offsets.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  auto* op = static_cast<int*>(offsets.data);
  int* counts = slots > 0 ? device_workspace() : nullptr;
  if (slots > 0 && counts == nullptr) return KILN_ERR_LAUNCH;
  const int e = static_cast<int>(E);
  if (slots == 0) {  // every expert starts (and ends) at row 0
    return cudaMemsetAsync(op, 0, static_cast<size_t>(E + 1) * sizeof(int), stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (x.data == nullptr || indices.data == nullptr || x_sorted.data == nullptr ||
      dest.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  const auto* ip = static_cast<const int*>(indices.data);
  const size_t histogram_bytes = static_cast<size_t>(E) * sizeof(int);
  const dim3 grid(static_cast<unsigned>(blocks));
  count_kernel<<<grid, kThreads, histogram_bytes, stream>>>(ip, counts, static_cast<int>(slots), e);
  const int scan_threads = static_cast<int>((E + 31) / 32 * 32);
  int* bases = counts + blocks * E;
  offsets_kernel<<<1, scan_threads, 0, stream>>>(counts, bases, op, static_cast<int>(blocks), e);
  const auto* xp = static_cast<const uint16_t*>(x.data);
  auto* sp = static_cast<uint16_t*>(x_sorted.data);
  auto* dp = static_cast<int*>(dest.data);
  rank_kernel<<<grid, kThreads, histogram_bytes, stream>>>(ip, bases, dp, static_cast<int>(slots),
                                                           e);
  const dim3 copy_grid(static_cast<unsigned>((slots + kWarps - 1) / kWarps));
  if (H % 8 == 0 && aligned16(xp) && aligned16(sp)) {
    copy_kernel<true><<<copy_grid, kThreads, 0, stream>>>(xp, dp, sp, static_cast<int>(slots),
                                                          static_cast<int>(K), H);
  } else {
    copy_kernel<false><<<copy_grid, kThreads, 0, stream>>>(xp, dp, sp, static_cast<int>(slots),
                                                           static_cast<int>(K), H);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
