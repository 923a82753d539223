// TMA stores (cp.async.bulk shared -> global, bulk async-groups). The first pair writes the
// source tile and lets thread 0 store it after a __syncthreads() but without
// fence.proxy.async.shared::cta; the second overwrites the source for the next round before
// thread 0's cp.async.bulk.wait_group.read; the third reads the stored global output before the
// store's group completed.
#include <cstdint>

namespace {

constexpr int kBytes = 1024;

__device__ uint32_t smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ void store(int* out, const int* tile) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out),
               "r"(smem(tile)), "r"(kBytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ void wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ void wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

template <bool kFence>
__device__ void fence_before_store(const int* in, int* out) {
  __shared__ alignas(128) int tile[kBytes / 4];
  int t = threadIdx.x;
  tile[t] = in[t] + 1;
  if (kFence) proxy_fence();
  __syncthreads();
  if (t == 0) {
    store(out, tile);
    wait_all();
  }
}

template <bool kWaitRead>
__device__ void reuse_source(const int* in, int* out) {
  __shared__ alignas(128) int tile[kBytes / 4];
  int t = threadIdx.x;
  for (int round = 0; round < 2; ++round) {
    tile[t] = in[t] + round;
    proxy_fence();
    __syncthreads();
    if (t == 0) {
      store(out + round * (kBytes / 4), tile);
      if (kWaitRead) wait_read();
    }
    __syncthreads();
  }
  if (t == 0) wait_all();
}

template <bool kWait>
__device__ void read_output(const int* in, int* out, int* copy) {
  __shared__ alignas(128) int tile[kBytes / 4];
  int t = threadIdx.x;
  tile[t] = in[t] * 2;
  proxy_fence();
  __syncthreads();
  if (t == 0) {
    store(out, tile);
    if (kWait) wait_all();
  }
  __syncthreads();
  copy[t] = out[(t + 1) % (kBytes / 4)];
  if (!kWait && t == 0) wait_all();
}

}  // namespace

extern "C" __global__ void tma_store_fence_bug(const int* in, int* out) {
  fence_before_store<false>(in, out);
}
extern "C" __global__ void tma_store_fence_fixed(const int* in, int* out) {
  fence_before_store<true>(in, out);
}
extern "C" __global__ void tma_store_reuse_bug(const int* in, int* out) {
  reuse_source<false>(in, out);
}
extern "C" __global__ void tma_store_reuse_fixed(const int* in, int* out) {
  reuse_source<true>(in, out);
}
extern "C" __global__ void tma_store_read_bug(const int* in, int* out, int* copy) {
  read_output<false>(in, out, copy);
}
extern "C" __global__ void tma_store_read_fixed(const int* in, int* out, int* copy) {
  read_output<true>(in, out, copy);
}
