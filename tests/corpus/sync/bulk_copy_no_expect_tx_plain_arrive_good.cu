// kiln-sync: arch=sm_90a
// kiln-sync: expect=clean
// Thread 0 loads a 4 KiB tile with cp.async.bulk completing on an mbarrier (count 1); all threads
// wait on it. The fix: thread 0 arrives with mbarrier.arrive.expect_tx of 4096 bytes, so the
// phase completes only when the copy's bytes have landed.
#include <cstdint>

extern "C" __global__ void bulk_tile_expect_tx(const float* __restrict__ x,
                                               float* __restrict__ y) {
  __shared__ __align__(128) float tile[1024];
  __shared__ uint64_t bar;
  const unsigned tid = threadIdx.x;
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const unsigned tile_addr = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(4096) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" :: "r"(tile_addr), "l"(x + blockIdx.x * 1024), "r"(4096), "r"(bar_addr) : "memory");
  }
  asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT;\n}" :: "r"(bar_addr) : "memory");
  for (unsigned k = tid; k < 1024; k += blockDim.x) y[blockIdx.x * 1024 + k] = 2.0f * tile[k];
}
