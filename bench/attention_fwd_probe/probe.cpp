// A quick GPU probe of tasks/attention_fwd outside kiln's worker: for each workload of the task
// it draws Q, K, V as task.json says, runs the GPU reference, anchors it to the CPU reference on
// one head, then runs each candidate once (outputs poisoned first) and compares both outputs
// with the GPU reference under the task's tolerance, and times it (median of N CUDA-event
// samples, a 512 MiB memset before each for a cold L2). Not the harness: no gates, no CUPTI,
// no interleaving; bench/attention_fwd_h200.sh is the real measurement.
//
//   probe REFERENCE.so GPU_REFERENCE.so NAME=CANDIDATE.so ...
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kiln/abi.h"

namespace {

struct Workload {
  const char* name;
  int64_t b, h, s, d, c;
};

// task.json's workloads, in order.
const Workload kWorkloads[] = {
    {"1x32x8192x128_causal", 1, 32, 8192, 128, 2}, {"2x16x8192x128_full", 2, 16, 8192, 128, 1},
    {"1x32x8192x64_causal", 1, 32, 8192, 64, 2},   {"2x16x8192x64_full", 2, 16, 8192, 64, 1},
    {"4x32x2048x128_causal", 4, 32, 2048, 128, 2}, {"4x32x2048x128_full", 4, 32, 2048, 128, 1},
    {"8x16x1024x64_causal", 8, 16, 1024, 64, 2},   {"16x16x512x128_full", 16, 16, 512, 128, 1},
    {"32x32x256x64_causal", 32, 32, 256, 64, 2},   {"64x32x128x128_full", 64, 32, 128, 128, 1},
    {"128x16x128x64_causal", 128, 16, 128, 64, 2}};
constexpr double kAtol = 0.004, kRtol = 0.01;
constexpr int kSamples = 10;

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

uint16_t to_bf16(float x) {  // nearest even; inputs are finite
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
double from_bf16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void* symbol(const char* library, const char* name) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", library, dlerror());
    std::exit(1);
  }
  void* fn = dlsym(handle, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "%s has no %s\n", library, name);
    std::exit(1);
  }
  return fn;
}

struct Buffers {
  void* q;
  void* k;
  void* v;
  void* o;
  void* lse;
};

void tensors(const Workload& w, const Buffers& b, kiln_tensor* t) {
  const int64_t sd = w.s * w.d;
  for (int i = 0; i < 4; ++i)
    t[i] = {nullptr, KILN_BF16, 4, {w.b, w.h, w.s, w.d}, {w.h * sd, sd, w.d, 1}, ""};
  t[0].data = b.q;
  t[1].data = b.k;
  t[2].data = b.v;
  t[3].data = b.o;
  t[4] = {b.lse, KILN_F32, 3, {w.b, w.h, w.s}, {w.h * w.s, w.s, 1}, "LSE"};
}

struct Compare {
  double worst = 0;  // max |a - r| / (atol + rtol |r|)
  int64_t mismatches = 0, equal = 0, checked = 0;
};

