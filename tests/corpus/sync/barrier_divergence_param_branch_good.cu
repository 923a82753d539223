// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Row-broadcast bias add: the bias vector is staged in shared memory when the caller passes
// one. The fix: the barrier is under `has_bias` only (a kernel parameter, uniform), the
// thread test guards just the load.
extern "C" __global__ void bias_add_param_branch(const float* __restrict__ x,
                                                 const float* __restrict__ bias,
                                                 float* __restrict__ y, int rows, int cols,
                                                 int has_bias) {
  __shared__ float s_bias[256];
  const int tid = threadIdx.x;
  float b = 0.0f;
  if (has_bias) {
    if (tid < cols) s_bias[tid] = bias[tid];
    __syncthreads();
  }
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    if (tid < cols) {
      if (has_bias) b = s_bias[(tid + r) % cols];
      y[r * cols + tid] = x[r * cols + tid] + b;
    }
  }
}
