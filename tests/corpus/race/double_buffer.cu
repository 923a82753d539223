// Double buffering with one barrier per step: step k reads buffer k % 2 (a neighbour's
// element) and fills buffer (k + 1) % 2 for the next step. The bug's off-by-one fills the
// buffer that is being read in the same step.
template <bool kFixed>
__device__ void steps(const float* in, float* out) {
  __shared__ float buffer[2][128];
  int t = threadIdx.x;
  buffer[0][t] = in[t];
  __syncthreads();
  float acc = 0;
  for (int k = 0; k < 4; ++k) {
    int next = kFixed ? (k + 1) % 2 : k % 2;
    buffer[next][t] = in[(k + 1) * 128 + t];
    acc += buffer[k % 2][(t + 1) % 128];
    __syncthreads();
  }
  out[t] = acc;
}

extern "C" __global__ void double_buffer_bug(const float* in, float* out) { steps<false>(in, out); }
extern "C" __global__ void double_buffer_fixed(const float* in, float* out) {
  steps<true>(in, out);
}
