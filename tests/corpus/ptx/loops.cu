// Loops whose trip counts depend on the thread, and loops that do not.
__global__ void triangle(const float* in, float* out, int n) {
  int t = threadIdx.x;
  float acc = 0.f;
#pragma unroll 1
  for (int i = 0; i < t; ++i) acc += in[i];  // trip count = threadIdx.x: divergent
  float acc2 = 0.f;
#pragma unroll 1
  for (int j = 0; j < n; ++j) acc2 += in[j] * 2.f;  // uniform trip count
  int k = t;
  while (k > 1) k = (k & 1) ? 3 * k + 1 : k / 2;  // data-dependent loop exit
  out[blockIdx.x * blockDim.x + t] = acc + acc2 + k;
}

__global__ void nested(const int* in, int* out, int rows, int cols) {
  int sum = 0;
#pragma unroll 1
  for (int r = 0; r < rows; ++r) {
#pragma unroll 1
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      if (in[r * cols + c] < 0) break;
      sum += in[r * cols + c];
    }
  }
  out[threadIdx.x] = sum;
}
