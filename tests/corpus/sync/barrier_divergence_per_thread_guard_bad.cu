// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Scale through shared memory, skipping masked elements. The bug: each thread returns on its
// own mask word (mask[i] differs between threads), so the masked threads never arrive at the
// barrier. Unlike a flag every thread reads at one address, this is thread-dependent: an error.
extern "C" __global__ void scale_unmasked_bad(const int* mask, const float* __restrict__ x,
                                              float* __restrict__ y, float alpha) {
  __shared__ float tile[256];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + tid;
  if (mask[i]) return;
  tile[tid] = x[i];
  __syncthreads();  // expect: barrier_divergence
  y[i] = alpha * tile[blockDim.x - 1 - tid];
}
