// kiln-sync: arch=sm_80
// kiln-sync: expect=findings
// One warp per block computes a 16x8 f32 tile D = A*B with mma.sync m16n8k16 from pre-packed
// f16 fragments. Rows >= m are padding, and the agent skips the MMA in lanes whose accumulator
// rows are all padding: mma.sync.aligned then runs under intra-warp divergence.
#include <cstdint>

extern "C" __global__ void mma_skip_padding_rows(const uint4* __restrict__ a_frag,
                                                 const uint2* __restrict__ b_frag,
                                                 float* __restrict__ d, int m) {
  const unsigned lane = threadIdx.x % 32;
  const int row = static_cast<int>(lane / 4);  // this lane's rows: row and row + 8
  const uint4 a = a_frag[blockIdx.x * 32 + lane];
  const uint2 b = b_frag[blockIdx.x * 32 + lane];
  float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
  if (row < m) {  // the bug: depends on the lane
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));  // expect: collective_divergence
  }
  float* tile = d + blockIdx.x * 16 * 8;
  const int col = static_cast<int>(lane % 4) * 2;
  if (row < m) { tile[row * 8 + col] = d0; tile[row * 8 + col + 1] = d1; }
  if (row + 8 < m) { tile[(row + 8) * 8 + col] = d2; tile[(row + 8) * 8 + col + 1] = d3; }
}
