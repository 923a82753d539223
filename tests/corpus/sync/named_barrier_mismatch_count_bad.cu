// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Warp-specialized hand-off, blockDim.x == 256: warps 0-3 stage a tile in shared memory and
// signal named barrier 1 with bar.arrive; warps 4-7 wait on it with bar.sync. Both sides must
// give barrier 1 the same count (256 = producers + consumers); the consumer side says 128.
extern "C" __global__ void handoff_count_mismatch(const float* __restrict__ x,
                                                  float* __restrict__ y) {
  __shared__ float stage[128];
  const unsigned tid = threadIdx.x;
  if (tid < 128) {  // warps 0-3: producers
    stage[tid] = x[blockIdx.x * 128 + tid] * 2.0f;
    asm volatile("bar.arrive 1, 256;" ::: "memory");
  } else {  // warps 4-7: consumers
    asm volatile("bar.sync 1, 128;" ::: "memory");  // expect: named_barrier_mismatch
    y[blockIdx.x * 128 + (tid - 128)] = stage[255 - tid];
  }
}
