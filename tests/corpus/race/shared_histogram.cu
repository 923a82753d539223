// A shared-memory histogram built with atomicAdd and copied out; the atomics only exclude each
// other, so reading the bins needs a __syncthreads() after the last update.
template <bool kSync>
__device__ void histogram(const int* in, int* out) {
  __shared__ int bins[16];
  int t = threadIdx.x;
  if (t < 16) bins[t] = 0;
  __syncthreads();
  atomicAdd(&bins[in[t] & 15], 1);
  if (kSync) __syncthreads();
  if (t < 16) out[t] = bins[t];
}

extern "C" __global__ void shared_histogram_bug(const int* in, int* out) {
  histogram<false>(in, out);
}
extern "C" __global__ void shared_histogram_fixed(const int* in, int* out) {
  histogram<true>(in, out);
}
