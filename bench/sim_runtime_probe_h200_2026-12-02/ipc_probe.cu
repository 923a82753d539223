// Probe of CUDA runtime behaviours the simulated runtime mirrors (engines/sim/runtime/README.md).
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
extern char** environ;
#define NAME(e) cudaGetErrorName(e)
static void child(const char* file) {
  cudaIpcMemHandle_t h;
  FILE* f = fopen(file, "rb");
  fread(&h, sizeof h, 1, f);
  fclose(f);
  void* p = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
  printf("\"child_open\": \"%s\",\n", NAME(e));
  void* q = nullptr;
  cudaError_t e2 = cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess);
  printf("\"child_reopen\": \"%s\", \"child_reopen_same_ptr\": %d,\n", NAME(e2), p == q);
  printf("\"child_close1\": \"%s\",\n", NAME(cudaIpcCloseMemHandle(p)));
  printf("\"child_close2\": \"%s\",\n", NAME(cudaIpcCloseMemHandle(q)));
  printf("\"child_close3\": \"%s\",\n", NAME(cudaIpcCloseMemHandle(q)));
  cudaGetLastError();
  cudaIpcMemHandle_t g;
  memset(&g, 0x5a, sizeof g);
  printf("\"child_open_garbage\": \"%s\",\n",
         NAME(cudaIpcOpenMemHandle(&q, g, cudaIpcMemLazyEnablePeerAccess)));
  cudaGetLastError();
  void* m;
  cudaMalloc(&m, 256);
  printf("\"child_close_not_ipc\": \"%s\",\n", NAME(cudaIpcCloseMemHandle(m)));
  cudaGetLastError();
  printf("\"child_bad_flags\": \"%s\"\n", NAME(cudaIpcOpenMemHandle(&q, h, 0x10)));
  cudaGetLastError();
}
int main(int argc, char** argv) {
  if (argc == 3) {
    child(argv[2]);
    return 0;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf(
      "{\n\"name\": \"%s\", \"l2\": %d, \"persistingL2CacheMaxSize\": %d, "
      "\"accessPolicyMaxWindowSize\": %d,\n",
      prop.name, prop.l2CacheSize, prop.persistingL2CacheMaxSize, prop.accessPolicyMaxWindowSize);
  size_t v = 0;
  cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize);
  printf("\"persisting_default\": %zu,\n", v);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1);
  cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize);
  printf("\"persisting_after_set_1\": %zu,\n", v);
  cudaError_t e =
      cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)prop.persistingL2CacheMaxSize + 1);
  cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize);
  printf("\"persisting_set_above_max\": \"%s\", \"persisting_after_above\": %zu,\n", NAME(e), v);
  cudaGetLastError();
  cudaCtxResetPersistingL2Cache();
  cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize);
  printf("\"persisting_after_reset\": %zu,\n", v);
  int lo, hi;
  cudaDeviceGetStreamPriorityRange(&lo, &hi);
  printf("\"priority_range\": [%d, %d],\n", lo, hi);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaLaunchAttributeValue a;
  memset(&a, 0, sizeof a);
  e = cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &a);
  printf("\"sync_policy_unset\": %d, \"sync_policy_err\": \"%s\",\n", (int)a.syncPolicy, NAME(e));
  char bus[12];
  e = cudaDeviceGetPCIBusId(bus, sizeof bus, 0);
  printf("\"pci_bus_id_len12\": \"%s\",\n", NAME(e));
  cudaGetLastError();
  void* p;
  cudaMalloc(&p, 1 << 20);
  cudaIpcMemHandle_t h;
  e = cudaIpcGetMemHandle(&h, p);
  printf("\"get_handle\": \"%s\",\n", NAME(e));
  cudaIpcMemHandle_t h2;
  e = cudaIpcGetMemHandle(&h2, (char*)p + 4096);
  printf("\"get_handle_inner_ptr\": \"%s\", \"inner_same_handle\": %d,\n", NAME(e),
         memcmp(&h, &h2, sizeof h) == 0);
  cudaGetLastError();
  void* q;
  e = cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess);
  printf("\"open_own_handle\": \"%s\",\n", NAME(e));
  cudaGetLastError();
  void* pa = nullptr;
  cudaMallocAsync(&pa, 4096, s);
  cudaStreamSynchronize(s);
  cudaIpcMemHandle_t h3;
  e = cudaIpcGetMemHandle(&h3, pa);
  printf("\"get_handle_malloc_async\": \"%s\",\n", NAME(e));
  cudaGetLastError();
  FILE* f = fopen(argv[1], "wb");
  fwrite(&h, sizeof h, 1, f);
  fclose(f);
  fflush(stdout);
  pid_t pid;
  char* args[] = {argv[0], (char*)"child", argv[1], nullptr};
  posix_spawn(&pid, argv[0], nullptr, nullptr, args, environ);
  int status;
  waitpid(pid, &status, 0);
  printf(",\"child_status\": %d\n}\n", status);
  return 0;
}
