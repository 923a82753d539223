// A global spin lock around a plain read-modify-write of a counter, one thread per CTA. The
// fixed kernel is correct code that must stay clean: atomicCAS takes the lock, __threadfence()
// after it and before the releasing atomicExch order the plain accesses. The bug has no fences,
// so the CTAs' plain accesses to the counter are not ordered by the lock.
template <bool kFences>
__device__ void locked_add(int* lock, int* counter) {
  if (threadIdx.x != 0) return;
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  if (kFences) __threadfence();
  *counter = *counter + 1;
  if (kFences) __threadfence();
  atomicExch(lock, 0);
}

extern "C" __global__ void spin_lock_bug(int* lock, int* counter) {
  locked_add<false>(lock, counter);
}
extern "C" __global__ void spin_lock_fixed(int* lock, int* counter) {
  locked_add<true>(lock, counter);
}
