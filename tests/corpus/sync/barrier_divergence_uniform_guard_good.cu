// kiln-sync: arch=sm_80
// kiln-sync: expect=clean
// Scale through shared memory unless the host set a "skip" flag. The fix: the flag is read
// with __ldg (the read-only path, ld.global.nc), which states that it does not change while
// the kernel runs, so every thread sees one value and the early return is uniform.
extern "C" __global__ void scale_unless_skip_ldg(const int* skip, const float* x, float* y,
                                                 float alpha) {
  __shared__ float tile[256];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + tid;
  if (__ldg(skip)) return;
  tile[tid] = x[i];
  __syncthreads();
  y[i] = alpha * tile[blockDim.x - 1 - tid];
}
