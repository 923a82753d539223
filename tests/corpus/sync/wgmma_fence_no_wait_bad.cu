// kiln-sync: arch=sm_90a
// kiln-sync: expect=findings
// One warpgroup computes a 64x8 f32 tile D = A*B with wgmma m64n8k16 (A in registers, B in
// shared memory via a descriptor). The group is committed but never waited on with
// wgmma.wait_group, so the stores read the accumulators while the wgmma is still in flight.
#include <cstdint>
#include <cuda_fp16.h>

extern "C" __global__ void wgmma_missing_wait(const uint4* __restrict__ a_frag,
                                              const __half* __restrict__ b, float* __restrict__ d) {
  __shared__ __align__(128) __half sb[2 * 8 * 8];  // B^T as two 8x8 core matrices (k 0-7, 8-15)
  const unsigned tid = threadIdx.x;                 // blockDim.x == 128: one warpgroup
  const unsigned n = tid / 16, k = tid % 16;        // B is 16 (k) x 8 (n), row-major in global
  sb[(k / 8) * 64 + n * 8 + k % 8] = b[blockIdx.x * 128 + k * 8 + n];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // smem writes -> async proxy
  __syncthreads();
  const uint64_t sb_addr = static_cast<uint64_t>(__cvta_generic_to_shared(sb));
  // K-major, no swizzle: start >> 4, leading byte offset 128 (next core matrix in k) >> 4,
  // stride byte offset 256 >> 4.
  const uint64_t desc_b = ((sb_addr & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(256 >> 4) << 32);
  const uint4 a = a_frag[blockIdx.x * 128 + tid];  // A 64x16 f16, pre-packed fragments
  float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %9, 0;\n wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1, 0;\n}" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "l"(desc_b), "r"(1));  // expect: wgmma_fence
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  const unsigned warp = tid / 32, lane = tid % 32;  // D fragment: rows warp*16 + lane/4 (+8)
  const unsigned row = warp * 16 + lane / 4, col = (lane % 4) * 2;
  float* tile = d + blockIdx.x * 64 * 8;
  tile[row * 8 + col] = d0;
  tile[row * 8 + col + 1] = d1;
  tile[(row + 8) * 8 + col] = d2;
  tile[(row + 8) * 8 + col + 1] = d3;
}
