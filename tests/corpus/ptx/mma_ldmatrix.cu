// ldmatrix + mma.sync m16n8k16 (sm_80), written with inline asm as hand-tuned kernels do.
#include <cuda_fp16.h>
#include <cstdint>

__global__ void mma_tile(const half* a, const half* b, float* c) {
  __shared__ alignas(16) half as[16 * 16];
  __shared__ alignas(16) half bs[16 * 8];
  int t = threadIdx.x;
  for (int i = t; i < 256; i += 32) as[i] = a[i];
  for (int i = t; i < 128; i += 32) bs[i] = b[i];
  __syncthreads();
  uint32_t a_frag[4], b_frag[2];
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  uint32_t a_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&as[(t % 16) * 16 + (t / 16) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a_frag[0]), "=r"(a_frag[1]), "=r"(a_frag[2]), "=r"(a_frag[3])
               : "r"(a_addr));
  uint32_t b_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&bs[(t % 16) * 8]));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(b_frag[0]), "=r"(b_frag[1])
               : "r"(b_addr));
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a_frag[0]), "r"(a_frag[1]), "r"(a_frag[2]), "r"(a_frag[3]), "r"(b_frag[0]),
        "r"(b_frag[1]));
  for (int i = 0; i < 4; ++i) c[t * 4 + i] = acc[i];
}

// A scoped-register inline asm block: the kind of `{ .reg ... }` nested scope nvcc passes through.
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  uint32_t r;
  asm("{\n"
      "  .reg .f16 l, h;\n"
      "  cvt.rn.f16.f32 l, %1;\n"
      "  cvt.rn.f16.f32 h, %2;\n"
      "  mov.b32 %0, {l, h};\n"
      "}\n"
      : "=r"(r)
      : "f"(lo), "f"(hi));
  return r;
}

__global__ void pack(const float* in, uint32_t* out) {
  int i = threadIdx.x;
  out[i] = pack_half2(in[2 * i], in[2 * i + 1]);
}
