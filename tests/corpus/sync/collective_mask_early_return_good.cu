// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Per-warp partial sums with a shuffle-down reduction. The fix: no early return; lanes past n
// contribute 0, so all 32 lanes named by the full mask execute every shuffle.
extern "C" __global__ void warp_sum_zero_pad(const float* __restrict__ x,
                                             float* __restrict__ warp_sums, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0 && i < n) warp_sums[i / 32] = v;
}
