// CHEAT: calling cuBLAS. The candidate hands the GEMM to the vendor library it is
// supposed to beat (and would then "match" the baseline exactly).
// Must be caught by: banned_symbols (at link time: cublasCreate_v2, cublasGemmEx, ...).
#include <cublas_v2.h>

#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return KILN_ERR_LAUNCH;
  cublasSetStream(handle, stream);
  const float alpha = 1.f, beta = 0.f;
  const auto N = static_cast<int>(g.N), M = static_cast<int>(g.M), K = static_cast<int>(g.K);
  return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, g.b, CUDA_R_16F, K, g.a,
                      CUDA_R_16F, K, &beta, g.c, CUDA_R_16F, N, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS
             ? KILN_OK
             : KILN_ERR_LAUNCH;
}
