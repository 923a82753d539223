// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// Scale through shared memory unless the host set a "skip" flag. Every thread reads the same
// word (*skip) with a plain load, which the kernel never writes, so all threads take the same
// side unless the word changes while they read it: a warning (cause uniform_load_guard), not
// an error; the dynamic engine can tell whether the threads actually diverged. (No pointer is
// __restrict__, so nvcc cannot prove *skip read-only and emits a plain ld.global.)
extern "C" __global__ void scale_unless_skip(const int* skip, const float* x, float* y,
                                             float alpha) {
  __shared__ float tile[256];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + tid;
  if (*skip) return;
  tile[tid] = x[i];
  __syncthreads();  // expect: barrier_divergence warning
  y[i] = alpha * tile[blockDim.x - 1 - tid];
}
