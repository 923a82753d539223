// Candidate-style host and device code for the runtime tests: every way kiln's candidates
// launch kernels and touch memory, each wrapped in an extern "C" function the test calls
// through dlsym. Built by nvcc at test build time against no cudart (-cudart none).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>

struct Pair {
  int a;
  double b;
};

__global__ void scalars_kernel(int a, float b, double c, const float* p, Pair s, char d) {
  if (threadIdx.x == 0 && a == 0) *const_cast<float*>(p) = b + static_cast<float>(c) + s.b + d;
}

__global__ void shared_kernel(float* out) {
  extern __shared__ float buffer[];
  buffer[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = buffer[threadIdx.x ^ 1];
}

__global__ void __launch_bounds__(128) bounded_kernel(float* out) { out[threadIdx.x] = 1.0f; }

__global__ void __cluster_dims__(2, 1, 1) compiled_cluster_kernel(float* out) {
  out[blockIdx.x] = 1.0f;
}

__global__ void tma_kernel(const __grid_constant__ CUtensorMap map, float* out) {
  out[0] = reinterpret_cast<const float*>(&map)[0];
}

__device__ float device_table[16];
__constant__ int constant_table[4];

__global__ void table_kernel(float* out) { out[threadIdx.x] = device_table[threadIdx.x] + constant_table[0]; }

extern "C" {

int probe_launch_scalars(float* p) {
  const Pair s{7, 2.5};
  scalars_kernel<<<dim3(2, 3, 4), dim3(32, 2, 1)>>>(1, 2.0f, 3.0, p, s, 'x');
  return cudaGetLastError();
}

int probe_launch_shared(float* out, int bytes, int opt_in) {
  if (opt_in != 0) {
    const cudaError_t e =
        cudaFuncSetAttribute(shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, opt_in);
    if (e != cudaSuccess) return e;
  }
  shared_kernel<<<1, 32, static_cast<size_t>(bytes)>>>(out);
  return cudaGetLastError();
}

int probe_launch_block(float* out, int threads) {
  shared_kernel<<<1, threads, 256>>>(out);
  return cudaGetLastError();
}

int probe_launch_bounded(float* out, int threads) {
  bounded_kernel<<<1, threads>>>(out);
  return cudaGetLastError();
}

int probe_launch_cluster_ex(float* out, unsigned cluster_x, unsigned grid_x, int non_portable) {
  if (non_portable != 0)
    cudaFuncSetAttribute(bounded_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid_x, 1, 1);
  config.blockDim = dim3(64, 1, 1);
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = cluster_x;
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, bounded_kernel, out);
}

int probe_launch_compiled_cluster(float* out, unsigned grid_x) {
  compiled_cluster_kernel<<<grid_x, 32>>>(out);
  return cudaGetLastError();
}

int probe_launch_kernel_api(float* out) {
  void* args[] = {&out};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&bounded_kernel), dim3(3), dim3(64), args,
                          0, nullptr);
}

int probe_symbols(float* readback) {
  float values[16];
  for (int i = 0; i < 16; ++i) values[i] = static_cast<float>(i) * 0.5f;
  cudaError_t e = cudaMemcpyToSymbol(device_table, values, sizeof values);
  if (e != cudaSuccess) return e;
  const int constant = 42;
  e = cudaMemcpyToSymbol(constant_table, &constant, sizeof constant, 4);
  if (e != cudaSuccess) return e;
  e = cudaMemcpyFromSymbol(readback, device_table, sizeof values);
  if (e != cudaSuccess) return e;
  // One int past the end of constant_table: the runtime must refuse.
  return cudaMemcpyToSymbol(constant_table, &constant, sizeof constant, 16);
}

int probe_tensor_map(void* global, uint64_t rows, uint64_t cols, uint32_t box_rows,
                     uint32_t box_cols, int swizzle, float* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                       &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess)
    return -1;
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  alignas(64) CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * sizeof(uint16_t)};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, global, dims, strides, box,
                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            static_cast<CUtensorMapSwizzle>(swizzle),
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return 1000 + static_cast<int>(r);
  tma_kernel<<<1, 32>>>(map, out);
  return cudaGetLastError();
}

int probe_table_kernel(float* out) {
  table_kernel<<<1, 16>>>(out);
  return cudaGetLastError();
}

}  // extern "C"
