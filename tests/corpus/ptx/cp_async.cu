// cp.async multistage copy (sm_80): commit groups, wait_group, zero-fill predicates.
#include <cuda_pipeline.h>
#include <cstdint>

constexpr int kStages = 3;

__global__ void staged_sum(const float4* in, float* out, int tiles) {
  __shared__ alignas(16) float4 buf[kStages][128];
  int t = threadIdx.x;
  float sum = 0.f;
  for (int s = 0; s < kStages - 1 && s < tiles; ++s) {
    __pipeline_memcpy_async(&buf[s][t], &in[s * 128 + t], sizeof(float4));
    __pipeline_commit();
  }
  for (int tile = 0; tile < tiles; ++tile) {
    int next = tile + kStages - 1;
    if (next < tiles) {
      uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&buf[next % kStages][t]));
      const float4* src = &in[next * 128 + t];
      int bytes = (t < 120) ? 16 : 0;  // zero-fill the tail
      asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));
    __syncthreads();
    float4 v = buf[tile % kStages][(t + 1) % 128];
    sum += v.x + v.y + v.z + v.w;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = sum;
}
