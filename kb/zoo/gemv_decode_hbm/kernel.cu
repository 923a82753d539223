// gemv_decode_hbm: C[M,N] = A[M,K] * B[N,K]^T for decode shapes, M <= 16, fp16 in and out,
// fp32 accumulation, at HBM speed.
//
// The shape reads B (N*K*2 bytes) once, so it is a bandwidth kernel, and bandwidth needs bytes
// in flight: by Little's law, ~1 us of loaded-HBM latency times ~4 TB/s is ~4 MB outstanding on
// the chip, 32-64 KiB per SM. The neighbour gemv_decode_mma has ~16 KiB per SM (one load per
// warp outstanding, 128 blocks at N = 4096 on 132 SMs) and reaches 1.3 TB/s. Here:
//
//   - Split-K across blocks. Block (tile, split) owns kCols columns of C and one contiguous
//     range of 32-wide K chunks; the host takes the fewest splits whose resident blocks (at most
//     SM count x blocks per SM, queried once per device) keep kInFlightTarget bytes in flight.
//   - Deep register pipeline. Per turn each warp issues kDepth * (kTiles + 2) independent 128-bit
//     loads (kDepth chunks of kTiles B pieces and two A pieces) before its first MMA, so a
//     resident warp keeps kDepth * kTiles * 512 bytes of B outstanding. The 16 bytes a lane loads
//     are its mma.sync.m16n8k16 fragments as they are (gemv_decode_mma's K permutation: logical
//     k {2t, 2t+1, 2t+8, 2t+9} of lane t = l%4 is physical {8t .. 8t+3} in the first MMA and
//     {8t+4 .. 8t+7} in the second, for A and B alike), so nothing goes through shared memory.
//   - Deterministic cross-block reduction. The block sums its warps' tiles in shared memory in
//     warp order; with one split it writes C, otherwise it stores its fp32 tile to a workspace,
//     and the last block of the tile to arrive (a per-tile counter) adds the splits' tiles in
//     split order 0, 1, ... and writes C. The order never depends on which block came last, so C
//     is bitwise identical from call to call. The last block resets the counter to 0 for the next
//     call. No float atomics.
//
// Workspace: module globals (g_partials, 16 MiB; g_arrivals, one counter per tile), zero at
// module load and reused by every call; they carry nothing from one call to the next. Two calls
// running concurrently on different streams of one device would share them: serialize such calls.
// Requirements: M <= 16, K a multiple of 8, A and B contiguous and 16-byte aligned, N and K below
// 2^30 (else KILN_ERR_UNSUPPORTED).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "kiln/abi.h"

