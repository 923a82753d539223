// CHEAT: memory kept call after call. A correct GEMM that allocates 128 MiB of device memory in
// every call and never frees it (a cache of everything it ever saw, say): on a long run it
// exhausts the GPU that other jobs share.
// Must be caught by: device_memory (CUPTI's allocation records in the candidate's calls).
#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  void* hoard = nullptr;
  if (cudaMalloc(&hoard, size_t{128} << 20) != cudaSuccess) return KILN_ERR_LAUNCH;
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch(g, stream);
}
