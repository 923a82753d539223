// Flag publication between CTAs with scoped operations: block 0 writes data and raises a
// flag, block 1 waits for the flag and reads the data. A .cta fence (__threadfence_block) or a
// .cta release orders the data only for threads of block 0's own CTA, so block 1's read still
// races with the write (the scope is too narrow); .gpu (__threadfence, st.release.gpu) is what
// another CTA needs. Two bugs: fences of .cta scope around a volatile flag, and st.release.cta
// with ld.acquire.cta; the fixes use .gpu scope.
__device__ void store_release_cta(int* p, int v) {
  asm volatile("st.release.cta.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ int load_acquire_cta(const int* p) {
  int v;
  asm volatile("ld.acquire.cta.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ void store_release_gpu(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ int load_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <bool kGpuScope>
__device__ void fenced_flag(int* data, volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    data[0] = 42;
    if (kGpuScope) __threadfence();
    else __threadfence_block();
    *flag = 1;
  } else {
    while (*flag == 0) {
    }
    if (kGpuScope) __threadfence();
    else __threadfence_block();
    out[0] = data[0];
  }
}

template <bool kGpuScope>
__device__ void release_flag(int* data, int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    data[0] = 42;
    if (kGpuScope) store_release_gpu(flag, 1);
    else store_release_cta(flag, 1);
  } else {
    while ((kGpuScope ? load_acquire_gpu(flag) : load_acquire_cta(flag)) == 0) {
    }
    out[0] = data[0];
  }
}

extern "C" __global__ void flag_scope_fence_bug(int* data, volatile int* flag, int* out) {
  fenced_flag<false>(data, flag, out);
}
extern "C" __global__ void flag_scope_fence_fixed(int* data, volatile int* flag, int* out) {
  fenced_flag<true>(data, flag, out);
}
extern "C" __global__ void flag_scope_release_bug(int* data, int* flag, int* out) {
  release_flag<false>(data, flag, out);
}
extern "C" __global__ void flag_scope_release_fixed(int* data, int* flag, int* out) {
  release_flag<true>(data, flag, out);
}
