// moe_token_permute: the permutation before a mixture-of-experts grouped GEMM, as a stable
// counting sort in two launches that read x once.
//
// From x[T, H] (bf16 or f16, copied bit for bit) and indices[T, K] (experts in [0, E)), writes
// expert_offsets[E + 1], x_sorted[T*K, H] (expert by expert; within one expert in increasing
// slot order t*K + k: stable, deterministic) and dest_rows[T, K] (x_sorted[dest_rows[t, k]] =
// x[t]).
//
//   1. rank_kernel, one block per tile of kTile slots: every lane loads its kSlotsPerLane
//      experts at once; warp w ranks its own 256 contiguous slots with __match_any_sync against
//      a warp-private shared histogram (no block barrier per chunk); one barrier, then the
//      warps' histograms become exclusive offsets per expert, and the tile-local rank of every
//      slot goes to dest_rows (overwritten by launch 2) and the tile's counts to the workspace.
//      The last block to finish (a __threadfence, then a ticket from atomicAdd) scans the
//      counts of all tiles into bases[tile][e] (the first x_sorted row of expert e's slots in
//      the tile) and expert_offsets, and resets the ticket for the next call.
//   2. copy_tokens_kernel: kGroupThreads threads per token load the token's row ONCE (16-byte
//      vectors, all in flight before anything else), turn their K slots' local ranks into rows
//      (bases + local rank, written back to dest_rows) and store the row K times: x is read
//      from HBM once, not once per slot.
// K > kMaxFastK or H % 8 != 0 (or unaligned data) take copy_slots_kernel: a warp per slot.
//
// Workspace: counts and bases (tiles x E ints each) and the ticket, cudaMalloc'd once per
// device and reused; concurrent calls on different streams of one device share it: serialize.
// Constraints (else KILN_ERR_UNSUPPORTED): E <= 1024, T*K < 2^31, 2 x tiles x E within the
// workspace, contiguous tensors. Experts outside [0, E) are not checked on the device.
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

#include "kiln/abi.h"