namespace {

// ---- Tunables (time these on the H200) --------------------------------------------------------
// Registers cap the combinations: kThreads * kMinBlocksPerSm * registers <= 64K per SM. ptxas -v
// (CUDA 13.0, sm_90a, M > 8 kernel / M <= 8 kernel), no spills unless said:
//   kWarps 8, kTiles 4, kDepth 3, min 2 blocks: 118 / 110 (the default)
//   kWarps 8, kTiles 4, kDepth 4, min 2 blocks: 128 / 122 (at the cap; 142 uncapped)
//   kWarps 8, kTiles 8, kDepth 2, min 2 blocks: 128 / 128 (at the cap; 142 / 134 uncapped)
//   kWarps 8, kTiles 2, kDepth 8, min 2 blocks: 128 / 128
//   kWarps 16, kTiles 4, kDepth 4, min 1 block:  128 / 122
//   kWarps 16, kTiles 4, kDepth 2, min 2 blocks: 64-register cap, spills: do not use
//   kWarps 16, kTiles 8: the partial tiles exceed 48 KiB of shared memory (static_assert)
// kWarps: warps per block, splitting the block's K range (worth timing: 4, 8, 16).
constexpr int kWarps = 8;
// kTiles: n8 tiles per warp = per block; columns per block = 8 * kTiles (2, 4, 8). More columns
// per block divide A's L2 traffic (A bytes per B byte: 2 / kTiles at M > 8, 1 / kTiles at M <= 8);
// fewer give more tiles, so fewer splits for the same grid. On the H200 (2026-12-03, kiln's
// benchmark at 16x4096x4096, with kInFlightTarget 4 MiB): 2 took 13.76 us, 4 took 14.42 us and
// 8 (kDepth 2) 17.47 us (bench/h200_2026-12-03_session13).
constexpr int kTiles = 2;
// kDepth: 32-wide K chunks each warp loads before its first MMA of a turn (2, 3, 4, 6, 8). B bytes
// in flight per warp = kDepth * kTiles * 512 (3 KiB at the defaults, 48 KiB per SM with 16 warps
// resident); registers grow with kDepth * (kTiles + 2) * 4.
constexpr int kDepth = 3;
// kMinBlocksPerSm: __launch_bounds__ occupancy hint, which caps registers at 64K / (kThreads *
// this) (1, 2, 3). The grid is sized from the occupancy the runtime reports, not from this.
constexpr int kMinBlocksPerSm = 2;
// kMaxSplits: most blocks sharing one tile's K (8, 16, 32).
constexpr int kMaxSplits = 16;
// kMinChunksPerSplit: shortest K range of a block, in 32-wide chunks (kWarps, 2 * kWarps,
// kWarps * kDepth). Shorter ranges mean more partial tiles to store and add.
constexpr int kMinChunksPerSplit = kWarps;
// kInFlightTarget: bytes of B loads to keep outstanding on the whole GPU. Little's law: ~1 us of
// loaded latency x ~4 TB/s = ~4 MB; the default allows for a longer latency under load. The host
// takes the fewest splits whose resident blocks keep this much in flight (4, 8, 12, 16 MiB; at
// 16x4096x4096 with kTiles 4, 4 MiB gives 1 split and 128 blocks, 8 MiB 2 splits and 256
// blocks). H200, 2026-12-03, kTiles 4: 2, 3, 4 and 6 MiB took 14.38-14.50 us, 8 MiB 15.01 us.
constexpr int64_t kInFlightTarget = int64_t{4} << 20;
// kForceSplits: 0 picks the split count from kInFlightTarget; n > 0 asks for n (still capped by
// the K range, the counters and the workspace), e.g. 1, 2, 4 at 16x4096x4096.
constexpr int kForceSplits = 0;
// kStreamB: B is read once, so it is loaded with ld.global.cs (evict first); false: ld.global.nc
// (__ldg), as A is.
constexpr bool kStreamB = true;

// ---- Derived -----------------------------------------------------------------------------------
constexpr int kThreads = kWarps * 32;
constexpr int kCols = kTiles * 8;       // columns of C per block
constexpr int kChunk = 32;              // K halves per chunk: two m16n8k16 MMAs
constexpr int kStep = kDepth * kWarps;  // chunks a block covers per turn
constexpr int64_t kBlockInFlight = int64_t{kStep} * kTiles * 512;  // B bytes a block has in flight
constexpr int kMaxTiles = 1 << 16;  // arrival counters: N up to kMaxTiles * kCols with splits
constexpr int64_t kWorkspaceFloats = int64_t{1} << 22;  // 16 MiB of fp32 partial tiles
constexpr int kMaxDevices = 64;

static_assert(kWarps >= 1 && kWarps <= 32, "block size");
static_assert(kTiles >= 1 && kDepth >= 1, "tile and depth");
static_assert(kWarps * 16 * kCols * sizeof(float) <= 48 * 1024,
              "the warps' partial tiles must fit in 48 KiB of static shared memory");
static_assert(kMinChunksPerSplit >= 1, "a split has at least one chunk");

__device__ float g_partials[kWorkspaceFloats];  // [tile][split][M][kCols] for split launches
__device__ unsigned int g_arrivals[kMaxTiles];  // blocks of the tile done; 0 between calls

__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                          uint32_t a3, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint4 load_b(const __half* p, bool valid) {
  if (!valid) return make_uint4(0, 0, 0, 0);
  const uint4* q = reinterpret_cast<const uint4*>(p);
  return kStreamB ? __ldcs(q) : __ldg(q);
}

__device__ __forceinline__ uint4 load_a(const __half* p, bool valid) {
  return valid ? __ldg(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0);
}

// kHi: M > 8, so rows 8..15 of A (the a1/a3 fragments) are loaded; otherwise they are zeros.
template <bool kHi>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    gemv_hbm_kernel(const __half* __restrict__ A, const __half* __restrict__ B,
                    __half* __restrict__ C, int M, int N, int K, int splits) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int tile = static_cast<int>(blockIdx.x);
  const int split = static_cast<int>(blockIdx.y);
  const int n0 = tile * kCols;
  const int group = lane / 4;  // A rows group and group + 8; B row of each n8 tile
  const int quad = lane % 4;   // which 8 halves of a 32-wide chunk

