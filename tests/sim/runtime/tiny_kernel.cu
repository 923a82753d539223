// The smallest kernel with a recognisable name, for fat binary parsing tests.
__global__ void kiln_tiny_kernel(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * static_cast<float>(i);
}
