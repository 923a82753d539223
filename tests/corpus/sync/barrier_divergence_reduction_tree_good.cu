// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Shared-memory tree reduction (block sum). The fix: the __syncthreads() of each level is after
// the `if (tid < s)`, reached by every thread (the loop count depends only on blockDim.x).
extern "C" __global__ void block_sum_tree(const float* __restrict__ x,
                                          float* __restrict__ block_sums, int n) {
  __shared__ float partial[256];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) block_sums[blockIdx.x] = partial[0];
}
