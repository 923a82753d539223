// kiln-sync: arch=sm_90a
// kiln-sync: expect=findings
// One warp per block stores its 8x8 b16 fragment (one register per lane) to shared memory with
// stmatrix.x1 and copies the tile out. Only lanes 0-7 supply row addresses for .x1, so the agent
// guards the stmatrix with `lane < 8`; stmatrix is .sync.aligned and needs all 32 lanes.
extern "C" __global__ void stmatrix_x1_lane_guard(const unsigned* __restrict__ frag,
                                                  unsigned* __restrict__ out) {
  __shared__ __align__(16) unsigned short tile[8 * 8];
  const unsigned lane = threadIdx.x % 32;
  const unsigned r = frag[blockIdx.x * 32 + lane];
  if (lane < 8) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(&tile[lane * 8]));
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r) : "memory");  // expect: collective_divergence
  }
  __syncwarp();
  out[blockIdx.x * 32 + lane] = reinterpret_cast<const unsigned*>(tile)[lane];
}
