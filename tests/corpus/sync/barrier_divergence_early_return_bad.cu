// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// 1-D backward difference through shared memory. Threads past the end of the input return
// before the __syncthreads(), so in the last block only part of the CTA reaches the barrier.
extern "C" __global__ void diff_early_return(const float* __restrict__ x, float* __restrict__ y,
                                             int n) {
  __shared__ float tile[256];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  if (i >= n) return;  // the bug: these threads never arrive at the barrier below
  tile[tid] = x[i];
  __syncthreads();  // expect: barrier_divergence
  const float left = tid > 0 ? tile[tid - 1] : (i > 0 ? x[i - 1] : 0.0f);
  y[i] = tile[tid] - left;
}
