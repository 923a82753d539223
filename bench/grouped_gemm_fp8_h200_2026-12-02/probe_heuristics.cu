#include <cublasLt.h>

#include <cstdio>
int main() {
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  printf("cublasLt %zu\n", cublasLtGetVersion());
  typedef cublasLtMatmulMatrixScale_t S;
  S V = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, B = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  S P[3][2] = {{B, V}, {V, V}, {V, B}};
  long sh[5][3] = {{6144, 6508, 7168},
                   {4096, 6513, 4096},
                   {7168, 3757, 3072},
                   {4096, 3339, 2048},
                   {128, 104, 256}};
  void* p;
  cudaMalloc(&p, 1 << 20);
  for (auto& s : sh)
    for (auto& q : P) {
      cublasLtMatmulDesc_t o;
      cublasLtMatmulDescCreate(&o, CUBLAS_COMPUTE_32F, CUDA_R_32F);
      cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_TRANSA, &t, 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_TRANSB, &n, 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &q[0], 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &q[1], 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &p, 8);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p, 8);
      cublasLtMatrixLayout_t a, b, d;
      cublasLtMatrixLayoutCreate(&a, CUDA_R_8F_E4M3, s[2], s[0], s[2]);
      cublasLtMatrixLayoutCreate(&b, CUDA_R_8F_E4M3, s[2], s[1], s[2]);
      cublasLtMatrixLayoutCreate(&d, CUDA_R_16BF, s[0], s[1], s[0]);
      cublasLtMatmulPreference_t f;
      cublasLtMatmulPreferenceCreate(&f);
      size_t w = 32 << 20;
      cublasLtMatmulPreferenceSetAttribute(f, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &w, 8);
      cublasLtMatmulHeuristicResult_t r[8];
      int k = 0;
      int st = cublasLtMatmulAlgoGetHeuristic(h, o, a, b, d, d, f, 8, r, &k);
      printf("N=%ld rows=%ld K=%ld A=%s B=%s: status %d, %d algos\n", s[0], s[1], s[2],
             q[0] == B ? "BLK" : "VEC", q[1] == B ? "BLK" : "VEC", st, k);
    }
}
