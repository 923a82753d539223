// TMA (cp.async.bulk.tensor) and mbarrier phases via inline asm (sm_90a).
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__global__ void tma_load(const __grid_constant__ CUtensorMap map, float* out, int tiles) {
  __shared__ alignas(128) float tile[2][64 * 64];
  __shared__ alignas(8) uint64_t full[2];
  int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < 2; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&full[s])), "r"(1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  float sum = 0.f;
  for (int i = 0; i < tiles; ++i) {
    int s = i & 1;
    uint32_t phase = (i >> 1) & 1;
    if (t == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&full[s])),
                   "r"(64 * 64 * 4));
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
          " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(&tile[s][0])),
          "l"(&map), "r"(0), "r"(i * 64), "r"(smem_addr(&full[s]))
          : "memory");
    }
    asm volatile(
        "{\n"
        "  .reg .pred P1;\n"
        "WAIT:\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "  @!P1 bra WAIT;\n"
        "}\n" ::"r"(smem_addr(&full[s])),
        "r"(phase)
        : "memory");
    sum += tile[s][t];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = sum;
  if (t == 0) {
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    uint64_t state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(smem_addr(&full[0])));
    out[0] += static_cast<float>(state & 1);
  }
}

__global__ void bulk_store(float* dst, int n) {
  __shared__ alignas(128) float buf[1024];
  buf[threadIdx.x] = static_cast<float>(threadIdx.x);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
                 "r"(smem_addr(buf)), "r"(n * 4)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}
