// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Shared-memory tree reduction (block sum). The __syncthreads() of each level was put inside
// `if (tid < s)`, so only the active half of the threads reaches it.
extern "C" __global__ void block_sum_barrier_in_if(const float* __restrict__ x,
                                                   float* __restrict__ block_sums, int n) {
  __shared__ float partial[256];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
      __syncthreads();  // expect: barrier_divergence
    }
  }
  if (tid == 0) block_sums[blockIdx.x] = partial[0];
}
