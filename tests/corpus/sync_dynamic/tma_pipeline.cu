// A two-stage TMA (cp.async.bulk) pipeline: warp 0 loads tiles into two shared stages, each
// completing its stage's "full" mbarrier; warp 1 waits on it (parity flips every round) and
// sums the tile. The bug reuses a stage without the "empty" barrier: the producer re-arms
// full[s] before the consumer waited on its previous phase (phase overrun, the reused-mbarrier
// bug). The fix has the consumer arrive on empty[s] after reading and the producer wait on it.
#include "mbarrier_ops.h"

constexpr int kTile = 32;  // ints per tile
constexpr int kTiles = 8;

template <bool kEmptyBarrier>
__device__ void pipeline(const int* in, int* out) {
  __shared__ alignas(16) int stage[2][kTile];
  __shared__ unsigned long long full[2], empty[2];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 32);
    }
    init_fence();
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      for (int t = 0; t < kTiles; ++t) {
        const int s = t % 2;
        if (kEmptyBarrier) mbar_wait(&empty[s], ((t / 2) & 1) ^ 1);
        mbar_arrive_expect_tx(&full[s], kTile * 4);
        bulk_load(stage[s], in + t * kTile, kTile * 4, &full[s]);
      }
    }
  } else {
    int sum = 0;
    for (int t = 0; t < kTiles; ++t) {
      const int s = t % 2;
      mbar_wait(&full[s], (t / 2) & 1);
      sum += stage[s][lane];
      if (kEmptyBarrier) mbar_arrive(&empty[s]);
    }
    out[lane] = sum;
  }
}

extern "C" __global__ void tma_pipeline_bug(const int* in, int* out) { pipeline<false>(in, out); }
extern "C" __global__ void tma_pipeline_fixed(const int* in, int* out) { pipeline<true>(in, out); }
