// The H200's achievable HBM bandwidth, the yardstick of the zoo's memory-bound entries
// (issue 18: "at >= 90% of the H200's measured HBM bandwidth"). Three ways, each the median of
// 20 CUDA-event timings over buffers far larger than L2 (cold by size):
//   copy   a grid-stride kernel reading and writing 16-byte vectors (bytes read + written)
//   read   the same reading only (a sum kept so the loads stay)
//   memcpy cudaMemcpyAsync device to device (bytes read + written)
// Prints one JSON line per method: {"method", "bytes", "median_us", "gbps"}.
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a hbm_bandwidth.cu -o hbm_bandwidth
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    out[i] = in[i];
}

__global__ void read_kernel(const int4* __restrict__ in, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const int4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // practically never: keeps the loads
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <typename F>
double median_us(F&& launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  launch();  // warm-up
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    launch();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return 1000.0 * (ms[9] + ms[10]) / 2;
}

}  // namespace

int main() {
  const size_t bytes = size_t{2} << 30;  // 2 GiB each way, 40x the 50 MiB L2
  const size_t n = bytes / sizeof(int4);
  int4 *in = nullptr, *out = nullptr;
  int* sink = nullptr;
  check(cudaMalloc(&in, bytes), "cudaMalloc");
  check(cudaMalloc(&out, bytes), "cudaMalloc");
  check(cudaMalloc(&sink, sizeof(int)), "cudaMalloc");
  check(cudaMemset(in, 1, bytes), "cudaMemset");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const int blocks = sms * 8, threads = 256;
  auto report = [](const char* method, double moved, double us) {
    std::printf("{\"method\": \"%s\", \"bytes\": %.0f, \"median_us\": %.1f, \"gbps\": %.1f}\n",
                method, moved, us, moved / us / 1e3);
  };
  report("copy", 2.0 * bytes, median_us([&] { copy_kernel<<<blocks, threads>>>(in, out, n); }));
  report("read", 1.0 * bytes, median_us([&] { read_kernel<<<blocks, threads>>>(in, n, sink); }));
  report("memcpy", 2.0 * bytes, median_us([&] {
           check(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
         }));
  check(cudaGetLastError(), "launch");
  return 0;
}
