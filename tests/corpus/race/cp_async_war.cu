// cp.async WAR: a stage is refilled by the async proxy while other threads still read it (the
// barrier before the refill is missing).
#include <cuda_pipeline.h>

extern "C" __global__ void cp_async_war_bug(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  int a = s[63 - t];
  __pipeline_memcpy_async(&s[t], &in[64 + t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = a + s[63 - t];
}

extern "C" __global__ void cp_async_war_fixed(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  int a = s[63 - t];
  __syncthreads();
  __pipeline_memcpy_async(&s[t], &in[64 + t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = a + s[63 - t];
}
