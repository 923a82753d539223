// What cuBLASLt supports for tasks/grouped_gemm_fp8's baseline on this GPU, and which scale
// layout it reads (bench/grouped_gemm_fp8_h200.sh runs it).
//
// 1. For every group shape of the task's four workloads (group lengths from kiln/group_layout.h
//    with the task's parameters), asks cuBLASLt for a heuristic with e4m3 in, bf16 out, fp32
//    compute, TN, and each pair of scale modes (cuBLASLt A = the task's B, cuBLASLt B = the
//    task's A): BLK128x128 x VEC128 (the baseline's), VEC128 x VEC128, VEC128 x BLK128x128.
//    Prints how many algorithms came back, or the status.
// 2. On one small problem (N = 256, K = 512, 256 rows) with random scales, runs the baseline's
//    mode pair with the four combinations of scale layouts (each operand's scales k-blocks
//    fastest as the task stores them, or the outer dimension fastest) and prints the max relative
//    error against a double-precision CPU result: the layout with an error near 1e-3 is the one
//    cuBLASLt reads; baseline.cu transposes each unless built with -DKILN_GG_SA_AS_GIVEN=1 or
//    -DKILN_GG_SB_AS_GIVEN=1.
//
//   nvcc -std=c++17 -arch=sm_90a -Itasks/include bench/grouped_gemm_fp8_probe.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kiln/group_layout.h"
#include "kiln/tasks/numeric_codec.h"

namespace {

const char* mode_name(cublasLtMatmulMatrixScale_t m) {
  return m == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F ? "VEC128_32F" : "BLK128x128_32F";
}

// Returns the number of algorithms (>= 0) or -status.
int heuristic(cublasLtHandle_t h, int64_t n_cols, int64_t rows, int64_t K,
              cublasLtMatmulMatrixScale_t mode_a, cublasLtMatmulMatrixScale_t mode_b,
              const void* sa, const void* sb) {
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof sb);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof sa);
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, n_cols, K);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, rows, K);
  cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n_cols, rows, n_cols);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  size_t ws = size_t{32} << 20;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                       sizeof ws);
  cublasLtMatmulHeuristicResult_t results[8];
  int returned = 0;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, ld, ld, pref, 8, results, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatmulDescDestroy(op);
  return s == CUBLAS_STATUS_SUCCESS ? returned : -static_cast<int>(s);
}

// out[b][k][o] = in[b][o][k]
std::vector<float> transpose(const std::vector<float>& in, int64_t batches, int64_t outer,
                             int64_t inner) {
  std::vector<float> out(in.size());
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < inner; ++k)
        out[(b * inner + k) * outer + o] = in[(b * outer + o) * inner + k];
  return out;
}

}  // namespace

