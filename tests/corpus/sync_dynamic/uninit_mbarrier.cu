// Thread 0 initializes the mbarrier after the __syncthreads() that should publish the init, so
// the other warp may wait on it before it exists. The fix initializes before the barrier.
#include "mbarrier_ops.h"

template <bool kInitFirst>
__device__ void init_then_use(int* out) {
  __shared__ unsigned long long bar;
  if (kInitFirst && threadIdx.x == 0) {
    mbar_init(&bar, blockDim.x);
    init_fence();
  }
  __syncthreads();
  if (!kInitFirst && threadIdx.x == 0) mbar_init(&bar, blockDim.x);
  mbar_arrive(&bar);
  mbar_wait(&bar, 0);
  out[threadIdx.x] = 1;
}

extern "C" __global__ void uninit_mbarrier_bug(int* out) { init_then_use<false>(out); }
extern "C" __global__ void uninit_mbarrier_fixed(int* out) { init_then_use<true>(out); }
