// The cuBLAS baseline for gemm_tn: C[M,N] = A[M,K]·B[N,K]ᵀ, all row-major, f16 or bf16 in
// and out, fp32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F).
//
// cuBLAS is column-major. Row-major C[M,N] is column-major Cᵀ[N,M], and
// Cᵀ = B·Aᵀ: B row-major [N,K] is column-major [K,N] (ld K), used transposed; A row-major
// [M,K] is column-major [K,M] (ld K), used as is. So: gemm(T, N, m=N, n=M, k=K, B, ldb=K,
// A, lda=K, C, ldc=N).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kiln/abi.h"

namespace kiln::zoo {

class CublasGemm {
 public:
  CublasGemm() = default;
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  bool init(cudaStream_t stream, std::string& error);
  // Enqueues C = A·Bᵀ on the stream given to init(). `a` and `b` are device descriptors.
  bool enqueue(const kiln_tensor& a, const kiln_tensor& b, void* c, std::string& error);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace kiln::zoo
