#include "cublas_gemm.h"

namespace kiln::zoo {
namespace {

std::string status_text(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
}

}  // namespace

CublasGemm::~CublasGemm() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

bool CublasGemm::init(cudaStream_t stream, std::string& error) {
  cublasStatus_t status = cublasCreate(&handle_);
  if (status != CUBLAS_STATUS_SUCCESS) {
    handle_ = nullptr;
    error = "cublasCreate failed: " + status_text(status);
    return false;
  }
  if ((status = cublasSetStream(handle_, stream)) != CUBLAS_STATUS_SUCCESS) {
    error = "cublasSetStream failed: " + status_text(status);
    return false;
  }
  return true;
}

bool CublasGemm::enqueue(const kiln_tensor& a, const kiln_tensor& b, void* c, std::string& error) {
  const bool integer = a.dtype == KILN_I8;
  if (a.dtype != b.dtype || (a.dtype != KILN_F16 && a.dtype != KILN_BF16 && !integer)) {
    error = "the cuBLAS baseline takes f16, bf16 or s8 operands of one dtype";
    return false;
  }
  const auto M = static_cast<int>(a.shape[0]);
  const auto K = static_cast<int>(a.shape[1]);
  const auto N = static_cast<int>(b.shape[0]);
  cublasStatus_t status;
  if (integer) {
    const int32_t alpha = 1;
    const int32_t beta = 0;
    status = cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, b.data, CUDA_R_8I, K,
                          a.data, CUDA_R_8I, K, &beta, c, CUDA_R_32I, N, CUBLAS_COMPUTE_32I,
                          CUBLAS_GEMM_DEFAULT);
  } else {
    const cudaDataType_t type = a.dtype == KILN_F16 ? CUDA_R_16F : CUDA_R_16BF;
    const float alpha = 1.0f;
    const float beta = 0.0f;
    status =
        cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, b.data, type, K, a.data,
                     type, K, &beta, c, type, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  if (status != CUBLAS_STATUS_SUCCESS) {
    error = "cublasGemmEx failed: " + status_text(status);
    return false;
  }
  return true;
}

}  // namespace kiln::zoo
