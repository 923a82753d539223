// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Warp 0 loads 64 filter taps into shared memory for the whole block. The fix: only the loads
// are under `if (warp == 0)`; the __syncthreads() is outside, reached by every warp.
extern "C" __global__ void taps_warp0_load(const float* __restrict__ taps,
                                           const float* __restrict__ x,
                                           float* __restrict__ y, int n) {
  __shared__ float s_taps[64];
  const int tid = threadIdx.x;
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  if (warp == 0) {
    s_taps[lane] = taps[lane];
    s_taps[lane + 32] = taps[lane + 32];
  }
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + tid;
  if (i < n) y[i] = x[i] * s_taps[tid % 64];
}
