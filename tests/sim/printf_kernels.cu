// Kernels that call device printf, compiled to PTX (nvcc -ptx) at build time for
// printf_ops_test.cpp, which formats the text it expects from the same values itself.
#include <cstdio>

// One thread prints every conversion kind; ret[] gets printf's return values.
extern "C" __global__ void print_types(int i, long long ll, unsigned u, unsigned long long ull,
                                       float f, double d, const char* s, int* ret) {
  ret[0] = printf("i=%d %i u=%u x=%x X=%X o=%o c=%c ll=%lld ull=%llu ld=%ld lu=%lu\n", i, i, u, u,
                  u, u, 'A' + (i & 15), ll, ull, static_cast<long>(ll),
                  static_cast<unsigned long>(ull));
  ret[1] = printf("f=%f e=%e g=%g E=%E G=%G a=%a %.3f %10.4f|%-10.2e|%+d|% d|%05d|%#x|%#o\n", f,
                  d, f, d, d, d, f, d, d, i, i, i, u, u);
  ret[2] = printf("%%literal %s and %s|%-6s|%8s|%.2s", "a constant", s, "ab", s, s);
  ret[3] = printf("no arguments\n");
  ret[4] = printf("%*d|%-*d|%hd|%p\n", 6, i, 6, i, static_cast<short>(i),
                  static_cast<void*>(nullptr));
}

// Forms CUDA's device side does not copy a value for (hh, a '.*' precision, unknown letters),
// a null string and pointer.
extern "C" __global__ void print_quirks(int* ret) {
  ret[0] = printf("%hhd|%d|%d|%d\n", 1, 2, 3, 4);
  ret[1] = printf("%.*f|%d\n", 2, 1.5, 7);
  ret[2] = printf("%k|%5%|%d\n", 7);
  ret[3] = printf("%s|%c|%p\n", static_cast<const char*>(nullptr), 'x', static_cast<void*>(nullptr));
}

// Every thread prints; threads with t % 3 == 1 print a second line from a divergent branch.
extern "C" __global__ void print_per_thread(int scale) {
  int t = threadIdx.x;
  printf("block %d thread %2d: %d\n", blockIdx.x, t, t * scale);
  if (t % 3 == 1) printf("  t=%d took the branch, %f\n", t, t * 0.5f);
}

// 33 arguments: CUDA's printf takes 32, the 33rd conversion prints as written.
extern "C" __global__ void print_many(int* ret) {
  ret[0] = printf(
      "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d "
      "%d %d %d\n",
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
      27, 28, 29, 30, 31, 32, 33);
}

// Prints the string its argument points to (the test passes an address nothing is at).
extern "C" __global__ void print_string(const char* s) { printf("[%s]\n", s); }
