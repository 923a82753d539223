// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Reverse a 256-float tile staged in shared memory with cp.async (4 bytes per thread). The group
// is committed but never waited on: __syncthreads() does not wait for async copies, so the read
// may see shared memory before the copy lands.
extern "C" __global__ void reverse_cp_async_no_wait(const float* __restrict__ x,
                                                    float* __restrict__ y) {
  __shared__ __align__(16) float tile[256];
  const unsigned tid = threadIdx.x;  // blockDim.x == 256
  const unsigned i = blockIdx.x * 256 + tid;
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[tid]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst), "l"(x + i) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  __syncthreads();
  y[i] = tile[255 - tid];  // expect: async_copy_unwaited
}
