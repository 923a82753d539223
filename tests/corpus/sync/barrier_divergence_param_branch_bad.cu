// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Row-broadcast bias add: the bias vector is staged in shared memory when the caller passes
// one. The barrier was put under `has_bias && tid < cols`, which splits the CTA.
extern "C" __global__ void bias_add_barrier_in_guard(const float* __restrict__ x,
                                                     const float* __restrict__ bias,
                                                     float* __restrict__ y, int rows, int cols,
                                                     int has_bias) {
  __shared__ float s_bias[256];
  const int tid = threadIdx.x;
  float b = 0.0f;
  if (has_bias && tid < cols) {
    s_bias[tid] = bias[tid];
    __syncthreads();  // expect: barrier_divergence
  }
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    if (tid < cols) {
      if (has_bias) b = s_bias[(tid + r) % cols];
      y[r * cols + tid] = x[r * cols + tid] + b;
    }
  }
}
