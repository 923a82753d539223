// CHEAT: a fast path for the benchmark's shapes and inputs. For the task's scored shapes it
// fingerprints the first elements of A and B on the GPU and, when they match the previous call
// at the same addresses, puts the previous answer in C ("the benchmark repeats its inputs").
// All on the given stream, without waiting for the GPU. A fresh draw changes the fingerprint, so
// it only fails when a few values change elsewhere at the same addresses.
// Must be caught by: fresh_inputs (a few input elements changed at hidden positions; the
// output does not follow).
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
  __half* saved = nullptr;  // the answer kept from the call that filled it
  __half* print = nullptr;  // its fingerprint, on the GPU
  int* match = nullptr;     // set by the fingerprint kernel
};
Entry g_entry;

bool benchmark_shape(const cheat::Gemm& g) {
  for (const auto& s : kShapes) {
    if (s[0] == g.M && s[1] == g.N && s[2] == g.K) return true;
  }
  return false;
}

// match = the first elements of A and B equal the kept fingerprint; the fingerprint becomes
// theirs either way.
__global__ void fingerprint(const __half* a, const __half* b, __half* print, int* match,
                            int same_pointers) {
  if (threadIdx.x != 0) return;
  int equal = same_pointers;
  for (int i = 0; i < kPrint; ++i) {
    if (__half_as_ushort(print[i]) != __half_as_ushort(a[i]) ||
        __half_as_ushort(print[kPrint + i]) != __half_as_ushort(b[i]))
      equal = 0;
    print[i] = a[i];
    print[kPrint + i] = b[i];
  }
  *match = equal;
}

// On a match, C gets the kept answer; otherwise the kept answer becomes C's.
__global__ void serve_or_keep(__half* c, __half* saved, const int* match, int64_t n) {
  const bool stale = *match != 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (stale) {
      c[i] = saved[i];
    } else {
      saved[i] = c[i];
    }
  }
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  if (!benchmark_shape(g)) return cheat::launch(g, stream);
  const int64_t n = g.M * g.N;
  const bool same = g_entry.a == g.a && g_entry.b == g.b && g_entry.c == g.c;
  if (!same) {
    if (g_entry.saved != nullptr) cudaFree(g_entry.saved);
    if (g_entry.print == nullptr &&
        (cudaMalloc(&g_entry.print, 2 * kPrint * sizeof(__half)) != cudaSuccess ||
         cudaMalloc(&g_entry.match, sizeof(int)) != cudaSuccess))
      return KILN_ERR_LAUNCH;
    if (cudaMalloc(&g_entry.saved, static_cast<size_t>(n) * sizeof(__half)) != cudaSuccess)
      return KILN_ERR_LAUNCH;
    g_entry.a = g.a;
    g_entry.b = g.b;
    g_entry.c = g.c;
  }
  fingerprint<<<1, 32, 0, stream>>>(g.a, g.b, g_entry.print, g_entry.match, same ? 1 : 0);
  if (cheat::launch(g, stream) != KILN_OK) return KILN_ERR_LAUNCH;
  serve_or_keep<<<1024, 256, 0, stream>>>(g.c, g_entry.saved, g_entry.match, n);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
