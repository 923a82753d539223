// Device functions kept out of line (__noinline__) so nvcc emits .func, call and ret:
// compiled to PTX at build time for call_ops_test.cpp.
__device__ __noinline__ float scale(float x, float s) { return x * s + 1.0f; }

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ void store_twice(int* p, int v) {
  if (v % 2 == 0) return;  // lanes leave the function at different points
  p[0] = 2 * v;
}

extern "C" __global__ void calls(const float* in, float* out, int* fibs, int* odd) {
  int t = threadIdx.x;
  out[t] = scale(in[t], 2.0f);
  fibs[t] = fib(t % 13);
  store_twice(odd + t, t);
}
