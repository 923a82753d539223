// RAW on shared memory: each thread reads the element of a thread of the other warp, written
// without a __syncthreads() in between.
extern "C" __global__ void smem_raw_bug(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t * 3;
  out[t] = s[(t + 32) % 64];
}

extern "C" __global__ void smem_raw_fixed(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t * 3;
  __syncthreads();
  out[t] = s[(t + 32) % 64];
}
