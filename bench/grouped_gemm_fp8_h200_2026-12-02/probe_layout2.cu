#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdio>
#include <vector>
int main() {
  const int N = 256, K = 256, R = 128, KB = 2, NB = 2;
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  std::vector<__nv_fp8_e4m3> a(R * K), b(N * K);
  std::vector<float> sa(R * KB), sb(NB * KB), fa(R * K), fb(N * K);
  unsigned x = 1;
  auto rnd = [&] {
    x = x * 1103515245 + 12345;
    return (x >> 8) % 1000 / 1000.0f;
  };
  for (int i = 0; i < R * K; i++) {
    a[i] = __nv_fp8_e4m3(rnd() * 8 - 4);
    fa[i] = float(a[i]);
  }
  for (int i = 0; i < N * K; i++) {
    b[i] = __nv_fp8_e4m3(rnd() * 8 - 4);
    fb[i] = float(b[i]);
  }
  for (auto& v : sa) v = 0.5f + rnd();
  for (auto& v : sb) v = 0.5f + rnd();
  void *da, *db, *ds, *dt, *dd, *w;
  cudaMalloc(&da, R * K);
  cudaMalloc(&db, N * K);
  cudaMalloc(&ds, 4096);
  cudaMalloc(&dt, 4096);
  cudaMalloc(&dd, R * N * 2);
  cudaMalloc(&w, 1 << 25);
  cudaMemcpy(da, a.data(), R * K, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), N * K, cudaMemcpyHostToDevice);
  typedef cublasLtMatmulMatrixScale_t S;
  S V = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, B = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      std::vector<float> A2(R * KB), B2(64, 0.f);
      for (int r = 0; r < R; r++)
        for (int k = 0; k < KB; k++) A2[ta ? k * R + r : r * KB + k] = sa[r * KB + k];
      for (int n = 0; n < NB; n++)
        for (int k = 0; k < KB; k++) B2[tb ? k * 4 + n : n * 4 + k] = sb[n * KB + k];
      cudaMemcpy(ds, A2.data(), A2.size() * 4, cudaMemcpyHostToDevice);
      cudaMemcpy(dt, B2.data(), B2.size() * 4, cudaMemcpyHostToDevice);
      cublasLtMatmulDesc_t o;
      cublasLtMatmulDescCreate(&o, CUBLAS_COMPUTE_32F, CUDA_R_32F);
      cublasOperation_t T = CUBLAS_OP_T, NN = CUBLAS_OP_N;
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_TRANSA, &T, 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_TRANSB, &NN, 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &B, 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &V, 4);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dt, 8);
      cublasLtMatmulDescSetAttribute(o, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &ds, 8);
      cublasLtMatrixLayout_t la, lb, ld;
      cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K);
      cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, R, K);
      cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, R, N);
      float al = 1, be = 0;
      int st = cublasLtMatmul(h, o, &al, db, la, da, lb, &be, dd, ld, dd, ld, 0, w, 1 << 25, 0);
      cudaDeviceSynchronize();
      std::vector<__nv_bfloat16> d(R * N);
      cudaMemcpy(d.data(), dd, R * N * 2, cudaMemcpyDeviceToHost);
      double e = 0;
      for (int r = 0; r < R; r++)
        for (int n = 0; n < N; n++) {
          double s = 0;
          for (int k = 0; k < K; k++)
            s += (double)fa[r * K + k] * fb[n * K + k] * sa[r * KB + k / 128] *
                 sb[(n / 128) * KB + k / 128];
          e = fmax(e, fabs(float(d[r * N + n]) - s) / (fabs(s) + 1));
        }
      printf("SA %s SB %s ld4: status %d err %.3g d0 %g\n", ta ? "rows-fastest" : "as-given",
             tb ? "nblk-fastest" : "kblk-fastest", st, e, float(d[0]));
    }
}
