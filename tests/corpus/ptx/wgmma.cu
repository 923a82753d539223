// wgmma.mma_async and setmaxnreg in a warp-specialized kernel (sm_90a), via inline asm.
#include <cstdint>

__device__ __forceinline__ uint64_t make_desc(const void* smem) {
  uint64_t addr = static_cast<uint64_t>(__cvta_generic_to_shared(smem));
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(64) << 32) | (uint64_t(1) << 62);
}

__global__ void __launch_bounds__(384, 1) wgmma_kernel(float* out) {
  __shared__ alignas(1024) uint16_t a[64 * 64];
  __shared__ alignas(1024) uint16_t b[64 * 64];
  int warpgroup = threadIdx.x / 128;
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
    a[i] = static_cast<uint16_t>(i);
    b[i] = static_cast<uint16_t>(i * 3);
  }
  __syncthreads();
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  uint64_t da = make_desc(a), db = make_desc(b);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(0));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(0) : "memory");
  for (int i = 0; i < 32; ++i) out[(threadIdx.x - 128) * 32 + i] = d[i];
}
