// A counter updated with atomicAdd by most threads and reset with a plain store by one thread of
// another warp: the plain store races with the atomics (atomics only exclude each other).
extern "C" __global__ void atomic_vs_plain_bug(int* counter) {
  if (threadIdx.x == 0) {
    *counter = 100;
  } else if (threadIdx.x >= 32) {
    atomicAdd(counter, 1);
  }
}

extern "C" __global__ void atomic_vs_plain_fixed(int* counter) {
  if (threadIdx.x == 0) {
    atomicExch(counter, 100);
  } else if (threadIdx.x >= 32) {
    atomicAdd(counter, 1);
  }
}
