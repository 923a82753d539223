// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Row-wise "subtract the chunk pivot" with a double buffer. The fix: the loop runs over
// chunks, a trip count every thread shares (from n and blockDim.x); the tail is guarded inside.
extern "C" __global__ void chunk_pivot_uniform_loop(const float* __restrict__ x,
                                                    float* __restrict__ y, int n) {
  __shared__ float tile[2][256];
  const int tid = threadIdx.x;
  const float* row = x + static_cast<size_t>(blockIdx.x) * n;
  float* out = y + static_cast<size_t>(blockIdx.x) * n;
  const int chunks = (n + blockDim.x - 1) / blockDim.x;
  for (int it = 0; it < chunks; ++it) {
    const int k = it * blockDim.x + tid;
    float* buf = tile[it & 1];
    buf[tid] = k < n ? row[k] : 0.0f;
    __syncthreads();
    if (k < n) out[k] = row[k] - buf[0];
  }
}
