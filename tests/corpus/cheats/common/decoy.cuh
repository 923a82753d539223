// A kernel that does nothing but take time on the GPU: the part of a cheat left in the
// profiler's view while the real work hides.
#pragma once

namespace cheat {

__global__ void decoy(unsigned long long ns) {
  unsigned long long start = 0;
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace cheat
