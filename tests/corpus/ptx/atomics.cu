// Atomics and reductions on global and shared memory.
#include <cuda_fp16.h>

__device__ unsigned int g_counter;

__global__ void histogram(const int* data, int n, unsigned int* bins, float* fsum, double* dsum) {
  __shared__ unsigned int local_bins[64];
  for (int i = threadIdx.x; i < 64; i += blockDim.x) local_bins[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local_bins[data[i] & 63], 1u);
    atomicAdd(fsum, static_cast<float>(data[i]));
    atomicMax(reinterpret_cast<int*>(&bins[64]), data[i]);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64; i += blockDim.x) atomicAdd(&bins[i], local_bins[i]);
  unsigned int ticket = atomicInc(&g_counter, 0xffffffffu);
  unsigned int old = atomicCAS(&bins[65], 0u, ticket);
  unsigned int ex = atomicExch(&bins[66], old);
  atomicAdd(dsum, static_cast<double>(ex));
  atomicOr(&bins[67], 1u << (threadIdx.x & 31));
  atomicAnd(&bins[68], ~0u);
}

__global__ void half_atomics(__half2* acc, const __half2* in) {
  atomicAdd(&acc[threadIdx.x % 8], in[threadIdx.x]);
}
