// wgmma.mma_async reading operands the threads wrote to shared memory themselves. The first
// pair overwrites the operands for the next step while the previous wgmma group is still
// pending (no wgmma.wait_group before the writes); the second writes them and issues the wgmma
// after a __syncthreads() but without fence.proxy.async, so the async proxy may read stale
// bytes.
#include <cstdint>

namespace {

constexpr int kBytesA = 64 * 32, kBytesB = 8 * 32, kBytes = kBytesA + kBytesB;

__device__ uint32_t smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ uint64_t desc(uint32_t addr) {
  return ((addr & 0x3ffff) >> 4) | (uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32);
}
__device__ void wgmma(float (&d)[4], uint32_t a, uint32_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, "
      "0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc(a)), "l"(desc(b)), "r"(accumulate)
      : "memory");
}
__device__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// The 128 threads copy one step's operands (16 bytes each, twice at most) from global memory.
__device__ void fill(uint4* tile, const uint4* in) {
  for (int i = threadIdx.x; i < kBytes / 16; i += blockDim.x) tile[i] = in[i];
}

template <bool kWaitBeforeRefill>
__device__ void overwrite(const uint4* in, float* out) {
  __shared__ alignas(128) uint4 tile[kBytes / 16];
  float acc[4] = {0, 0, 0, 0};
  for (int step = 0; step < 2; ++step) {
    fill(tile, in + step * (kBytes / 16));
    proxy_fence();
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    wgmma(acc, smem(tile), smem(tile) + kBytesA, step);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    if (kWaitBeforeRefill) {
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      __syncthreads();  // every warp's wgmma is done before anyone refills
    }
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = acc[i];
}

template <bool kFence>
__device__ void unfenced(const uint4* in, float* out) {
  __shared__ alignas(128) uint4 tile[kBytes / 16];
  fill(tile, in);
  if (kFence) proxy_fence();
  __syncthreads();
  float acc[4] = {0, 0, 0, 0};
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  wgmma(acc, smem(tile), smem(tile) + kBytesA, 0);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = acc[i];
}

}  // namespace

extern "C" __global__ void wgmma_overwrite_bug(const uint4* in, float* out) {
  overwrite<false>(in, out);
}
extern "C" __global__ void wgmma_overwrite_fixed(const uint4* in, float* out) {
  overwrite<true>(in, out);
}
extern "C" __global__ void wgmma_proxy_fence_bug(const uint4* in, float* out) {
  unfenced<false>(in, out);
}
extern "C" __global__ void wgmma_proxy_fence_fixed(const uint4* in, float* out) {
  unfenced<true>(in, out);
}
