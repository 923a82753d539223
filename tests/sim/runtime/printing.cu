// Host code around a kernel that prints with device printf: where its output appears relative
// to the host's own prints tells when the runtime writes the printf FIFO to stdout (CUDA: at
// synchronization points, not at the launch).
#include <cuda_runtime.h>

#include <cstdio>

__global__ void say_hello(int value) {
  printf("hello from thread %d of block %d, value %d\n", threadIdx.x, blockIdx.x, value);
}

// Launches say_hello<<<blocks, threads>>>, prints "host: launched", synchronizes, prints
// "host: synchronized". fifo_bytes != 0 sets cudaLimitPrintfFifoSize first.
extern "C" int run_printing(int blocks, int threads, size_t fifo_bytes) {
  if (fifo_bytes != 0) cudaDeviceSetLimit(cudaLimitPrintfFifoSize, fifo_bytes);
  say_hello<<<blocks, threads>>>(42);
  std::printf("host: launched\n");
  const cudaError_t status = cudaDeviceSynchronize();
  std::printf("host: synchronized\n");
  std::fflush(stdout);
  return status;
}

// Prints bytes that are not UTF-8 (a lead byte without its continuation), then synchronizes.
__global__ void say_bytes() { printf("%c(%c)\n", 0xc3, 0xff); }

extern "C" int run_printing_bytes() {
  say_bytes<<<1, 1>>>();
  return cudaDeviceSynchronize();
}

extern "C" size_t printf_fifo_bytes() {
  size_t bytes = 0;
  cudaDeviceGetLimit(&bytes, cudaLimitPrintfFifoSize);
  return bytes;
}
