// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// 1-D backward difference through shared memory. The fix: every thread stages a value (zero
// past the end) and passes the barrier; the bounds check comes after the __syncthreads().
extern "C" __global__ void diff_guard_after_barrier(const float* __restrict__ x,
                                                    float* __restrict__ y, int n) {
  __shared__ float tile[256];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  tile[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i >= n) return;
  const float left = tid > 0 ? tile[tid - 1] : (i > 0 ? x[i - 1] : 0.0f);
  y[i] = tile[tid] - left;
}
