// Module-scope data: constant tables, initialized globals, pointers to globals, extern shared.
__constant__ float c_table[8] = {1.f, 2.f, 3.f, 4.f, 0.5f, 0.25f, -1.f, 1e-3f};
__constant__ double c_pi = 3.14159265358979;
__device__ int g_values[4] = {1, -2, 3, 0x7fffffff};
__device__ int* g_ptr = &g_values[2];
__device__ const char g_name[] = "kiln";
__device__ unsigned long long g_wide = 0xdeadbeefcafef00dull;

extern __shared__ __align__(16) unsigned char smem[];

__global__ void __launch_bounds__(256, 2) use_globals(float* out, int n) {
  float* s = reinterpret_cast<float*>(smem);
  s[threadIdx.x] = c_table[threadIdx.x & 7] * static_cast<float>(c_pi);
  __syncthreads();
  int v = *g_ptr + g_name[threadIdx.x & 3];
  if (threadIdx.x < n) out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x] + v + static_cast<float>(g_wide & 0xff);
}

__global__ void __maxnreg__(64) capped(float* out) {
  out[threadIdx.x + blockIdx.y * gridDim.x] = static_cast<float>(threadIdx.y + blockIdx.z + blockDim.z + gridDim.z);
}
