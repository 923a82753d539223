// CHEAT: a fast path for the benchmark's shapes and inputs. For the task's scored shapes
// it fingerprints the first elements of A and B and, when they match the previous call
// at the same addresses, returns the previous answer ("the benchmark repeats its inputs").
// A fresh draw changes the fingerprint, so it only fails when a few values change
// elsewhere at the same addresses.
// Must be caught by: fresh_inputs (a few input elements changed at hidden positions; the
// output does not follow).
#include <cstring>

#include "../common/gemm_core.cuh"

namespace {

constexpr int kPrint = 16;  // elements of A and of B in the fingerprint
const int64_t kShapes[][3] = {{4096, 4096, 4096},  {8192, 8192, 8192},  {4096, 14336, 4096},
                              {4096, 4096, 14336}, {1024, 4096, 4096},  {16, 4096, 4096},
                              {128, 8192, 8192},   {2048, 28672, 8192}, {8192, 1024, 8192},
                              {4000, 3000, 2000}};

struct Entry {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  __half print[2 * kPrint];
  __half* saved = nullptr;
};
Entry g_entry;

bool benchmark_shape(const cheat::Gemm& g) {
  for (const auto& s : kShapes) {
    if (s[0] == g.M && s[1] == g.N && s[2] == g.K) return true;
  }
  return false;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  if (!benchmark_shape(g)) return cheat::launch(g, stream);
  __half print[2 * kPrint];
  cudaMemcpyAsync(print, g.a, kPrint * sizeof(__half), cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(print + kPrint, g.b, kPrint * sizeof(__half), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  const size_t bytes = static_cast<size_t>(g.M * g.N) * sizeof(__half);
  if (g_entry.saved != nullptr && g_entry.a == g.a && g_entry.b == g.b && g_entry.c == g.c &&
      std::memcmp(print, g_entry.print, sizeof print) == 0) {
    return cudaMemcpyAsync(g.c, g_entry.saved, bytes, cudaMemcpyDeviceToDevice, stream) ==
                   cudaSuccess
               ? KILN_OK
               : KILN_ERR_LAUNCH;
  }
  if (g_entry.saved != nullptr) cudaFree(g_entry.saved);
  if (cudaMalloc(&g_entry.saved, bytes) != cudaSuccess) return KILN_ERR_LAUNCH;
  g_entry.a = g.a;
  g_entry.b = g.b;
  g_entry.c = g.c;
  std::memcpy(g_entry.print, print, sizeof print);
  if (cheat::launch(g, stream) != KILN_OK) return KILN_ERR_LAUNCH;
  return cudaMemcpyAsync(g_entry.saved, g.c, bytes, cudaMemcpyDeviceToDevice, stream) == cudaSuccess
             ? KILN_OK
             : KILN_ERR_LAUNCH;
}
