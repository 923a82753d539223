// kiln-sync: arch=sm_90a
// kiln-sync: expect=clean
// Two exchange rounds, each on its own mbarrier (bar_load, bar_scale). The fix: the second init
// names bar_scale, so both mbarriers are initialized before the __syncthreads().
#include <cstdint>

extern "C" __global__ void two_rounds_init_both(const float* __restrict__ x,
                                                float* __restrict__ y) {
  __shared__ float vals[256], scaled[256];
  __shared__ uint64_t bar_load, bar_scale;
  const unsigned tid = threadIdx.x;
  const unsigned load_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar_load));
  const unsigned scale_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar_scale));
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(load_addr), "r"(blockDim.x) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(scale_addr), "r"(blockDim.x) : "memory");
  }
  __syncthreads();
  vals[tid] = x[blockIdx.x * blockDim.x + tid];
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(load_addr) : "memory");
  asm volatile("{\n .reg .pred p;\n WAIT_LOAD:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT_LOAD;\n}" :: "r"(load_addr) : "memory");
  scaled[tid] = 2.0f * vals[(tid + 1) % blockDim.x];
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(scale_addr) : "memory");
  asm volatile("{\n .reg .pred p;\n WAIT_SCALE:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT_SCALE;\n}" :: "r"(scale_addr) : "memory");
  y[blockIdx.x * blockDim.x + tid] = scaled[(tid + 2) % blockDim.x];
}
