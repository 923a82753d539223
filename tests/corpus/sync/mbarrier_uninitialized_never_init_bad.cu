// kiln-sync: arch=sm_90a
// kiln-sync: expect=findings
// Block-wide exchange through an mbarrier: every thread stores a value, arrives on the mbarrier
// and waits for the phase before reading its neighbour's value. The mbarrier is never set up
// with mbarrier.init (its count and phase are garbage).
#include <cstdint>

extern "C" __global__ void mbar_exchange_no_init(const float* __restrict__ x,
                                                 float* __restrict__ y) {
  __shared__ float vals[256];
  __shared__ uint64_t bar;
  const unsigned tid = threadIdx.x;
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  vals[tid] = x[blockIdx.x * blockDim.x + tid];
  uint64_t state;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar_addr) : "memory");  // expect: mbarrier_uninitialized
  unsigned done = 0;
  while (!done) asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(bar_addr), "l"(state) : "memory");
  y[blockIdx.x * blockDim.x + tid] = vals[(tid + 1) % blockDim.x];
}
