// Stand-alone check and benchmark for the zoo's Hopper fp16 GEMMs against cuBLAS.
//
// Each kernel.cu is compiled into this program with kiln_launch renamed (see build.sh),
// so several entries and variants run side by side through the kiln ABI.
//
//   bench check   ragged shapes and the fp16_gemm workloads: every element of C compared
//                 with a cuBLAS fp32-output reference (|c - ref| <= 0.01 + 0.002 |ref|),
//                 C poisoned with NaN beforehand and a guard band after C checked intact.
//   bench time    median of 25 CUDA-event timings per kernel and workload, L2 flushed
//                 (256 MB memset) before every sample, kernels interleaved.
//   bench all     both (the default); bench probe only prints the device.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kiln/abi.h"

#define DECLARE(name) \
  extern "C" int name(const kiln_tensor*, int, const kiln_scalar*, int, cudaStream_t)
DECLARE(e1_launch);          // gemm_wgmma_tma
DECLARE(e2_launch);          // gemm_warp_specialized_persistent, as shipped
DECLARE(e2_checked_launch);  // the same with the mbarrier-wait deadlock trap
DECLARE(e2_n256_launch);     // forced variants: tile width and split-K count
DECLARE(e2_n128_launch);
DECLARE(e2_n128s2_launch);
DECLARE(e2_n128s4_launch);

namespace {

#define CUDA_OK(x)                                                                  \
  do {                                                                              \
    cudaError_t err_ = (x);                                                         \
    if (err_ != cudaSuccess) {                                                      \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(err_), __FILE__, \
                  __LINE__, #x);                                                    \
      std::fflush(stdout);                                                          \
      std::_Exit(3);                                                                \
    }                                                                               \
  } while (0)

struct Shape {
  int64_t m, n, k;
};

struct Variant {
  const char* name;
  kiln_launch_fn fn;
};

__global__ void fill_uniform(__half* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 32;
    const float u = static_cast<float>(x & 0xFFFFFF) / 16777216.0f;  // [0, 1)
    p[i] = __float2half_rn(2.0f * u - 1.0f);
  }
}

__global__ void fill_bits(uint16_t* p, int64_t n, uint16_t bits) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = bits;
}

// counters: [0] failing elements, [1] guard elements changed; maxerr as float bits.
__global__ void compare(const __half* c, const float* ref, int64_t n, const uint16_t* guard,
                        int64_t guard_n, unsigned long long* counters, unsigned int* maxerr) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = __half2float(c[i]);
    const float r = ref[i];
    const float err = fabsf(v - r);
    if (!(err <= 0.01f + 0.002f * fabsf(r))) atomicAdd(&counters[0], 1ull);
    if (err == err) atomicMax(maxerr, __float_as_uint(err));
  }
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < guard_n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    if (guard[i] != 0x5A5A) atomicAdd(&counters[1], 1ull);
}

kiln_tensor matrix(void* data, int64_t rows, int64_t cols, const char* name) {
  kiln_tensor t{};
  t.data = data;
  t.dtype = KILN_F16;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  t.name = name;
  return t;
}

struct Buffers {
  __half* a = nullptr;
  __half* b = nullptr;
  __half* c = nullptr;  // followed by a guard band
  float* ref = nullptr;
  void* flush = nullptr;
  unsigned long long* counters = nullptr;
  unsigned int* maxerr = nullptr;
  static constexpr int64_t kGuard = 1 << 16;
  static constexpr size_t kFlushBytes = 256u << 20;
};

// Waits for the stream with a deadline so that a deadlocked kernel is reported, not hung on.
void sync_or_die(cudaStream_t stream, const char* what, double seconds = 20.0) {
  cudaEvent_t ev;
  CUDA_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CUDA_OK(cudaEventRecord(ev, stream));
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t st = cudaEventQuery(ev);
    if (st == cudaSuccess) break;
    if (st != cudaErrorNotReady) {
      std::printf("FAIL %s: %s\n", what, cudaGetErrorString(st));
      std::fflush(stdout);
      std::_Exit(4);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) {
      std::printf("HANG %s (no completion after %.0f s)\n", what, seconds);
      std::fflush(stdout);
      std::_Exit(5);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CUDA_OK(cudaEventDestroy(ev));
}

void prepare(const Buffers& buf, const Shape& s, uint64_t seed, cudaStream_t stream) {
  fill_uniform<<<1024, 256, 0, stream>>>(buf.a, s.m * s.k, seed * 2 + 1);
  fill_uniform<<<1024, 256, 0, stream>>>(buf.b, s.n * s.k, seed * 2 + 2);
  CUDA_OK(cudaGetLastError());
}

void reference(cublasHandle_t h, const Buffers& buf, const Shape& s) {
  const float one = 1.f, zero = 0.f;
  // Row-major C = A B^T is column-major C^T = B^T(op T on the K x N view) A.
  cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)s.n, (int)s.m, (int)s.k, &one,
                                   buf.b, CUDA_R_16F, (int)s.k, buf.a, CUDA_R_16F, (int)s.k, &zero,
                                   buf.ref, CUDA_R_32F, (int)s.n, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::printf("cuBLAS reference failed (%d)\n", (int)st);
    std::_Exit(6);
  }
}

