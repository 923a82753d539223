// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// 32x32 tile transpose staged with 16-byte cp.async.cg copies (256 threads, 4 floats each).
// Each thread waits for its own copies with cp.async.wait_all, then reads elements other threads
// copied: without a __syncthreads() after the wait, their copies may not have landed.
extern "C" __global__ void transpose_cp_async_no_barrier(const float* __restrict__ x,
                                                         float* __restrict__ y) {
  __shared__ __align__(16) float tile[32][32];
  const unsigned tid = threadIdx.x;  // blockDim.x == 256
  const unsigned r = tid / 8, c = (tid % 8) * 4;
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[r][c]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(x + blockIdx.x * 1024 + r * 32 + c) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  float* out = y + blockIdx.x * 1024 + r * 32 + c;
#pragma unroll
  for (unsigned k = 0; k < 4; ++k) {
    out[k] = tile[c + k][r];  // expect: async_copy_unwaited
  }
}
