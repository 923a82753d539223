// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Warp 0 loads 64 filter taps into shared memory for the whole block. The __syncthreads() sits
// inside `if (warp == 0)`: the branch is uniform per warp but splits the CTA, so warps 1..N
// never reach the barrier (and read the taps without waiting).
extern "C" __global__ void taps_warp0_barrier(const float* __restrict__ taps,
                                              const float* __restrict__ x,
                                              float* __restrict__ y, int n) {
  __shared__ float s_taps[64];
  const int tid = threadIdx.x;
  const unsigned warp = threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  if (warp == 0) {
    s_taps[lane] = taps[lane];
    s_taps[lane + 32] = taps[lane + 32];
    __syncthreads();  // expect: barrier_divergence
  }
  const int i = blockIdx.x * blockDim.x + tid;
  if (i < n) y[i] = x[i] * s_taps[tid % 64];
}
