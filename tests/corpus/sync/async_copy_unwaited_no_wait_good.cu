// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Reverse a 256-float tile staged in shared memory with cp.async (4 bytes per thread). The fix:
// cp.async.wait_group 0 waits for this thread's copies, then __syncthreads() publishes them.
extern "C" __global__ void reverse_cp_async_wait(const float* __restrict__ x,
                                                 float* __restrict__ y) {
  __shared__ __align__(16) float tile[256];
  const unsigned tid = threadIdx.x;  // blockDim.x == 256
  const unsigned i = blockIdx.x * 256 + tid;
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[tid]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(x + i) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  y[i] = tile[255 - tid];
}
