// kiln-sync: arch=sm_90a
// kiln-sync: expect=clean
// Thread 0 initializes an mbarrier (count 1), computes a block scale and arrives; every thread
// waits on the phase and then reads the scale. The fix: a __syncthreads() right after the init
// makes it visible to every thread before any of them polls the mbarrier.
#include <cstdint>

extern "C" __global__ void scale_wait_published_init(const float* __restrict__ x,
                                                     const float* __restrict__ scales,
                                                     float* __restrict__ y) {
  __shared__ float s_scale;
  __shared__ uint64_t bar;
  const unsigned tid = threadIdx.x;
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  if (tid == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
  __syncthreads();
  if (tid == 0) {
    s_scale = 1.0f / scales[blockIdx.x];
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar_addr) : "memory");
  }
  asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT;\n}" :: "r"(bar_addr) : "memory");
  const unsigned i = blockIdx.x * blockDim.x + tid;
  y[i] = x[i] * s_scale;
}
