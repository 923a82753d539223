// Each warp is meant to arrive once per phase (mbarrier.init with the number of warps), but in
// the bug every lane arrives: one arrive instruction completes many phases at once.
#include "mbarrier_ops.h"

template <bool kOnePerWarp>
__device__ void arrive_then_wait(int* out) {
  __shared__ unsigned long long bar;
  __shared__ int s[64];
  if (threadIdx.x == 0) {
    mbar_init(&bar, blockDim.x / 32);
    init_fence();
  }
  __syncthreads();
  s[threadIdx.x] = threadIdx.x;
  if (!kOnePerWarp || threadIdx.x % 32 == 0) mbar_arrive(&bar);
  mbar_wait(&bar, 0);
  out[threadIdx.x] = s[63 - threadIdx.x];
}

extern "C" __global__ void over_arrival_bug(int* out) { arrive_then_wait<false>(out); }
extern "C" __global__ void over_arrival_fixed(int* out) { arrive_then_wait<true>(out); }