  // This block's chunks [c_begin, c_end): contiguous, the splits differ in length by at most 1.
  const int chunks = (K + kChunk - 1) / kChunk;
  const int c_begin = static_cast<int>(static_cast<int64_t>(split) * chunks / splits);
  const int c_end = static_cast<int>(static_cast<int64_t>(split + 1) * chunks / splits);

  const __half* b_row[kTiles];
  bool b_ok[kTiles];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    const int n = n0 + t * 8 + group;
    b_ok[t] = n < N;
    b_row[t] = B + static_cast<int64_t>(b_ok[t] ? n : 0) * K + quad * 8;
  }
  const bool lo_ok = group < M;
  const bool hi_ok = kHi && group + 8 < M;
  const __half* a_lo = A + static_cast<int64_t>(lo_ok ? group : 0) * K + quad * 8;
  const __half* a_hi = A + static_cast<int64_t>(hi_ok ? group + 8 : 0) * K + quad * 8;

  float acc[kTiles][4];
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[t][i] = 0.f;

  // The loop bound is the block's, the same for all its threads (so every lane of a warp reaches
  // every MMA); a warp's chunks past c_end (or past K) load zeros.
  for (int c0 = c_begin; c0 < c_end; c0 += kStep) {
    uint4 b[kDepth][kTiles];
    uint4 lo[kDepth], hi[kDepth];
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {  // every load of the turn first: nothing waits on them yet
      const int c = c0 + d * kWarps + warp;
      const int k = c * kChunk;
      // K is a multiple of 8, so a lane's 8 halves are all inside K or all outside.
      const bool ok = c < c_end && k + quad * 8 < K;
#pragma unroll
      for (int t = 0; t < kTiles; ++t) b[d][t] = load_b(b_row[t] + k, ok && b_ok[t]);
      lo[d] = load_a(a_lo + k, ok && lo_ok);
      hi[d] = kHi ? load_a(a_hi + k, ok && hi_ok) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        mma_16816(acc[t], lo[d].x, hi[d].x, lo[d].y, hi[d].y, b[d][t].x, b[d][t].y);
        mma_16816(acc[t], lo[d].z, hi[d].z, lo[d].w, hi[d].w, b[d][t].z, b[d][t].w);
      }
    }
  }

  // partial[warp][row][col]: lane l's accumulators are rows l/4 and l/4 + 8, columns 2*(l%4)
  // and 2*(l%4) + 1 of each n8 tile.
  __shared__ float partial[kWarps][16][kCols];
  __shared__ int s_last;
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    const int col = t * 8 + quad * 2;
    partial[warp][group][col] = acc[t][0];
    partial[warp][group][col + 1] = acc[t][1];
    partial[warp][group + 8][col] = acc[t][2];
    partial[warp][group + 8][col + 1] = acc[t][3];
  }
  __syncthreads();

  // The block's tile, its warps summed in warp order: to C, or to the workspace.
  float* const mine = g_partials + (static_cast<int64_t>(tile) * splits + split) * M * kCols;
  for (int i = static_cast<int>(threadIdx.x); i < M * kCols; i += kThreads) {
    const int row = i / kCols;
    const int col = i % kCols;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += partial[w][row][col];
    if (splits == 1) {
      if (n0 + col < N) C[static_cast<int64_t>(row) * N + n0 + col] = __float2half_rn(sum);
    } else {
      mine[i] = sum;
    }
  }
  if (splits == 1) return;

  // Arrival: the writes above are made visible GPU-wide before the block counts itself in.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned int arrived = atomicAdd(&g_arrivals[tile], 1u);
    const bool last = arrived == static_cast<unsigned int>(splits) - 1;
    if (last) atomicExch(&g_arrivals[tile], 0u);  // every split is in: ready for the next call
    s_last = last;
  }
  __syncthreads();
  if (!s_last) return;
  __threadfence();  // acquire: the other blocks' partial tiles are read after their arrivals

  const float* const first = g_partials + static_cast<int64_t>(tile) * splits * M * kCols;
  for (int i = static_cast<int>(threadIdx.x); i < M * kCols; i += kThreads) {
    const int row = i / kCols;
    const int col = i % kCols;
    float sum = 0.f;
    for (int s = 0; s < splits; ++s) sum += __ldcg(first + static_cast<int64_t>(s) * M * kCols + i);
    if (n0 + col < N) C[static_cast<int64_t>(row) * N + n0 + col] = __float2half_rn(sum);
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

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Resident-block slots of this device for both kernels, queried once per device.
struct Slots {
  int sms = 0;
  int blocks_per_sm[2] = {0, 0};  // [kHi]
};

bool device_slots(Slots* out) {
  static std::mutex mutex;
  static Slots cache[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return false;
  std::lock_guard<std::mutex> lock(mutex);
  Slots& s = cache[device];
  if (s.sms == 0) {
    int sms = 0, lo = 0, hi = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&lo, gemv_hbm_kernel<false>, kThreads, 0) !=
            cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&hi, gemv_hbm_kernel<true>, kThreads, 0) !=
            cudaSuccess) {
      return false;
    }
    s.blocks_per_sm[0] = std::max(lo, 1);
    s.blocks_per_sm[1] = std::max(hi, 1);
    s.sms = std::max(sms, 1);
  }
  *out = s;
  return true;
}

