// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Per-warp partial sums with a shuffle-down reduction. Threads past n return first, so in the
// last warp the full-mask __shfl_down_sync names lanes that have exited.
extern "C" __global__ void warp_sum_early_return(const float* __restrict__ x,
                                                 float* __restrict__ warp_sums, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;  // the bug: the tail lanes leave before the warp collective
  float v = x[i];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);  // expect: collective_mask
  if (threadIdx.x % 32 == 0) warp_sums[i / 32] = v;
}
