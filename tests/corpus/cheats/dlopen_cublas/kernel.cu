// CHEAT: cuBLAS behind dlopen. No cuBLAS symbol appears in the object; the library is
// loaded at run time and its GEMM looked up by name, to slip past a link-time check.
// Must be caught by: banned_symbols (dlopen and dlsym are refused for every candidate).
#include <dlfcn.h>

#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  static void* library = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return cheat::launch(g, stream);
  using Create = int (*)(void**);
  static void* handle = nullptr;
  if (handle == nullptr) reinterpret_cast<Create>(dlsym(library, "cublasCreate_v2"))(&handle);
  return cheat::launch(g, stream);  // (the real cheat would call cublasGemmEx through dlsym here)
}