int main() {
  cublasLtHandle_t h;
  if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cublasLtCreate failed\n");
    return 1;
  }
  int version = static_cast<int>(cublasLtGetVersion());
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device %s sm_%d%d, cuBLASLt %d\n", prop.name, prop.major, prop.minor, version);
  float* scratch = nullptr;
  cudaMalloc(&scratch, 1 << 24);

  // 1. Heuristics at the task's group shapes.
  struct W {
    int64_t G, M, N, K, S;
  };
  const W workloads[] = {{4, 8192, 6144, 7168, 2},
                         {4, 8192, 4096, 4096, 3},
                         {8, 4096, 7168, 3072, 6},
                         {8, 4096, 4096, 2048, 11}};
  const cublasLtMatmulMatrixScale_t pairs[3][2] = {
      {CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
      {CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
      {CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F}};
  for (const W& w : workloads) {
    std::vector<int64_t> begin(w.G), rows(w.G);
    kiln_group_layout(w.G, w.M, 128, 0.25, w.S, w.G * w.M, begin.data(), rows.data());
    for (int64_t g = 0; g < w.G; ++g) {
      std::printf("G=%lld M=%lld N=%lld K=%lld group %lld: rows %lld at %lld:", (long long)w.G,
                  (long long)w.M, (long long)w.N, (long long)w.K, (long long)g, (long long)rows[g],
                  (long long)begin[g]);
      for (const auto& p : pairs) {
        const int r =
            rows[g] == 0 ? 0 : heuristic(h, w.N, rows[g], w.K, p[0], p[1], scratch, scratch);
        std::printf("  A=%s,B=%s -> %d", mode_name(p[0]), mode_name(p[1]), r);
      }
      std::printf("\n");
    }
  }

  // 2. Which scale layout cuBLASLt reads, on one small problem.
  const int64_t N = 256, K = 512, R = 256, KB = K / 128, NB = N / 128;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-448, 448), scale(1.0 / 512, 1.0 / 256);
  std::vector<uint8_t> a(R * K), b(N * K);
  for (auto& x : a) x = static_cast<uint8_t>(kiln::tasks::encode(KILN_E4M3, value(rng)));
  for (auto& x : b) x = static_cast<uint8_t>(kiln::tasks::encode(KILN_E4M3, value(rng)));
  std::vector<float> sa(R * KB), sb(NB * KB);
  for (auto& x : sa) x = static_cast<float>(scale(rng));
  for (auto& x : sb) x = static_cast<float>(scale(rng));
  std::vector<double> ref(R * N);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += kiln::tasks::decode(KILN_E4M3, a[r * K + k]) *
               kiln::tasks::decode(KILN_E4M3, b[n * K + k]) * sa[r * KB + k / 128] *
               sb[(n / 128) * KB + k / 128];
      ref[r * N + n] = acc;
    }
  uint8_t *da, *db;
  float *dsa, *dsb;
  __nv_bfloat16* dd;
  void* ws;
  cudaMalloc(&da, a.size());
  cudaMalloc(&db, b.size());
  cudaMalloc(&dsa, sa.size() * 4);
  cudaMalloc(&dsb, sb.size() * 4);
  cudaMalloc(&dd, R * N * 2);
  cudaMalloc(&ws, size_t{32} << 20);
  cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size(), cudaMemcpyHostToDevice);
  for (int sa_t = 0; sa_t < 2; ++sa_t) {
    for (int sb_t = 0; sb_t < 2; ++sb_t) {
      const std::vector<float> sa_l = sa_t ? transpose(sa, 1, R, KB) : sa;
      const std::vector<float> sb_l = sb_t ? transpose(sb, 1, NB, KB) : sb;
      cudaMemcpy(dsa, sa_l.data(), sa_l.size() * 4, cudaMemcpyHostToDevice);
      cudaMemcpy(dsb, sb_l.data(), sb_l.size() * 4, cudaMemcpyHostToDevice);
      cudaMemset(dd, 0, R * N * 2);
      cublasLtMatmulDesc_t op;
      cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
      cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
      cublasLtMatmulMatrixScale_t ma = pairs[0][0], mb = pairs[0][1];
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dsb, sizeof dsb);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dsa, sizeof dsa);
      cublasLtMatrixLayout_t la, lb, ld;
      cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K);
      cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, R, K);
      cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, N, R, N);
      const float alpha = 1, beta = 0;
      const cublasStatus_t s = cublasLtMatmul(h, op, &alpha, db, la, da, lb, &beta, dd, ld, dd, ld,
                                              nullptr, ws, size_t{32} << 20, nullptr);
      cudaDeviceSynchronize();
      std::vector<uint16_t> out(R * N);
      cudaMemcpy(out.data(), dd, out.size() * 2, cudaMemcpyDeviceToHost);
      double worst = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        const double got = kiln::tasks::decode(KILN_BF16, out[i]);
        worst = std::fmax(worst, std::fabs(got - ref[i]) / (std::fabs(ref[i]) + 1.0));
      }
      std::printf("layout SA %s, SB %s: status %d, max |err|/(|ref|+1) = %.3g\n",
                  sa_t ? "rows fastest" : "k-blocks fastest (as given)",
                  sb_t ? "n-blocks fastest" : "k-blocks fastest (as given)", static_cast<int>(s),
                  worst);
      cublasLtMatrixLayoutDestroy(ld);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatmulDescDestroy(op);
    }
  }
  return 0;
}
