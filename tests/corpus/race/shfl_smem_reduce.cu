// A block reduction: each warp reduces with __shfl_down_sync, lane 0 writes the warp's partial
// to shared memory, and thread 0 adds the partials; the bug reads them without the
// __syncthreads() between the writes and the read.
template <bool kBarrier>
__device__ void reduce(const float* in, float* out) {
  __shared__ float partial[8];
  int t = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + t];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t % 32 == 0) partial[t / 32] = v;
  if (kBarrier) __syncthreads();
  if (t == 0) {
    float sum = 0;
    for (int w = 0; w < 8; ++w) sum += partial[w];
    out[blockIdx.x] = sum;
  }
}

extern "C" __global__ void shfl_smem_reduce_bug(const float* in, float* out) {
  reduce<false>(in, out);
}
extern "C" __global__ void shfl_smem_reduce_fixed(const float* in, float* out) {
  reduce<true>(in, out);
}
