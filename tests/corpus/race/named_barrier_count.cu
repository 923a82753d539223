// A named barrier whose thread count (32) is smaller than the threads that use it (64): each
// warp passes it alone, so warp 1 reads what warp 0 writes unordered.
extern "C" __global__ void named_barrier_count_bug(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  asm volatile("bar.sync 1, 32;" ::: "memory");
  out[t] = s[63 - t];
}

extern "C" __global__ void named_barrier_count_fixed(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  asm volatile("bar.sync 1, 64;" ::: "memory");
  out[t] = s[63 - t];
}