// Splits per tile: the fewest whose resident blocks, min(tiles * splits, slots), keep
// kInFlightTarget bytes of B in flight (kBlockInFlight each); if even a full wave of slots cannot,
// the fewest that fill the slots. Capped by the K range (kMinChunksPerSplit chunks per split),
// kMaxSplits, the arrival counters and the workspace.
int choose_splits(int64_t tiles, int64_t chunks, int64_t M, int64_t slots) {
  if (tiles > kMaxTiles) return 1;
  int64_t most = std::min<int64_t>(kMaxSplits, chunks / kMinChunksPerSplit);
  most = std::min<int64_t>(most, kWorkspaceFloats / (tiles * M * kCols));
  if (most < 2) return 1;
  if (kForceSplits > 0) return static_cast<int>(std::min<int64_t>(kForceSplits, most));
  const int64_t blocks_needed =
      std::min<int64_t>((kInFlightTarget + kBlockInFlight - 1) / kBlockInFlight, slots);
  const int64_t splits = (blocks_needed + tiles - 1) / tiles;
  return static_cast<int>(std::clamp<int64_t>(splits, 1, most));
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];  // A[M, K]
  const kiln_tensor& b = tensors[1];  // B[N, K]
  const kiln_tensor& c = tensors[2];  // C[M, N]
  if (a.dtype != KILN_F16 || b.dtype != KILN_F16 || c.dtype != KILN_F16) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (a.rank != 2 || b.rank != 2 || c.rank != 2) return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N || M < 0 || N < 0 || K < 0) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (M > 16 || K % 8 != 0 || K >= (int64_t{1} << 30) || N >= (int64_t{1} << 30)) {
    return KILN_ERR_UNSUPPORTED;  // decode rows only, 16-byte pieces, 32-bit indices
  }
  if (M == 0 || N == 0) return KILN_OK;
  if (a.data == nullptr || b.data == nullptr || c.data == nullptr) return KILN_ERR_BAD_ARGUMENT;
  if (!is_contiguous(a) || !is_contiguous(b) || !is_contiguous(c) || !aligned16(a.data) ||
      !aligned16(b.data)) {
    return KILN_ERR_UNSUPPORTED;
  }
  if (K == 0) {  // an empty sum: C = 0
    return cudaMemsetAsync(c.data, 0, static_cast<size_t>(M * N) * sizeof(__half), stream) ==
                   cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  Slots slots;
  if (!device_slots(&slots)) return KILN_ERR_LAUNCH;
  const bool hi = M > 8;
  const int64_t tiles = (N + kCols - 1) / kCols;
  const int64_t chunks = (K + kChunk - 1) / kChunk;
  const int splits =
      choose_splits(tiles, chunks, M, static_cast<int64_t>(slots.sms) * slots.blocks_per_sm[hi]);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(splits));
  const auto* A = static_cast<const __half*>(a.data);
  const auto* B = static_cast<const __half*>(b.data);
  auto* C = static_cast<__half*>(c.data);
  if (hi) {
    gemv_hbm_kernel<true><<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), splits);
  } else {
    gemv_hbm_kernel<false><<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), splits);
  }
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
