// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Row-wise "subtract the chunk pivot": one block per row, chunks of blockDim.x staged in a
// double buffer. The loop starts at threadIdx.x, so its trip count differs between threads
// when n % blockDim.x != 0 and the barrier inside is reached by only part of the CTA.
extern "C" __global__ void chunk_pivot_divergent_loop(const float* __restrict__ x,
                                                      float* __restrict__ y, int n) {
  __shared__ float tile[2][256];
  const int tid = threadIdx.x;
  const float* row = x + static_cast<size_t>(blockIdx.x) * n;
  float* out = y + static_cast<size_t>(blockIdx.x) * n;
  int it = 0;
  for (int k = tid; k < n; k += blockDim.x, ++it) {  // the bug: per-thread trip count
    float* buf = tile[it & 1];
    buf[tid] = row[k];
    __syncthreads();  // expect: barrier_divergence
    out[k] = row[k] - buf[0];
  }
}
