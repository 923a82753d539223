// A TMA pipeline with an epilogue warp: warp 0 loads tiles into two shared stages (full/empty
// mbarriers per stage), warp 1 sums them and, after every batch of kBatch tiles, arrives on
// the `batch` mbarrier; warp 2 waits for each batch (parity flips per batch) before it adds
// the batch's scale (from global memory) to its total. No shared data passes between warps 1
// and 2, so there is no data race: only the mbarrier protocol is wrong.
//
// The bug: nothing stops warp 1 from finishing the next batch before warp 2 waited for the
// last one, so a warp 2 delayed by two batches finds `batch` two phases further: a phase
// overrun (its parity now names a later phase; it reads the wrong batch or waits forever).
// In order, reversed and random rounds give every warp a turn per round, and two batches take
// warps 0 and 1 at least 2 * kBatch / 2 turns each, so they never delay warp 2 that long; a
// priority schedule (pct, exhaustive) that ranks warp 2 below the others does. The fix: warp
// 2 arrives on `batch_done` after each batch, and warp 1 waits on it (for the batch before)
// before it completes the next one.
#include "mbarrier_ops.h"

constexpr int kTile = 32;  // ints per tile
constexpr int kBatch = 8;  // tiles per batch
constexpr int kBatches = 4;
constexpr int kTiles = kBatch * kBatches;

template <bool kBackPressure>
__device__ void pipeline(const int* in, const int* scale, int* out) {
  __shared__ alignas(16) int stage[2][kTile];
  __shared__ unsigned long long full[2], empty[2], batch, batch_done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 32);
    }
    mbar_init(&batch, 32);
    mbar_init(&batch_done, 32);
    init_fence();
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      for (int t = 0; t < kTiles; ++t) {
        const int s = t % 2;
        mbar_wait(&empty[s], ((t / 2) & 1) ^ 1);
        mbar_arrive_expect_tx(&full[s], kTile * 4);
        bulk_load(stage[s], in + t * kTile, kTile * 4, &full[s]);
      }
    }
  } else if (warp == 1) {
    int sum = 0;
    for (int t = 0; t < kTiles; ++t) {
      const int s = t % 2;
      mbar_wait(&full[s], (t / 2) & 1);
      sum += stage[s][lane];
      mbar_arrive(&empty[s]);
      if (t % kBatch == kBatch - 1) {
        // Batch b completes only after warp 2 is done with batch b - 1.
        const int b = t / kBatch;
        if (kBackPressure && b >= 1) mbar_wait(&batch_done, (b - 1) & 1);
        mbar_arrive(&batch);
      }
    }
    out[lane] = sum;
  } else {
    int total = 0;
    for (int b = 0; b < kBatches; ++b) {
      mbar_wait(&batch, b & 1);
      total += scale[b];
      if (kBackPressure) mbar_arrive(&batch_done);
    }
    out[kTile + lane] = total;
  }
}

extern "C" __global__ void batch_overrun_bug(const int* in, const int* scale, int* out) {
  pipeline<false>(in, scale, out);
}
extern "C" __global__ void batch_overrun_fixed(const int* in, const int* scale, int* out) {
  pipeline<true>(in, scale, out);
}
