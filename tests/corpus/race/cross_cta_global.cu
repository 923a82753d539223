// Two CTAs of one launch write one global word without atomics (CTAs are never ordered).
extern "C" __global__ void cross_cta_global_bug(int* out) {
  if (threadIdx.x == 0) out[0] = blockIdx.x;
}

extern "C" __global__ void cross_cta_global_fixed(int* out) {
  if (threadIdx.x == 0) atomicMax(&out[0], static_cast<int>(blockIdx.x));
}
