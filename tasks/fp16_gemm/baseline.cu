// fp16_gemm baseline: cuBLAS cublasGemmEx, fp16 in and out, fp32 compute.
//
// C[M,N] = A[M,K] * B[N,K]^T with row-major A, B, C. cuBLAS is column-major, and a
// row-major matrix is its column-major transpose, so we ask cuBLAS for
//   C^T (N x M, ld N) = op(B) * A^T  with  op = transpose of the column-major K x N view of B,
// i.e. cublasGemmEx(OP_T, OP_N, m=N, n=M, k=K, B, ldb, A, lda, C, ldc): the "TN" GEMM.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <mutex>

#include "kiln/abi.h"

namespace {

// One cuBLAS handle per device, created on first use and kept for the life of the
// process (creating a handle allocates and synchronizes, so never per call). A
// handle must not be used by two threads at once; the mutex covers setStream+gemm,
// which only enqueue work.
struct HandleCache {
  std::mutex mutex;
  cublasHandle_t handles[64] = {};
};

HandleCache& handle_cache() {
  static HandleCache cache;  // thread-safe initialization; never destroyed before exit
  return cache;
}

// Row-major with unit column stride; the row stride becomes the leading dimension.
bool is_row_major(const kiln_tensor& t, int64_t cols) {
  return t.strides[1] == 1 && t.strides[0] >= cols && t.strides[0] <= INT_MAX;
}

bool is_fp16_matrix(const kiln_tensor& t) {
  return t.dtype == KILN_F16 && t.rank == 2 && t.shape[0] >= 0 && t.shape[1] >= 0;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& b = tensors[1];
  const kiln_tensor& c = tensors[2];
  if (!is_fp16_matrix(a) || !is_fp16_matrix(b) || !is_fp16_matrix(c)) return KILN_ERR_BAD_ARGUMENT;
  const int64_t M = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t N = b.shape[0];
  if (b.shape[1] != K || c.shape[0] != M || c.shape[1] != N) return KILN_ERR_BAD_ARGUMENT;
  if (M == 0 || N == 0) return KILN_OK;
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) return KILN_ERR_UNSUPPORTED;
  if (!is_row_major(a, K) || !is_row_major(b, K) || !is_row_major(c, N))
    return KILN_ERR_UNSUPPORTED;

  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return KILN_ERR_LAUNCH;
  HandleCache& cache = handle_cache();
  if (device < 0 || device >= 64) return KILN_ERR_UNSUPPORTED;
  std::lock_guard<std::mutex> lock(cache.mutex);
  cublasHandle_t& handle = cache.handles[device];
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    handle = nullptr;
    return KILN_ERR_LAUNCH;
  }
  if (cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) return KILN_ERR_LAUNCH;

  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cublasStatus_t status =
      cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(M),
                   static_cast<int>(K), &alpha, b.data, CUDA_R_16F, static_cast<int>(b.strides[0]),
                   a.data, CUDA_R_16F, static_cast<int>(a.strides[0]), &beta, c.data, CUDA_R_16F,
                   static_cast<int>(c.strides[0]), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return status == CUBLAS_STATUS_SUCCESS ? KILN_OK : KILN_ERR_LAUNCH;
}
