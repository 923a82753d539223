// The cuBLAS baseline for gemm_tn and gemm_tn_int8: C[M,N] = A[M,K]·B[N,K]ᵀ, all row-major;
// f16 or bf16 in and out with fp32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F), or s8 in
// and s32 out with exact int32 accumulation (CUBLAS_COMPUTE_32I, the "TN" layout cuBLAS's
// integer GEMM asks for, which the mapping below is).
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
  // Enqueues C = A·Bᵀ on the stream given to init(). `a` and `b` are device descriptors: both
  // f16, both bf16 (C the same) or both s8 (C s32).
  bool enqueue(const kiln_tensor& a, const kiln_tensor& b, void* c, std::string& error);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace kiln::zoo
