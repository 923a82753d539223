// Kernels for the tests of memory shared with the device from outside the simulator (CUDA IPC
// across processes, mapped pinned host memory): each launches, waits, and returns the error.
#include <cuda_runtime.h>

__global__ void sharing_fill_kernel(int* data, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value + i;
}

__global__ void sharing_add_kernel(const int* in, int* out, int n, int delta) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + delta;
}

// data[i] = value + i
extern "C" int sharing_fill(int* data, int n, int value) {
  sharing_fill_kernel<<<(n + 127) / 128, 128>>>(data, n, value);
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

// out[i] = in[i] + delta
extern "C" int sharing_add(const int* in, int* out, int n, int delta) {
  sharing_add_kernel<<<(n + 127) / 128, 128>>>(in, out, n, delta);
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}
