// Each CTA writes its slice of the output, but the bug's slice bound is one element too long,
// so neighbouring CTAs both write the element at the seam.
template <int kExtra>
__device__ void fill(int* out) {
  int begin = blockIdx.x * 64;
  for (int i = begin + threadIdx.x; i < begin + 64 + kExtra; i += blockDim.x) out[i] = i;
}

extern "C" __global__ void block_overlap_bug(int* out) { fill<1>(out); }
extern "C" __global__ void block_overlap_fixed(int* out) { fill<0>(out); }
