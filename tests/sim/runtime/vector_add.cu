// An ordinary CUDA program's host code (cudaMalloc, cudaMemcpy, <<<>>>, cudaFree), as a
// candidate would write it, run end to end on the simulator through libkiln_cudart_sim.
#include <cuda_runtime.h>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Writes out of bounds on purpose: one thread past the end of c.
__global__ void vector_add_overrun(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) c[i] = a[i % n] + b[i % n];
}

extern "C" int run_vector_add(int n, int overrun, float* max_error) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  float* ha = new float[n];
  float* hb = new float[n];
  float* hc = new float[n];
  for (int i = 0; i < n; ++i) {
    ha[i] = static_cast<float>(i) * 0.5f;
    hb[i] = 1.0f - static_cast<float>(i);
  }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  cudaMalloc(&da, bytes);
  cudaMalloc(&db, bytes);
  cudaMalloc(&dc, bytes);
  cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
  const int threads = 128;
  const int blocks = (n + threads - 1) / threads + (overrun ? 1 : 0);
  if (overrun != 0)
    vector_add_overrun<<<blocks, threads>>>(da, db, dc, n);
  else
    vector_add<<<blocks, threads>>>(da, db, dc, n);
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) status = cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost);
  float worst = 0;
  for (int i = 0; i < n && status == cudaSuccess; ++i) {
    const float diff = hc[i] - (ha[i] + hb[i]);
    worst = diff < 0 ? (-diff > worst ? -diff : worst) : (diff > worst ? diff : worst);
  }
  *max_error = worst;
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  delete[] ha;
  delete[] hb;
  delete[] hc;
  return status;
}
