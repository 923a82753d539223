// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Elementwise product of two tiles staged with cp.async as two commit groups (A, then B).
// The fix: cp.async.wait_group 0 waits for both groups before the barrier and the reads.
extern "C" __global__ void product_wait_group_0(const float* __restrict__ a,
                                                const float* __restrict__ b,
                                                float* __restrict__ y) {
  __shared__ __align__(16) float sa[256];
  __shared__ __align__(16) float sb[256];
  const unsigned tid = threadIdx.x;  // blockDim.x == 256
  const unsigned i = blockIdx.x * 256 + tid;
  const unsigned dst_a = static_cast<unsigned>(__cvta_generic_to_shared(&sa[tid]));
  const unsigned dst_b = static_cast<unsigned>(__cvta_generic_to_shared(&sb[tid]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst_a), "l"(a + i) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(dst_b), "l"(b + i) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  const float va = sa[255 - tid];
  const float vb = sb[255 - tid];
  y[i] = va * vb;
}
