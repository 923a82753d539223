// A barrier under thread-dependent control: a synccheck target (deliberately wrong).
__global__ void divergent_barrier(float* data) {
  __shared__ float tile[128];
  int t = threadIdx.x;
  tile[t] = data[t];
  if (t < 64) {
    __syncthreads();  // only half of the block arrives: undefined behaviour
    tile[t] += tile[t + 64];
  }
  __syncthreads();
  data[t] = tile[t];
}

// The same shape with a block-uniform condition: legal.
__global__ void uniform_barrier(float* data, int flag) {
  __shared__ float tile[128];
  int t = threadIdx.x;
  tile[t] = data[t];
  if (flag > 0 && blockIdx.x < 4) {
    __syncthreads();
    tile[t] += tile[(t + 1) % 128];
  }
  __syncthreads();
  data[t] = tile[t];
}
