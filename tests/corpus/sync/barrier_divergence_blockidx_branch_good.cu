// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Reverse each tile of blockDim.x elements; full tiles go through shared memory, the partial
// last tile is done directly. The fix: the "full tile" test uses the tile base (blockIdx.x),
// so it is uniform across the CTA and the barrier inside it is reached by every thread.
extern "C" __global__ void tile_reverse_block_test(const float* __restrict__ x,
                                                   float* __restrict__ y, int n) {
  __shared__ float tile[256];
  const int tid = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  const int i = base + tid;
  const int j = base + blockDim.x - 1 - tid;
  if (base + static_cast<int>(blockDim.x) <= n) {  // uniform: blockIdx.x and blockDim.x only
    tile[tid] = x[i];
    __syncthreads();
    y[i] = tile[blockDim.x - 1 - tid];
  } else if (i < n) {
    y[i] = j < n ? x[j] : 0.0f;
  }
}
