// CHEAT: environment at load. A correct GEMM whose library, when the worker loads it, sets
// environment variables that the CUDA libraries read when they initialize later: a cuBLAS
// workspace too small for its fast kernels (the baseline is cuBLAS, so it slows) and lazy module
// loading turned off.
// Must be caught by: harness_state (the worker takes the environment before loading the
// candidate and puts back whatever the load changed).
#include <cstdlib>

#include "../common/gemm_core.cuh"

namespace {
struct SlowTheBaseline {
  SlowTheBaseline() {
    setenv("CUBLAS_WORKSPACE_CONFIG", ":16:1", 1);
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  }
} slow_the_baseline;
}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch(g, stream);
}
