// A TMA + wgmma pipelined GEMM step (one warpgroup, two stages): thread 0 refills a stage with
// cp.async.bulk once all four warps released it on its empty mbarrier. The bug releases the
// stage before wgmma.wait_group retires the wgmma that reads it, so the refill overwrites
// operands the tensor cores may still read. The second pair reads a stage with wgmma before
// the mbarrier phase its TMA copy completes.
#include <cstdint>

namespace {

constexpr int kStages = 2, kTiles = 4;
constexpr int kBytesA = 64 * 32, kBytesB = 8 * 32, kStageBytes = kBytesA + kBytesB;

__device__ uint32_t smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred p;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// One stage's A and B tiles, a plain bulk copy each, completing on `bar`.
__device__ void load_stage(uint32_t dst, const uint8_t* src, uint32_t bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kStageBytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(dst),
      "l"(src), "r"(kBytesA), "r"(bar)
      : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(dst + kBytesA),
      "l"(src + kBytesA), "r"(kBytesB), "r"(bar)
      : "memory");
}
// K-major, no swizzle: core matrices of 8 rows x 16 bytes, 128 bytes apart along K (LBO) and
// 256 bytes apart along M/N (SBO).
__device__ uint64_t desc(uint32_t addr) {
  return ((addr & 0x3ffff) >> 4) | (uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32);
}
__device__ void wgmma(float (&d)[4], uint32_t a, uint32_t b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, "
      "0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc(a)), "l"(desc(b)), "r"(accumulate)
      : "memory");
}
__device__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

template <bool kReleaseAfterWait>
__device__ void pipeline(const uint8_t* in, float* out) {
  __shared__ alignas(128) uint8_t stages[kStages][kStageBytes];
  __shared__ alignas(8) uint64_t full[kStages], empty[kStages];
  const int t = threadIdx.x, lane = t % 32;
  if (t == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem(&full[s]), 1);
      mbar_init(smem(&empty[s]), 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < kStages; ++s) {
      load_stage(smem(stages[s]), in + s * kStageBytes, smem(&full[s]));
    }
  }
  __syncthreads();
  float acc[4] = {0, 0, 0, 0};
  for (int kt = 0; kt < kTiles; ++kt) {
    const int s = kt % kStages;
    const uint32_t phase = (kt / kStages) & 1;
    mbar_wait(smem(&full[s]), phase);
    wgmma_fence();
    wgmma(acc, smem(stages[s]), smem(stages[s]) + kBytesA, kt > 0);
    wgmma_commit();
    if (!kReleaseAfterWait && lane == 0) mbar_arrive(smem(&empty[s]));  // too early
    wgmma_wait0();
    if (kReleaseAfterWait && lane == 0) mbar_arrive(smem(&empty[s]));
    if (t == 0 && kt + kStages < kTiles) {
      mbar_wait(smem(&empty[s]), phase);
      load_stage(smem(stages[s]), in + (kt + kStages) * kStageBytes, smem(&full[s]));
    }
    __syncwarp();
  }
  for (int i = 0; i < 4; ++i) out[t * 4 + i] = acc[i];
}

// One stage: the wgmma reads it after a __syncthreads() only (bug) or after the full phase.
template <bool kWait>
__device__ void read_before_phase(const uint8_t* in, float* out) {
  __shared__ alignas(128) uint8_t stage[kStageBytes];
  __shared__ alignas(8) uint64_t full;
  const int t = threadIdx.x;
  if (t == 0) {
    mbar_init(smem(&full), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    load_stage(smem(stage), in, smem(&full));
  }
  __syncthreads();
  if (kWait) mbar_wait(smem(&full), 0);
  float acc[4] = {0, 0, 0, 0};
  wgmma_fence();
  wgmma(acc, smem(stage), smem(stage) + kBytesA, 0);
  wgmma_commit();
  wgmma_wait0();
  for (int i = 0; i < 4; ++i) out[t * 4 + i] = acc[i];
  if (!kWait) mbar_wait(smem(&full), 0);  // leave no copy in flight at exit
}

}  // namespace

extern "C" __global__ void wgmma_pipeline_bug(const uint8_t* in, float* out) {
  pipeline<false>(in, out);
}
extern "C" __global__ void wgmma_pipeline_fixed(const uint8_t* in, float* out) {
  pipeline<true>(in, out);
}
extern "C" __global__ void wgmma_tma_wait_bug(const uint8_t* in, float* out) {
  read_before_phase<false>(in, out);
}
extern "C" __global__ void wgmma_tma_wait_fixed(const uint8_t* in, float* out) {
  read_before_phase<true>(in, out);
}
