// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Reverse each tile of blockDim.x elements; full tiles go through shared memory, the partial
// last tile is done directly. The "full tile" test uses the thread's index i instead of the
// tile base, so it splits the CTA and the barrier in the shared-memory path diverges.
extern "C" __global__ void tile_reverse_thread_test(const float* __restrict__ x,
                                                    float* __restrict__ y, int n) {
  __shared__ float tile[256];
  const int tid = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  const int i = base + tid;
  const int j = base + blockDim.x - 1 - tid;
  if (i + static_cast<int>(blockDim.x) <= n) {  // the bug: depends on threadIdx.x
    tile[tid] = x[i];
    __syncthreads();  // expect: barrier_divergence
    y[i] = tile[blockDim.x - 1 - tid];
  } else if (i < n) {
    y[i] = j < n ? x[j] : 0.0f;
  }
}