namespace {

// Tunables (H200): threads that copy one token's row (32, 64, 128 or 256) and whether the
// x_sorted stores are st.global.cs (evict-first: x_sorted is not re-read here).
constexpr int kGroupThreads = 256;
constexpr bool kStreamingStores = false;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kSlotsPerLane = 8;
constexpr int kWarpSlots = 32 * kSlotsPerLane;  // contiguous slots ranked by one warp
constexpr int kTile = kThreads * kSlotsPerLane;  // slots per ranking block
constexpr int kMaxExperts = 1024;
constexpr int kMaxFastK = 32;
constexpr int kScanBatch = 16;  // counts loads in flight per thread in the last block's scan
constexpr int kTokensPerBlock = kThreads / kGroupThreads;
// 16-byte vectors per thread and chunk: one chunk covers H = 4096 (512 vectors) per token.
constexpr int kVecPerThread = 512 / kGroupThreads > 0 ? 512 / kGroupThreads : 1;
constexpr int64_t kWorkspaceInts = 4 << 20;
constexpr int kTicketInts = 32;  // the ticket, after the counts and bases
constexpr int kMaxDevices = 16;
static_assert(kGroupThreads >= kMaxFastK && kThreads % kGroupThreads == 0, "group size");

// The last block: bases[b][e] = expert_offsets[e] + Σ_{b' < b} counts[b'][e]. Thread pairs
// (expert e, group g of tiles) sum their column range, then prefix over groups and experts.
__device__ void scan_tiles(const int* __restrict__ counts, int* __restrict__ bases,
                           int* __restrict__ offsets, int tiles, int experts, int* part,
                           int* start, int* warp_totals) {
  const int groups = experts >= kThreads ? 1 : kThreads / experts;
  const int pairs = groups * experts;
  for (int p = threadIdx.x; p < pairs; p += kThreads) {
    const int e = p % experts, g = p / experts;
    const int b0 = static_cast<int>(static_cast<int64_t>(g) * tiles / groups);
    const int b1 = static_cast<int>(static_cast<int64_t>(g + 1) * tiles / groups);
    int sum = 0;
    for (int b = b0; b < b1; b += kScanBatch) {  // kScanBatch independent L2 loads in flight
      int n[kScanBatch];
#pragma unroll
      for (int i = 0; i < kScanBatch; ++i) {
        n[i] = b + i < b1 ? __ldcg(counts + static_cast<size_t>(b + i) * experts + e) : 0;
      }
#pragma unroll
      for (int i = 0; i < kScanBatch; ++i) sum += n[i];
    }
    part[p] = sum;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < experts; e += kThreads) {
    int run = 0;
    for (int g = 0; g < groups; ++g) {
      const int n = part[g * experts + e];
      part[g * experts + e] = run;
      run += n;
    }
    start[e] = run;  // expert e's total, scanned below
  }
  __syncthreads();
  // Exclusive scan of start[0, experts): thread t owns experts 4t .. 4t + 3.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int v[4], sum = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int e = 4 * threadIdx.x + j;
    v[j] = e < experts ? start[e] : 0;
    sum += v[j];
  }
  int inclusive = sum;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int up = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += up;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  int before = 0;
  for (int w = 0; w < warp; ++w) before += warp_totals[w];
  int run = before + inclusive - sum;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int e = 4 * threadIdx.x + j;
    if (e < experts) {
      start[e] = run;
      offsets[e] = run;
    }
    run += v[j];
  }
  if (threadIdx.x == kThreads - 1) offsets[experts] = run;
  __syncthreads();
  for (int p = threadIdx.x; p < pairs; p += kThreads) {
    const int e = p % experts, g = p / experts;
    const int b0 = static_cast<int>(static_cast<int64_t>(g) * tiles / groups);
    const int b1 = static_cast<int>(static_cast<int64_t>(g + 1) * tiles / groups);
    int next = start[e] + part[p];
    for (int b = b0; b < b1; b += kScanBatch) {
      int n[kScanBatch];
#pragma unroll
      for (int i = 0; i < kScanBatch; ++i) {
        n[i] = b + i < b1 ? __ldcg(counts + static_cast<size_t>(b + i) * experts + e) : 0;
      }
#pragma unroll
      for (int i = 0; i < kScanBatch; ++i) {
        if (b + i < b1) bases[static_cast<size_t>(b + i) * experts + e] = next;
        next += n[i];
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    rank_kernel(const int* __restrict__ indices, int* __restrict__ local_rows,
                int* __restrict__ counts, int* __restrict__ bases, int* __restrict__ offsets,
                unsigned* __restrict__ ticket, int slots, int experts) {
  extern __shared__ int warp_counts[];  // [kWarps][experts]
  __shared__ int part[kMaxExperts];
  __shared__ int start[kMaxExperts];
  __shared__ int warp_totals[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kTile + warp * kWarpSlots + lane;
  int expert[kSlotsPerLane];
#pragma unroll
  for (int c = 0; c < kSlotsPerLane; ++c) {  // every load in flight before any use
    const int64_t slot = first + c * 32;
    expert[c] = slot < slots ? __ldg(indices + slot) : -1;
  }
  for (int i = threadIdx.x; i < kWarps * experts; i += kThreads) warp_counts[i] = 0;
  __syncthreads();
  int* mine = warp_counts + warp * experts;
  const unsigned lower_lanes = (1u << lane) - 1;
  int rank[kSlotsPerLane];
#pragma unroll
  for (int c = 0; c < kSlotsPerLane; ++c) {  // in slot order: ranks are stable
    const unsigned peers = __match_any_sync(0xffffffffu, expert[c]);
    const int leader = __ffs(peers) - 1;
    int base = 0;
    if (lane == leader && expert[c] >= 0) {
      base = mine[expert[c]];
      mine[expert[c]] = base + __popc(peers);
    }
    rank[c] = __shfl_sync(0xffffffffu, base, leader) + __popc(peers & lower_lanes);
    __syncwarp();  // the leader's update before the next chunk's leader reads it
  }
  __syncthreads();
  for (int e = threadIdx.x; e < experts; e += kThreads) {
    int run = 0;
    for (int w = 0; w < kWarps; ++w) {
      const int n = warp_counts[w * experts + e];
      warp_counts[w * experts + e] = run;
      run += n;
    }
    counts[static_cast<size_t>(blockIdx.x) * experts + e] = run;
  }
  __syncthreads();
#pragma unroll
  for (int c = 0; c < kSlotsPerLane; ++c) {
    if (expert[c] >= 0) local_rows[first + c * 32] = rank[c] + mine[expert[c]];
  }
  // The last block to finish scans every tile's counts (fence, ticket, last block reads).
  __threadfence();
  __syncthreads();
  bool last = false;
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  // One answer for the whole block (a barrier reduction), so every thread takes the same side.
  if (!__syncthreads_or(last)) return;
  __threadfence();
  scan_tiles(counts, bases, offsets, static_cast<int>(gridDim.x), experts, part, start,
             warp_totals);
  if (threadIdx.x == 0) atomicExch(ticket, 0u);  // ready for the next call
}

__device__ __forceinline__ void store16(uint4* p, const uint4& v) {
  if (kStreamingStores) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

// kGroupThreads threads per token: the row is loaded once and stored K times.
__global__ void __launch_bounds__(kThreads)
    copy_tokens_kernel(const uint4* __restrict__ x, const int* __restrict__ indices,
                       int* __restrict__ dest_rows, const int* __restrict__ bases,
                       uint4* __restrict__ x_sorted, int64_t tokens, int k, int experts,
                       int64_t h8) {
  __shared__ int rows[kTokensPerBlock][kMaxFastK];
  const int group = threadIdx.x / kGroupThreads, g = threadIdx.x % kGroupThreads;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kTokensPerBlock + group;
  const bool live = t < tokens;
  const uint4* from = x + t * h8;
  constexpr int kStep = kVecPerThread * kGroupThreads;
  uint4 v[kVecPerThread];
#pragma unroll
  for (int u = 0; u < kVecPerThread; ++u) {  // the row's loads first: nothing waits on them
    const int64_t c = g + u * kGroupThreads;
    if (live && c < h8) v[u] = __ldg(from + c);
  }
  if (live && g < k) {
    const int64_t slot = t * k + g;
    const int local = dest_rows[slot];  // issued before the dependent bases load
    const int e = __ldg(indices + slot);
    const int row = __ldg(bases + (slot / kTile) * experts + e) + local;
    dest_rows[slot] = row;
    rows[group][g] = row;
  }
  __syncthreads();
  if (!live) return;
  for (int64_t c0 = 0;;) {
    for (int j = 0; j < k; ++j) {
      uint4* to = x_sorted + static_cast<int64_t>(rows[group][j]) * h8 + c0;
#pragma unroll
      for (int u = 0; u < kVecPerThread; ++u) {
        const int64_t c = g + u * kGroupThreads;
        if (c0 + c < h8) store16(to + c, v[u]);
      }
    }
    c0 += kStep;
    if (c0 >= h8) break;
#pragma unroll
    for (int u = 0; u < kVecPerThread; ++u) {
      const int64_t c = c0 + g + u * kGroupThreads;
      if (c < h8) v[u] = __ldg(from + c);
    }
  }
}

// Any K and H: one warp per slot (8 per block) finishes its row and copies x's row into it.
template <bool kVector>
__global__ void __launch_bounds__(kThreads)
    copy_slots_kernel(const uint16_t* __restrict__ x, const int* __restrict__ indices,
                      int* __restrict__ dest_rows, const int* __restrict__ bases,
                      uint16_t* __restrict__ x_sorted, int slots, int k, int experts, int64_t h) {
  const int lane = threadIdx.x & 31;
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  if (slot >= slots) return;  // the whole warp
  // Every lane reads the slot's local rank (one broadcast load), then lane 0 finishes it.
  const int row = __ldg(bases + (slot / kTile) * experts + __ldg(indices + slot)) + dest_rows[slot];
  __syncwarp();
  if (lane == 0) dest_rows[slot] = row;
  const int64_t token = slot / k, to = static_cast<int64_t>(row) * h;
  if (kVector) {
    const uint4* from = reinterpret_cast<const uint4*>(x + token * h);
    uint4* dst = reinterpret_cast<uint4*>(x_sorted + to);
#pragma unroll 16
    for (int64_t c = lane; c < h / 8; c += 32) dst[c] = __ldg(from + c);
  } else {
    for (int64_t c = lane; c < h; c += 32) x_sorted[to + c] = x[token * h + c];
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

// counts, bases and the ticket; the ticket is zeroed on the stream once, at allocation.
int* device_workspace(cudaStream_t stream) {
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
    const size_t bytes = static_cast<size_t>(kWorkspaceInts + kTicketInts) * sizeof(int);
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    if (cudaMemsetAsync(static_cast<int*>(p) + kWorkspaceInts, 0, kTicketInts * sizeof(int),
                        stream) != cudaSuccess) {
      (void)cudaFree(p);
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
  const int64_t tiles = (slots + kTile - 1) / kTile;
  if (E > kMaxExperts || slots >= INT32_MAX || 2 * tiles * E > kWorkspaceInts) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (!is_contiguous(x) || !is_contiguous(indices) || !is_contiguous(x_sorted) ||
      !is_contiguous(offsets) || !is_contiguous(dest)) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (offsets.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  auto* op = static_cast<int*>(offsets.data);
  if (slots == 0) {  // every expert starts (and ends) at row 0
    return cudaMemsetAsync(op, 0, static_cast<size_t>(E + 1) * sizeof(int), stream) == cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (x.data == nullptr || indices.data == nullptr || x_sorted.data == nullptr ||
      dest.data == nullptr) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  int* workspace = device_workspace(stream);
  if (workspace == nullptr) return KILN_ERR_LAUNCH;
  int* counts = workspace;
  int* bases = workspace + tiles * E;
  auto* ticket = reinterpret_cast<unsigned*>(workspace + kWorkspaceInts);
  const auto* ip = static_cast<const int*>(indices.data);
  auto* dp = static_cast<int*>(dest.data);
  const int e = static_cast<int>(E), k = static_cast<int>(K);
  const size_t warp_counts_bytes = static_cast<size_t>(kWarps) * E * sizeof(int);
  rank_kernel<<<static_cast<unsigned>(tiles), kThreads, warp_counts_bytes, stream>>>(
      ip, dp, counts, bases, op, ticket, static_cast<int>(slots), e);
  const auto* xp = static_cast<const uint16_t*>(x.data);
  auto* sp = static_cast<uint16_t*>(x_sorted.data);
  const bool vector = H % 8 == 0 && aligned16(xp) && aligned16(sp);
  if (vector && K <= kMaxFastK) {
    const int64_t blocks = (T + kTokensPerBlock - 1) / kTokensPerBlock;
    copy_tokens_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        reinterpret_cast<const uint4*>(xp), ip, dp, bases, reinterpret_cast<uint4*>(sp), T, k, e,
        H / 8);
  } else {
    const dim3 grid(static_cast<unsigned>((slots + kWarps - 1) / kWarps));
    if (vector) {
      copy_slots_kernel<true><<<grid, kThreads, 0, stream>>>(xp, ip, dp, bases, sp,
                                                             static_cast<int>(slots), k, e, H);
    } else {
      copy_slots_kernel<false><<<grid, kThreads, 0, stream>>>(xp, ip, dp, bases, sp,
                                                              static_cast<int>(slots), k, e, H);
    }
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
