// Generates h200_occupancy.jsonl: the CUDA runtime's occupancy (cudaOccupancyMaxActiveBlocksPerMultiprocessor)
// for kernels of known registers and shared memory, over block sizes and dynamic shared memory.
// Built with `nvcc -O3 -arch=sm_90a -o occ h200_occupancy.cu` and run on kiln's H200 (driver 580.159.04,
// CUDA 13.0), 2026-11-29; occupancy_test.cpp checks kiln's calculator against every line.
#include <cstdio>
#include <cuda_runtime.h>

template <int N>
__global__ void regs(float* out, const float* in, int k) {
  float acc[N];
#pragma unroll
  for (int j = 0; j < N; ++j) acc[j] = in[threadIdx.x * N + j];
  for (int r = 0; r < k; ++r) {
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = acc[j] * acc[(j * 7 + 3) % N] + 1.0f;
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) s += acc[j];
  out[threadIdx.x] = s;
}

template <int BYTES>
__global__ void smem(float* out) {
  __shared__ float tile[BYTES / 4];
  tile[threadIdx.x % (BYTES / 4)] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % (BYTES / 4)];
}

__global__ void dyn(float* out) {
  extern __shared__ float d[];
  d[threadIdx.x] = 1;
  __syncthreads();
  out[threadIdx.x] = d[threadIdx.x ^ 1];
}

template <typename F>
void report(const char* name, F f) {
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, f);
  cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 232448 - a.sharedSizeBytes);
  const int blocks[] = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  const int dyns[] = {0, 1000, 16384, 49152, 102400, 200000};
  for (int b : blocks) {
    if (b > a.maxThreadsPerBlock) continue;
    for (int d : dyns) {
      int n = -1;
      cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, b, d);
      printf("{\"kernel\":\"%s\",\"regs\":%d,\"static_smem\":%zu,\"block\":%d,\"dyn\":%d,\"blocks\":%d,\"err\":%d}\n",
             name, a.numRegs, a.sharedSizeBytes, b, d, n, (int)e);
    }
  }
}

int main() {
  report("regs16", regs<4>);
  report("regs40", regs<24>);
  report("regs64", regs<48>);
  report("regs96", regs<80>);
  report("regs128", regs<112>);
  report("regs168", regs<150>);
  report("regs255", regs<240>);
  report("smem1k", smem<1000>);
  report("smem20k", smem<20000>);
  report("smem48k", smem<49152>);
  report("dyn", dyn);
  return 0;
}
