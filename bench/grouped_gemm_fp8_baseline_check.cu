// tasks/grouped_gemm_fp8/baseline.cu alone on a GPU at one workload: status, time per call (CUDA
// events, warm L2, 10 calls) and its errors against a double-precision sum on 16 sampled rows
// under the task tolerance. bench/grouped_gemm_fp8_h200.sh builds and runs it:
//   nvcc -std=c++17 -O2 -arch=sm_90a -Itasks/grouped_gemm_fp8 -Itasks/include \
//     bench/grouped_gemm_fp8_baseline_check.cu -lcublasLt -o check && ./check G M N K S
#include <cmath>
#include <cstdio>
#include <random>

#include "baseline.cu"
int main(int c, char** v) {
  int64_t G = atol(v[1]), M = atol(v[2]), N = atol(v[3]), K = atol(v[4]), S = atol(v[5]), R = G * M,
          KB = K / 128;
  std::mt19937_64 g(1);
  std::uniform_int_distribution<int> u8(0, 255);
  std::uniform_real_distribution<float> us(1 / 512.f, 1 / 256.f);
  auto e4 = [](int x) {
    int e = (x >> 3) & 15, m = x & 7;
    double a = e ? ldexp(m | 8, e - 10) : ldexp(m, -9);
    return (x & 128) ? -a : a;
  };
  std::vector<uint8_t> a(R * K), b(G * N * K);
  for (auto& x : a) {
    do x = u8(g);
    while ((x & 127) == 127);
  }
  for (auto& x : b) {
    do x = u8(g);
    while ((x & 127) == 127);
  }
  std::vector<float> sa(R * KB), sb(G * (N / 128) * KB);
  for (auto& x : sa) x = us(g);
  for (auto& x : sb) x = us(g);
  std::vector<int64_t> bg(G), rc(G), ix(R);
  kiln_group_layout(G, M, 128, 0.25, S, R, bg.data(), rc.data());
  kiln_group_index_rows(G, bg.data(), rc.data(), R, -1, ix.data());
  std::vector<int32_t> I(ix.begin(), ix.end());
  void* d[6];
  size_t sz[6] = {(size_t)R * K, (size_t)R * KB * 4, (size_t)G * N * K,
                  sb.size() * 4, (size_t)R * 4,      (size_t)R * N * 2};
  const void* h[5] = {a.data(), sa.data(), b.data(), sb.data(), I.data()};
  for (int i = 0; i < 6; i++) {
    cudaMalloc(&d[i], sz[i]);
    if (i < 5) cudaMemcpy(d[i], h[i], sz[i], cudaMemcpyHostToDevice);
  }
  kiln_tensor t[6] = {};
  int64_t sh[6][3] = {{R, K}, {R, KB}, {G, N, K}, {G, N / 128, KB}, {R}, {R, N}};
  int rk[6] = {2, 2, 3, 3, 1, 2};
  kiln_dtype dt[6] = {KILN_E4M3, KILN_F32, KILN_E4M3, KILN_F32, KILN_I32, KILN_BF16};
  for (int i = 0; i < 6; i++) {
    t[i].data = d[i];
    t[i].dtype = dt[i];
    t[i].rank = rk[i];
    int64_t st = 1;
    for (int j = rk[i] - 1; j >= 0; j--) {
      t[i].shape[j] = sh[i][j];
      t[i].strides[j] = st;
      st *= sh[i][j];
    }
  }
  kiln_scalar s[2] = {};
  s[0].name = "layout_seed";
  s[0].dtype = KILN_I64;
  s[0].value.i = S;
  s[1].name = "rows_per_group";
  s[1].dtype = KILN_I64;
  s[1].value.i = M;
  int st = kiln_launch(t, 6, s, 2, 0);
  cudaError_t e = cudaDeviceSynchronize();
  printf("status %d cuda %s\n", st, cudaGetErrorString(e));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int i = 0; i < 10; i++) kiln_launch(t, 6, s, 2, 0);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms;
  cudaEventElapsedTime(&ms, e0, e1);
  printf("%.3f ms/call, %.1f TFLOP/s (2GMNK)\n", ms / 10,
         2.0 * R * N * K / (ms / 10 * 1e-3) / 1e12);
  std::vector<uint16_t> D(R * N);
  cudaMemcpy(D.data(), d[5], R * N * 2, cudaMemcpyDeviceToHost);
  double mx = 0;
  long bad = 0, chk = 0;
  for (int64_t r = 0; r < R; r += R / 16 + 7) {
    if (I[r] < 0) continue;
    int64_t q = I[r];
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k0 = 0; k0 < K; k0 += 128) {
        double ss = 0;
        for (int64_t k = k0; k < k0 + 128; k++) ss += e4(a[r * K + k]) * e4(b[(q * N + n) * K + k]);
        acc += ss * ((double)sa[r * KB + k0 / 128] * sb[(q * (N / 128) + n / 128) * KB + k0 / 128]);
      }
      uint32_t w = (uint32_t)D[r * N + n] << 16;
      float f;
      memcpy(&f, &w, 4);
      double er = fabs(f - acc);
      mx = fmax(mx, er);
      chk++;
      if (er > 0.02 + 0.01 * fabs(acc)) bad++;
    }
  }
  printf("checked %ld elements, max abs err %.4g, outside atol 0.02 + rtol 0.01: %ld\n", chk, mx,
         bad);
}
