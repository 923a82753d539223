// cp.async: the destination is read before the thread waits for its group (the async proxy may
// not have written it yet).
#include <cuda_pipeline.h>

extern "C" __global__ void cp_async_no_wait_bug(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  out[t] = s[t];
  __pipeline_wait_prior(0);
}

extern "C" __global__ void cp_async_no_wait_fixed(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[t] = s[t];
}
