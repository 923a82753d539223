// Flag publication between CTAs: block 0 writes data and raises a flag, block 1 waits for the
// flag and reads the data. Without fences the data is not ordered before the flag.
extern "C" __global__ void flag_fence_bug(int* data, volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    data[0] = 42;
    *flag = 1;
  } else {
    while (*flag == 0) {
    }
    out[0] = data[0];
  }
}

extern "C" __global__ void flag_fence_fixed(int* data, volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    data[0] = 42;
    __threadfence();
    *flag = 1;
  } else {
    while (*flag == 0) {
    }
    __threadfence();
    out[0] = data[0];
  }
}
