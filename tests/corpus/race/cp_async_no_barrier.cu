// cp.async: each thread waits for its own copy, then reads another thread's element without a
// barrier; that copy is only known complete to the thread that waited for it.
#include <cuda_pipeline.h>

extern "C" __global__ void cp_async_no_barrier_bug(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[t] = s[63 - t];
}

extern "C" __global__ void cp_async_no_barrier_fixed(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[63 - t];
}
