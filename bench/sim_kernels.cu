// Kernels for kiln_bench_sim_throughput: compiled to PTX with nvcc at build time and run on the
// CPU simulator. One is ALU-bound (fma and integer hashing in registers), one memory-bound
// (a grid-stride scaled copy and a shared-memory tree reduction finished with an atomic).
extern "C" __global__ void alu_heavy(float* out, int iterations) {
  float a = threadIdx.x * 0.001f, b = 1.0001f, c = 0.5f;
  unsigned h = threadIdx.x + blockIdx.x * 7919u;
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    c = fmaf(c, b, -a);
    h = h * 1664525u + 1013904223u;
    h ^= h >> 13;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + c + static_cast<float>(h & 0xffff);
}

extern "C" __global__ void memory_heavy(const float* in, float* out, int n) {
  __shared__ float partial[256];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = in[i];
    out[i] = v * 2.0f;
    sum += v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out + n, partial[0]);
}
