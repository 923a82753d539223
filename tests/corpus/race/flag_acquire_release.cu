// The same flag publication with PTX's strong operations: relaxed store and load do not order
// the data; st.release / ld.acquire do.
__device__ void store_relaxed(int* p, int v) {
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ int load_relaxed(const int* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ void store_release(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ int load_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

extern "C" __global__ void flag_acquire_release_bug(int* data, int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    data[0] = 42;
    store_relaxed(flag, 1);
  } else {
    while (load_relaxed(flag) == 0) {
    }
    out[0] = data[0];
  }
}

extern "C" __global__ void flag_acquire_release_fixed(int* data, int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    data[0] = 42;
    store_release(flag, 1);
  } else {
    while (load_acquire(flag) == 0) {
    }
    out[0] = data[0];
  }
}
