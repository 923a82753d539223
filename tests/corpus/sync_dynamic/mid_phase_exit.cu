// An mbarrier initialized for every thread of the block, but only warp 0 arrives: the kernel
// exits with the phase half done. The fix lets every thread arrive.
#include "mbarrier_ops.h"

template <bool kAll>
__device__ void arrive_some(int* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) {
    mbar_init(&bar, blockDim.x);
    init_fence();
  }
  __syncthreads();
  if (kAll || threadIdx.x < 32) mbar_arrive(&bar);
  out[threadIdx.x] = 1;
}

extern "C" __global__ void mid_phase_exit_bug(int* out) { arrive_some<false>(out); }
extern "C" __global__ void mid_phase_exit_fixed(int* out) { arrive_some<true>(out); }
