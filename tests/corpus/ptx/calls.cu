// Device functions, calls (direct, indirect, recursive), and local arrays that spill.
#include <cstdio>

__device__ __noinline__ float scale(float x, float s) { return x * s; }

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

struct Pair {
  float a;
  double b;
};

__device__ __noinline__ Pair make_pair(float a, double b) { return Pair{a, b}; }

typedef float (*unary_fn)(float);
__device__ float twice(float x) { return 2.f * x; }
__device__ float square(float x) { return x * x; }
__device__ unary_fn g_fns[2] = {twice, square};

__device__ __noinline__ void no_return_trap() { __trap(); }

__global__ void calls(const float* in, float* out, int which, int idx) {
  float local[64];  // dynamically indexed: lives in .local
  for (int i = 0; i < 64; ++i) local[i] = in[i * blockDim.x + threadIdx.x];
  float v = local[idx & 63];
  v = scale(v, 3.f);
  v += static_cast<float>(fib(which & 7));
  Pair p = make_pair(v, 1.0);
  v = static_cast<float>(p.a + p.b);
  v = g_fns[which & 1](v);
  if (v != v) no_return_trap();
  if (threadIdx.x == 0 && idx < 0) printf("v=%f which=%d\n", v, which);
  out[threadIdx.x] = v;
}
