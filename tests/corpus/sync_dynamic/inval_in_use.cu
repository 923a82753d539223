// Thread 0 invalidates the mbarrier right after its own arrival, while the other threads have
// still to arrive and wait on it. The fix invalidates after a barrier that follows every wait.
#include "mbarrier_ops.h"

template <bool kAfterBarrier>
__device__ void arrive_wait_inval(int* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) {
    mbar_init(&bar, blockDim.x);
    init_fence();
  }
  __syncthreads();
  mbar_arrive(&bar);
  if (!kAfterBarrier && threadIdx.x == 0) mbar_inval(&bar);
  mbar_wait(&bar, 0);
  if (kAfterBarrier) {
    __syncthreads();
    if (threadIdx.x == 0) mbar_inval(&bar);
  }
  out[threadIdx.x] = 1;
}

extern "C" __global__ void inval_in_use_bug(int* out) { arrive_wait_inval<false>(out); }
extern "C" __global__ void inval_in_use_fixed(int* out) { arrive_wait_inval<true>(out); }
