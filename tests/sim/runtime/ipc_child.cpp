// The second process of the CUDA IPC tests (ipc_test.cpp): it opens a handle the test process
// exported, works on the memory as the candidate host would, and prints one line saying what
// happened ("ok", a number, or the name of the CUDA error and the step that returned it).
//
//   kiln_sim_ipc_child KERNELS.so fill HANDLE N VALUE   kernel writes value + i into the buffer
//   kiln_sim_ipc_child KERNELS.so copy HANDLE N VALUE   cudaMemcpy writes value + i
//   kiln_sim_ipc_child KERNELS.so sum HANDLE N          prints the sum of the first N ints
//   kiln_sim_ipc_child KERNELS.so open HANDLE           opens and closes once
//   kiln_sim_ipc_child KERNELS.so reopen HANDLE         opens twice, cudaFree (refused), closes
//                                                       twice, then once more (refused)
//   kiln_sim_ipc_child KERNELS.so export N              exports a buffer, prints its handle, exits
//   kiln_sim_ipc_child KERNELS.so confined HANDLE N VALUE shm|noshm
//                                                       as fill, confined first as kiln-worker
//                                                       confines its candidate host (Landlock,
//                                                       seccomp), with or without /dev/shm;
//                                                       prints "skip" without Landlock
//   kiln_sim_ipc_child KERNELS.so serve N VALUE         exports a buffer holding value + i, prints
//                                                       its handle; at a line on stdin frees it
//                                                       and prints "freed"; at the next, exits
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/base/confine.h"

namespace {

using Fill = int (*)(int*, int, int);

bool from_hex(const char* text, cudaIpcMemHandle_t* handle) {
  if (std::strlen(text) != 2 * sizeof *handle) return false;
  auto* bytes = reinterpret_cast<unsigned char*>(handle);
  for (size_t i = 0; i < sizeof *handle; ++i) {
    unsigned value = 0;
    if (std::sscanf(text + 2 * i, "%2x", &value) != 1) return false;
    bytes[i] = static_cast<unsigned char>(value);
  }
  return true;
}

int report(const char* step, cudaError_t error) {
  std::printf("%s at %s\n", cudaGetErrorName(error), step);
  return 1;
}

int run(const std::string& mode, const cudaIpcMemHandle_t& handle, int n, int value, Fill fill) {
  void* base = nullptr;
  if (cudaError_t e = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
      e != cudaSuccess)
    return report("open", e);
  int* data = static_cast<int*>(base);
  if (mode == "fill") {
    if (auto e = static_cast<cudaError_t>(fill(data, n, value)); e != cudaSuccess)
      return report("fill", e);
  } else if (mode == "copy") {
    std::vector<int> host(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) host[static_cast<size_t>(i)] = value + i;
    if (cudaError_t e =
            cudaMemcpy(data, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice);
        e != cudaSuccess)
      return report("copy", e);
  } else if (mode == "sum") {
    std::vector<int> host(static_cast<size_t>(n));
    if (cudaError_t e =
            cudaMemcpy(host.data(), data, host.size() * sizeof(int), cudaMemcpyDeviceToHost);
        e != cudaSuccess)
      return report("copy", e);
    long long sum = 0;
    for (int x : host) sum += x;
    std::printf("%lld\n", sum);
  } else if (mode == "reopen") {
    void* again = nullptr;
    if (cudaError_t e = cudaIpcOpenMemHandle(&again, handle, cudaIpcMemLazyEnablePeerAccess);
        e != cudaSuccess)
      return report("second open", e);
    if (again != base) return std::printf("second open gave another pointer\n"), 1;
    if (cudaError_t e = cudaFree(base); e != cudaErrorInvalidValue) return report("cudaFree", e);
    if (cudaError_t e = cudaIpcCloseMemHandle(again); e != cudaSuccess)
      return report("first close", e);
  }
  if (cudaError_t e = cudaIpcCloseMemHandle(base); e != cudaSuccess) return report("close", e);
  if (mode == "reopen") {
    if (cudaError_t e = cudaIpcCloseMemHandle(base); e != cudaErrorInvalidValue)
      return report("third close", e);
  }
  if (mode != "sum") std::printf("ok\n");
  return 0;
}

// Prints the handle of `base` as hex.
int print_handle(void* base) {
  cudaIpcMemHandle_t handle;
  if (cudaError_t e = cudaIpcGetMemHandle(&handle, base); e != cudaSuccess)
    return report("export", e);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&handle);
  for (size_t i = 0; i < sizeof handle; ++i) std::printf("%02x", bytes[i]);
  std::printf("\n");
  std::fflush(stdout);
  return 0;
}

// Exports a fresh buffer and exits without freeing it: the runtime must unlink it at exit.
int export_and_exit(int n) {
  void* base = nullptr;
  if (cudaError_t e = cudaMalloc(&base, static_cast<size_t>(n) * sizeof(int)); e != cudaSuccess)
    return report("malloc", e);
  return print_handle(base);
}

// Confines this process as kiln-worker confines its candidate host, then fills the buffer.
int confined(const cudaIpcMemHandle_t& handle, int n, int value, bool allow_shm, Fill fill) {
  if (kiln::landlock_abi_version() == 0) return std::printf("skip\n"), 0;
  kiln::ConfinePolicy policy = kiln::ConfinePolicy::for_cuda_process("");
  if (allow_shm) policy.writable.emplace_back("/dev/shm");
  auto confinement = kiln::confine_this_process(policy);
  if (!confinement) return std::printf("confine: %s\n", confinement.error().message.c_str()), 1;
  return run("fill", handle, n, value, fill);
}

// The exporting side in this process: the test process opens the handle, then this process
// frees the buffer while the mapping is still open there.
int serve(int n, int value) {
  void* base = nullptr;
  const size_t bytes = static_cast<size_t>(n) * sizeof(int);
  if (cudaError_t e = cudaMalloc(&base, bytes); e != cudaSuccess) return report("malloc", e);
  std::vector<int> host(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) host[static_cast<size_t>(i)] = value + i;
  if (cudaError_t e = cudaMemcpy(base, host.data(), bytes, cudaMemcpyHostToDevice);
      e != cudaSuccess)
    return report("copy", e);
  if (int status = print_handle(base); status != 0) return status;
  char line[64];
  if (std::fgets(line, sizeof line, stdin) == nullptr) return 1;
  if (cudaError_t e = cudaFree(base); e != cudaSuccess) return report("free", e);
  std::printf("freed\n");
  std::fflush(stdout);
  if (std::fgets(line, sizeof line, stdin) == nullptr) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s KERNELS.so MODE HANDLE|N [N [VALUE]]\n", argv[0]);
    return 2;
  }
  void* kernels = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (kernels == nullptr) return std::printf("dlopen: %s\n", dlerror()), 2;
  auto fill = reinterpret_cast<Fill>(dlsym(kernels, "sharing_fill"));
  const std::string mode = argv[2];
  if (mode == "export") return export_and_exit(std::atoi(argv[3]));
  if (mode == "serve") return serve(std::atoi(argv[3]), argc > 4 ? std::atoi(argv[4]) : 0);
  cudaIpcMemHandle_t handle;
  if (!from_hex(argv[3], &handle)) return std::printf("bad handle text\n"), 2;
  const int n = argc > 4 ? std::atoi(argv[4]) : 0;
  const int value = argc > 5 ? std::atoi(argv[5]) : 0;
  if (mode == "confined")
    return confined(handle, n, value, argc > 6 && std::string(argv[6]) == "shm", fill);
  return run(mode, handle, n, value, fill);
}
