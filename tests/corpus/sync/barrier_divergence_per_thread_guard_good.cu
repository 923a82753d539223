// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Scale through shared memory, skipping masked elements. The fix: every thread reaches the
// barrier; the mask only decides whether the thread stores its result.
extern "C" __global__ void scale_unmasked_good(const int* mask, const float* __restrict__ x,
                                               float* __restrict__ y, float alpha) {
  __shared__ float tile[256];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + tid;
  const bool masked = mask[i] != 0;
  tile[tid] = x[i];
  __syncthreads();
  if (!masked) y[i] = alpha * tile[blockDim.x - 1 - tid];
}