void compare(const uint16_t* o, const float* lse, const uint16_t* ro, const float* rlse,
             int64_t n_o, int64_t n_lse, Compare& c) {
  for (int64_t i = 0; i < n_o; ++i) {
    const double r = from_bf16(ro[i]), a = from_bf16(o[i]);
    const double share = std::fabs(a - r) / (kAtol + kRtol * std::fabs(r));
    if (!(share <= 1)) ++c.mismatches;
    if (o[i] == ro[i]) ++c.equal;
    c.worst = std::max(c.worst, std::isnan(share) ? INFINITY : share);
  }
  for (int64_t i = 0; i < n_lse; ++i) {
    const double share = std::fabs(static_cast<double>(lse[i]) - rlse[i]) /
                         (kAtol + kRtol * std::fabs(static_cast<double>(rlse[i])));
    if (!(share <= 1)) ++c.mismatches;
    if (lse[i] == rlse[i]) ++c.equal;
    c.worst = std::max(c.worst, std::isnan(share) ? INFINITY : share);
  }
  c.checked += n_o + n_lse;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: probe REFERENCE.so GPU_REFERENCE.so NAME=CANDIDATE.so ...\n");
    return 2;
  }
  auto cpu_ref = reinterpret_cast<kiln_reference_fn>(symbol(argv[1], "kiln_reference"));
  auto gpu_ref = reinterpret_cast<kiln_launch_fn>(symbol(argv[2], "kiln_launch"));
  std::vector<std::pair<std::string, kiln_launch_fn>> candidates;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    const size_t eq = arg.find('=');
    candidates.push_back({arg.substr(0, eq), reinterpret_cast<kiln_launch_fn>(symbol(
                                                 arg.substr(eq + 1).c_str(), "kiln_launch"))});
  }
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  void* flush;
  const size_t flush_bytes = 512u << 20;
  CHECK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  for (const Workload& w : kWorkloads) {
    const int64_t n = w.b * w.h * w.s * w.d, rows = w.b * w.h * w.s;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> wide(-2, 2), narrow(-1, 1);
    std::vector<uint16_t> q(n), k(n), v(n);
    for (int64_t i = 0; i < n; ++i) {
      q[i] = to_bf16(wide(rng));
      k[i] = to_bf16(wide(rng));
      v[i] = to_bf16(narrow(rng));
    }
    Buffers dev{}, ref{};
    CHECK(cudaMalloc(&dev.q, n * 2));
    CHECK(cudaMalloc(&dev.k, n * 2));
    CHECK(cudaMalloc(&dev.v, n * 2));
    CHECK(cudaMalloc(&dev.o, n * 2));
    CHECK(cudaMalloc(&dev.lse, rows * 4));
    CHECK(cudaMemcpy(dev.q, q.data(), n * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dev.k, k.data(), n * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dev.v, v.data(), n * 2, cudaMemcpyHostToDevice));
    ref = dev;
    CHECK(cudaMalloc(&ref.o, n * 2));
    CHECK(cudaMalloc(&ref.lse, rows * 4));
    kiln_scalar causal{};
    causal.name = "causal";
    causal.dtype = KILN_I64;
    causal.value.i = w.c - 1;
    kiln_tensor t[5];
    tensors(w, ref, t);
    CHECK(cudaEventRecord(start, stream));
    const int ref_status = gpu_ref(t, 5, &causal, 1, stream);
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    float ref_ms = 0;
    CHECK(cudaEventElapsedTime(&ref_ms, start, stop));
    std::vector<uint16_t> ro(n);
    std::vector<float> rlse(rows);
    CHECK(cudaMemcpy(ro.data(), ref.o, n * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(rlse.data(), ref.lse, rows * 4, cudaMemcpyDeviceToHost));

    // CPU reference on the last head of the last batch (a [1, 1, S, D] view).
    const int64_t head = (w.b * w.h - 1) * w.s * w.d;
    std::vector<uint16_t> co(w.s * w.d);
    std::vector<float> clse(w.s);
    kiln_tensor h[5];
    for (int i = 0; i < 4; ++i)
      h[i] = {nullptr, KILN_BF16, 4, {1, 1, w.s, w.d}, {w.s * w.d, w.s * w.d, w.d, 1}, ""};
    h[0].data = q.data() + head;
    h[1].data = k.data() + head;
    h[2].data = v.data() + head;
    h[3].data = co.data();
    h[4] = {clse.data(), KILN_F32, 3, {1, 1, w.s}, {w.s, w.s, 1}, "LSE"};
    const int cpu_status = cpu_ref(h, 5, &causal, 1);
    Compare anchor;
    compare(co.data(), clse.data(), ro.data() + head, rlse.data() + head / w.d, w.s * w.d, w.s,
            anchor);
    std::printf(
        "{\"workload\": \"%s\", \"gpu_reference\": {\"status\": %d, \"ms\": %.1f}, "
        "\"anchor\": {\"cpu_status\": %d, \"checked\": %lld, \"bit_equal\": %lld, "
        "\"worst_share\": %.5f}}\n",
        w.name, ref_status, ref_ms, cpu_status, static_cast<long long>(anchor.checked),
        static_cast<long long>(anchor.equal), anchor.worst);
    std::fflush(stdout);

    for (const auto& [name, launch] : candidates) {
      CHECK(cudaMemset(dev.o, 0xff, n * 2));
      CHECK(cudaMemset(dev.lse, 0xff, rows * 4));
      tensors(w, dev, t);
      const int status = launch(t, 5, &causal, 1, stream);
      CHECK(cudaStreamSynchronize(stream));
      const cudaError_t error = cudaGetLastError();
      std::vector<uint16_t> o(n);
      std::vector<float> lse(rows);
      CHECK(cudaMemcpy(o.data(), dev.o, n * 2, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(lse.data(), dev.lse, rows * 4, cudaMemcpyDeviceToHost));
      Compare c;
      compare(o.data(), lse.data(), ro.data(), rlse.data(), n, rows, c);
      std::vector<float> ms;
      for (int i = 0; i < kSamples && status == 0 && error == cudaSuccess; ++i) {
        CHECK(cudaMemsetAsync(flush, i, flush_bytes, stream));
        CHECK(cudaEventRecord(start, stream));
        launch(t, 5, &causal, 1, stream);
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float x = 0;
        CHECK(cudaEventElapsedTime(&x, start, stop));
        ms.push_back(x);
      }
      std::sort(ms.begin(), ms.end());
      const double median_us = ms.empty() ? 0 : 1000.0 * ms[ms.size() / 2];
      const double flops = 4.0 * w.b * w.h * w.s * w.s * w.d / w.c;
      const double tflops = median_us > 0 ? flops / (median_us * 1e-6) / 1e12 : 0;
      std::printf(
          "{\"workload\": \"%s\", \"candidate\": \"%s\", \"status\": %d, \"cuda\": \"%s\", "
          "\"mismatches\": %lld, \"bit_equal\": %lld, \"checked\": %lld, \"worst_share\": %.4f, "
          "\"median_us\": %.2f, \"tflops\": %.1f, \"pct_of_bf16_peak\": %.1f}\n",
          w.name, name.c_str(), status, cudaGetErrorString(error),
          static_cast<long long>(c.mismatches), static_cast<long long>(c.equal),
          static_cast<long long>(c.checked), c.worst, median_us, tflops, 100 * tflops / 989.4);
      std::fflush(stdout);
    }
    CHECK(cudaFree(dev.q));
    CHECK(cudaFree(dev.k));
    CHECK(cudaFree(dev.v));
    CHECK(cudaFree(dev.o));
    CHECK(cudaFree(dev.lse));
    CHECK(cudaFree(ref.o));
    CHECK(cudaFree(ref.lse));
  }
  return 0;
}