int cublas_fp16(cublasHandle_t h, const Buffers& buf, const Shape& s) {
  const float one = 1.f, zero = 0.f;
  return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)s.n, (int)s.m, (int)s.k, &one, buf.b,
                      CUDA_R_16F, (int)s.k, buf.a, CUDA_R_16F, (int)s.k, &zero, buf.c, CUDA_R_16F,
                      (int)s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS
             ? 0
             : 1;
}

int run_variant(const Variant& v, const Buffers& buf, const Shape& s, cudaStream_t stream) {
  kiln_tensor t[3] = {matrix(buf.a, s.m, s.k, "A"), matrix(buf.b, s.n, s.k, "B"),
                      matrix(buf.c, s.m, s.n, "C")};
  return v.fn(t, 3, nullptr, 0, stream);
}

float worst_err = 0;

bool check(const Variant& v, const Buffers& buf, const Shape& s, cudaStream_t stream) {
  const int64_t n = s.m * s.n;
  fill_bits<<<1024, 256, 0, stream>>>(reinterpret_cast<uint16_t*>(buf.c), n, 0xFFFF);  // NaN
  fill_bits<<<256, 256, 0, stream>>>(reinterpret_cast<uint16_t*>(buf.c) + n, Buffers::kGuard,
                                     0x5A5A);
  CUDA_OK(cudaMemsetAsync(buf.counters, 0, 2 * sizeof(unsigned long long), stream));
  CUDA_OK(cudaMemsetAsync(buf.maxerr, 0, sizeof(unsigned int), stream));
  const int rc = run_variant(v, buf, s, stream);
  char what[128];
  std::snprintf(what, sizeof what, "%s %lldx%lldx%lld", v.name, (long long)s.m, (long long)s.n,
                (long long)s.k);
  if (rc != KILN_OK) {
    std::printf("  %-14s %-18s launch returned %d\n", v.name, what + std::strlen(v.name) + 1, rc);
    return false;
  }
  sync_or_die(stream, what);
  compare<<<1024, 256, 0, stream>>>(buf.c, buf.ref, n,
                                    reinterpret_cast<const uint16_t*>(buf.c) + n, Buffers::kGuard,
                                    buf.counters, buf.maxerr);
  unsigned long long counters[2];
  unsigned int maxerr_bits;
  CUDA_OK(cudaMemcpyAsync(counters, buf.counters, sizeof counters, cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaMemcpyAsync(&maxerr_bits, buf.maxerr, 4, cudaMemcpyDeviceToHost, stream));
  sync_or_die(stream, "compare");
  float maxerr;
  std::memcpy(&maxerr, &maxerr_bits, 4);
  const bool ok = counters[0] == 0 && counters[1] == 0;
  if (!ok) {
    std::printf("  FAIL %s: bad=%llu guard=%llu maxerr=%.3g\n", what, counters[0], counters[1],
                maxerr);
  }
  worst_err = std::max(worst_err, maxerr);
  return ok;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  if (mode == "probe") return 0;

  const std::vector<Shape> small = {{64, 64, 64},    {128, 96, 80},   {33, 17, 40},
                                    {16, 128, 256},  {200, 328, 136}, {300, 520, 1000},
                                    {129, 257, 72},  {1000, 1000, 8}, {256, 512, 4096},
                                    {100, 200, 1000}, {64, 64, 3000}, {33, 17, 1032},
                                    {16, 1000, 2048}};
  const std::vector<Shape> workloads = {
      {4096, 4096, 4096},  {8192, 8192, 8192}, {4096, 14336, 4096}, {4096, 4096, 14336},
      {1024, 4096, 4096},  {16, 4096, 4096},   {128, 8192, 8192},   {2048, 28672, 8192},
      {8192, 1024, 8192},  {4000, 3000, 2000}};

  int64_t max_a = 0, max_b = 0, max_c = 0;
  for (const auto* list : {&small, &workloads})
    for (const Shape& s : *list) {
      max_a = std::max(max_a, s.m * s.k);
      max_b = std::max(max_b, s.n * s.k);
      max_c = std::max(max_c, s.m * s.n);
    }
  Buffers buf;
  CUDA_OK(cudaMalloc(&buf.a, max_a * 2));
  CUDA_OK(cudaMalloc(&buf.b, max_b * 2));
  CUDA_OK(cudaMalloc(&buf.c, (max_c + Buffers::kGuard) * 2));
  CUDA_OK(cudaMalloc(&buf.ref, max_c * 4));
  CUDA_OK(cudaMalloc(&buf.flush, Buffers::kFlushBytes));
  CUDA_OK(cudaMalloc(&buf.counters, 2 * sizeof(unsigned long long)));
  CUDA_OK(cudaMalloc(&buf.maxerr, sizeof(unsigned int)));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 7;
  cublasSetStream(handle, stream);

  const Variant checked[] = {{"wgmma_tma", e1_launch},   {"ws", e2_launch},
                             {"ws_chk", e2_checked_launch}, {"n256", e2_n256_launch},
                             {"n128", e2_n128_launch},      {"n128s2", e2_n128s2_launch},
                             {"n128s4", e2_n128s4_launch}};
  const Variant timed[] = {{"ws", e2_launch},         {"n256", e2_n256_launch},
                           {"n128", e2_n128_launch},     {"n128s2", e2_n128s2_launch},
                           {"n128s4", e2_n128s4_launch}, {"wgmma_tma", e1_launch}};
  int failures = 0;

  if (mode == "all" || mode == "check") {
    std::printf("correctness (vs cuBLAS fp32 output; tolerance 0.01 + 0.002|ref|):\n");
    uint64_t seed = 1;
    for (const auto* list : {&small, &workloads}) {
      for (const Shape& s : *list) {
        prepare(buf, s, seed++, stream);
        reference(handle, buf, s);
        worst_err = 0;
        int bad = 0;
        for (const Variant& v : checked) bad += check(v, buf, s, stream) ? 0 : 1;
        std::printf("  %lldx%lldx%lld: %s (%d variants, max |err| %.3g)\n", (long long)s.m,
                    (long long)s.n, (long long)s.k, bad == 0 ? "ok" : "FAILED",
                    (int)(sizeof(checked) / sizeof(checked[0])), worst_err);
        failures += bad;
      }
    }
    std::printf("correctness failures: %d\n", failures);
  }

  if (mode == "all" || mode == "time") {
    std::printf("\ntiming: median of 25, cold L2 (256 MB memset before each sample)\n");
    std::printf("time in us; x = cuBLAS time / variant time\n%-16s %7s %5s", "M x N x K", "cuBLAS",
                "TF/s");
    for (const Variant& v : timed) std::printf(" | %9s %5s", v.name, "x");
    std::printf("\n");
    cudaEvent_t ev0, ev1;
    CUDA_OK(cudaEventCreate(&ev0));
    CUDA_OK(cudaEventCreate(&ev1));
    uint64_t seed = 1000;
    for (const Shape& s : workloads) {
      prepare(buf, s, seed++, stream);
      const int nk = 1 + static_cast<int>(sizeof(timed) / sizeof(timed[0]));
      std::vector<std::vector<float>> samples(nk);
      auto launch = [&](int which) {
        if (which == 0) return cublas_fp16(handle, buf, s);
        return run_variant(timed[which - 1], buf, s, stream);
      };
      for (int w = 0; w < 3; ++w)
        for (int which = 0; which < nk; ++which)
          if (launch(which) != 0) {
            std::printf("launch %d failed\n", which);
            return 8;
          }
      sync_or_die(stream, "warm-up");
      for (int rep = 0; rep < 25; ++rep) {
        for (int which = 0; which < nk; ++which) {
          CUDA_OK(cudaMemsetAsync(buf.flush, rep & 0xFF, Buffers::kFlushBytes, stream));
          CUDA_OK(cudaEventRecord(ev0, stream));
          launch(which);
          CUDA_OK(cudaEventRecord(ev1, stream));
          sync_or_die(stream, "timing");
          float ms = 0;
          CUDA_OK(cudaEventElapsedTime(&ms, ev0, ev1));
          samples[which].push_back(ms * 1000.f);
        }
      }
      const double flops = 2.0 * s.m * s.n * s.k;
      const float base = median(samples[0]);
      char label[64];
      std::snprintf(label, sizeof label, "%lldx%lldx%lld", (long long)s.m, (long long)s.n,
                    (long long)s.k);
      std::printf("%-16s %7.1f %5.0f", label, base, flops / base * 1e-6);
      for (int which = 1; which < nk; ++which) {
        const float t = median(samples[which]);
        std::printf(" | %9.1f %5.2f", t, base / t);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}
