// attention_fwd baseline: kiln's best attention kernel, kb/zoo/attention_hopper_wgmma, as it
// stands (the same kernel.cu below this comment; keep the two in step). cuDNN's fused
// attention is not used: see README.md, "Scoring". The task calls it with Q, K, V, O, LSE and
// the one scalar causal, so it takes the scale 1/sqrt(D) and writes the log-sum-exp.
//
// attention_hopper_wgmma: FlashAttention-style forward pass on Hopper (sm_90a).
//
//   O = softmax(Q K^T * scale, causal mask) V     Q, K, V, O: [B, H, S, D], fp16 or bf16
//
// One CTA computes 128 query rows of one (batch, head) with two warpgroups of 64 rows
// each. Keys and values stream through a two-stage shared-memory ring in blocks of 128:
//   S = Q K^T    wgmma m64n128k16, both operands from shared memory, K-major (Q's and K's
//                rows are contiguous in D, which is the reduction dimension);
//   online softmax in fp32 registers: running row maximum m and row sum l, exp2 with
//                scale * log2(e) folded in, O rescaled by exp2(m_old - m_new);
//   O += P V     wgmma m64nDk16 with P taken from registers as the A operand (the
//                accumulator layout of S is, pair by pair, the A-fragment layout, so P is
//                only converted to 16-bit and packed) and V from shared memory. V's rows
//                are contiguous in D, which is N here, so V is an MN-major operand:
//                transpose flag 1 and an MN-major descriptor.
// All tiles arrive by TMA with 128B swizzle; a row of D = 128 is two 64-column boxes.
// Thread 0 issues the loads: Q once, then K/V block j+2 into the stage that block j
// used, as soon as all eight warps have released it (mbarrier "empty", count 8).
// With the causal mask a CTA visits only key blocks up to its own diagonal block and
// masks inside that block; CTAs are issued heaviest-first.
//
// Constraints (KILN_ERR_UNSUPPORTED otherwise): Q, K, V, O contiguous [B, H, S, D] with
// identical shapes; D = 64 or 128; S a multiple of 128; B*H*S < 2^31; 16-byte aligned
// bases. Scalars: causal (i64, 0 or 1), scale (f64); or, as a candidate of the task
// tasks/attention_fwd, the scalar causal alone with scale 1/sqrt(D), bf16, and the row
// log-sum-exp written to a fifth tensor LSE (see kiln_launch).
#include <cuda.h>          // CUtensorMap and its enums (types only; libcuda is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kBlockM = 128;  // query rows per CTA (two warpgroups x 64)
constexpr int kBlockN = 128;  // keys per K/V block
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kBoxBytes = 128 * 128;  // one 128-row x 64-column box of 16-bit elements

// Shared memory for head dimension D: Q (D/64 boxes), then two stages of K and V.
template <int D>
struct Layout {
  static constexpr int kColumnBlocks = D / 64;
  static constexpr int kTileBytes = kColumnBlocks * kBoxBytes;  // Q, K or V tile
  static constexpr int kQ = 0;
  static constexpr int kK = kTileBytes;             // + stage * 2 * kTileBytes
  static constexpr int kV = 2 * kTileBytes;         // + stage * 2 * kTileBytes
  static constexpr int kStageStride = 2 * kTileBytes;
  static constexpr int kBarriers = 5 * kTileBytes;  // q_full, k_full[2], v_full[2], empty[2]
  static constexpr int kSmemBytes = 1024 + kBarriers + 8 * 8;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory budget");
};

// ---------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// K-major operand, 128B swizzle (Q and K): rows of 128 bytes, 8-row groups 1024 bytes
// apart (stride byte offset); the leading byte offset is unused (1).
__device__ __forceinline__ uint64_t make_desc_k_sw128(uint32_t addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>(1) << 16;
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;
  return desc;
}

// MN-major operand, 128B swizzle (V as the B operand of P V: N = D is contiguous). Each
// 128-byte row holds 64 N-elements of one K index (one key); in the PTX ISA's terms:
//   leading byte offset = distance between 64-element blocks along N (the next 64
//                         columns of D: the next TMA box, kBoxBytes further on);
//   stride byte offset  = distance between groups of 8 K rows (8 x 128 = 1024 bytes).
__device__ __forceinline__ uint64_t make_desc_mn_sw128(uint32_t addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>(kBoxBytes >> 4) << 16;
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;
  return desc;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// S[64x128] (+)= Q[64x16] * K[128x16]^T (f16), both operands from shared memory (K-major).
__device__ __forceinline__ void wgmma_m64n128k16_ss_f16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                        uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// O[64x64] (+)= P[64x16] (registers) * V[16x64] (f16), V from shared memory, N-major.
__device__ __forceinline__ void wgmma_m64n64k16_rs_f16(float (&d)[32], const uint32_t (&a)[4],
                                                       uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// O[64x128] (+)= P[64x16] (registers) * V[16x128] (f16), V from shared memory, N-major.
__device__ __forceinline__ void wgmma_m64n128k16_rs_f16(float (&d)[64], const uint32_t (&a)[4],
                                                        uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// S[64x128] (+)= Q[64x16] * K[128x16]^T (bf16), both operands from shared memory (K-major).
__device__ __forceinline__ void wgmma_m64n128k16_ss_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                         uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// O[64x64] (+)= P[64x16] (registers) * V[16x64] (bf16), V from shared memory, N-major.
__device__ __forceinline__ void wgmma_m64n64k16_rs_bf16(float (&d)[32], const uint32_t (&a)[4],
                                                        uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// O[64x128] (+)= P[64x16] (registers) * V[16x128] (bf16), V from shared memory, N-major.
__device__ __forceinline__ void wgmma_m64n128k16_rs_bf16(float (&d)[64], const uint32_t (&a)[4],
                                                         uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
      : "memory");
}

template <bool kBf16>
__device__ __forceinline__ void wgmma_qk(float (&s)[64], uint64_t desc_q, uint64_t desc_k,
                                         uint32_t accumulate) {
  if constexpr (kBf16) {
    wgmma_m64n128k16_ss_bf16(s, desc_q, desc_k, accumulate);
  } else {
    wgmma_m64n128k16_ss_f16(s, desc_q, desc_k, accumulate);
  }
}

template <bool kBf16, int D>
__device__ __forceinline__ void wgmma_pv(float (&o)[D / 2], const uint32_t (&p)[4],
                                         uint64_t desc_v) {
  if constexpr (D == 128) {
    if constexpr (kBf16) {
      wgmma_m64n128k16_rs_bf16(o, p, desc_v, 1u);
    } else {
      wgmma_m64n128k16_rs_f16(o, p, desc_v, 1u);
    }
  } else {
    if constexpr (kBf16) {
      wgmma_m64n64k16_rs_bf16(o, p, desc_v, 1u);
    } else {
      wgmma_m64n64k16_rs_f16(o, p, desc_v, 1u);
    }
  }
}

template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t bits;
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    bits = *reinterpret_cast<const uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    bits = *reinterpret_cast<const uint32_t*>(&v);
  }
  return bits;  // lo in the lower 16 bits
}

// ---------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------

template <bool kBf16, int D>
__global__ void __launch_bounds__(kThreads, 1)
    attention_kernel(const __grid_constant__ CUtensorMap map_q,
                     const __grid_constant__ CUtensorMap map_k,
                     const __grid_constant__ CUtensorMap map_v, uint16_t* __restrict__ out,
                     int heads, int seq, int causal, float scale_log2,
                     float* __restrict__ lse) {  // lse: the row log-sum-exp, or nullptr
  using L = Layout<D>;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  const uint32_t base = smem_addr(smem);
  const uint32_t q_full = base + L::kBarriers;
  const uint32_t k_full = q_full + 8;     // [2]
  const uint32_t v_full = q_full + 24;    // [2]
  const uint32_t kv_empty = q_full + 40;  // [2]

  const int warpgroup = threadIdx.x / 128;
  const int warp = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  const int q_blocks = seq / kBlockM;
  // Causal CTAs differ in work (block i visits i+1 key blocks): start the heaviest first.
  const int q_block = causal ? q_blocks - 1 - static_cast<int>(blockIdx.x) : blockIdx.x;
  const int head_row = (blockIdx.z * heads + blockIdx.y) * seq;  // row of (b, h, 0) in [B*H*S, D]
  const int q_row = head_row + q_block * kBlockM;
  const int kv_blocks = causal ? q_block + 1 : seq / kBlockN;

  auto load_kv = [&](int j) {  // K and V block j into stage j % 2 (thread 0 only)
    const int s = j & 1;
    const uint32_t k_dst = base + L::kK + s * L::kStageStride;
    const uint32_t v_dst = base + L::kV + s * L::kStageStride;
    mbar_arrive_expect_tx(k_full + 8 * s, L::kTileBytes);
#pragma unroll
    for (int cb = 0; cb < L::kColumnBlocks; ++cb)
      tma_load_2d(k_dst + cb * kBoxBytes, &map_k, k_full + 8 * s, cb * 64, head_row + j * kBlockN);
    mbar_arrive_expect_tx(v_full + 8 * s, L::kTileBytes);
#pragma unroll
    for (int cb = 0; cb < L::kColumnBlocks; ++cb)
      tma_load_2d(v_dst + cb * kBoxBytes, &map_v, v_full + 8 * s, cb * 64, head_row + j * kBlockN);
  };

  if (threadIdx.x == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < 2; ++s) {
      mbar_init(k_full + 8 * s, 1);
      mbar_init(v_full + 8 * s, 1);
      mbar_init(kv_empty + 8 * s, kWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    mbar_arrive_expect_tx(q_full, L::kTileBytes);
#pragma unroll
    for (int cb = 0; cb < L::kColumnBlocks; ++cb)
      tma_load_2d(base + L::kQ + cb * kBoxBytes, &map_q, q_full, cb * 64, q_row);
    load_kv(0);
    if (kv_blocks > 1) load_kv(1);
  }
  __syncthreads();

  // Per thread: rows r = warp*16 + lane/4 (h = 0) and r + 8 (h = 1) of this warpgroup's 64.
  // Accumulator element 4j + 2h + e sits in row r + 8h, column 8j + 2*(lane%4) + e.
  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};  // running maxima, in log2 units (x scale_log2)
  float row_sum[2] = {0.f, 0.f};              // this thread's share of the running sums
  const int local_row = warpgroup * 64 + warp * 16 + lane / 4;  // within the 128-row block

  mbar_wait(q_full, 0);
  const uint32_t q_tile = base + L::kQ + warpgroup * 64 * 128;

  for (int j = 0; j < kv_blocks; ++j) {
    const int s = j & 1;
    const uint32_t parity = (j >> 1) & 1;
    const uint32_t k_tile = base + L::kK + s * L::kStageStride;
    const uint32_t v_tile = base + L::kV + s * L::kStageStride;

    // ---- S = Q K^T (64 x 128 per warpgroup)
    float sc[64];
    mbar_wait(k_full + 8 * s, parity);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint32_t offset = (kk / 4) * kBoxBytes + (kk % 4) * 32;  // column block, 16-col step
      wgmma_qk<kBf16>(sc, make_desc_k_sw128(q_tile + offset), make_desc_k_sw128(k_tile + offset),
                      kk > 0 ? 1u : 0u);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(sc);

    // ---- mask, online softmax
    const bool diagonal = causal && j == q_block;
#pragma unroll
    for (int i = 0; i < 64; ++i) {
      float x = sc[i] * scale_log2;
      if (diagonal) {
        const int key = 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
        const int row = local_row + 8 * ((i / 2) & 1);
        if (key > row) x = -INFINITY;
      }
      sc[i] = x;
    }
    float alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = row_max[h];
#pragma unroll
      for (int jj = 0; jj < 16; ++jj) mx = fmaxf(mx, fmaxf(sc[4 * jj + 2 * h], sc[4 * jj + 2 * h + 1]));
      // The four lanes of a quad hold the same two rows.
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // Every row has an unmasked key in its first block, so mx is finite from then on and
      // exp2(-inf - mx) = 0 for masked entries; alpha = exp2(-inf) = 0 on the first block.
      alpha[h] = exp2f(row_max[h] - mx);
      row_max[h] = mx;
      float sum = 0.f;
#pragma unroll
      for (int jj = 0; jj < 16; ++jj) {
        const float p0 = exp2f(sc[4 * jj + 2 * h] - mx);
        const float p1 = exp2f(sc[4 * jj + 2 * h + 1] - mx);
        sc[4 * jj + 2 * h] = p0;
        sc[4 * jj + 2 * h + 1] = p1;
        sum += p0 + p1;
      }
      row_sum[h] = row_sum[h] * alpha[h] + sum;
    }
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] *= alpha[(i / 2) & 1];

    // ---- O += P V. For 16 keys (k step kk = n8 blocks 2kk, 2kk+1) the A fragment is
    // {row r: keys 2t,2t+1}, {row r+8: same}, {row r: keys 8+2t,+1}, {row r+8: same}.
    // All fragments are packed before the fence: registers written between two wgmmas
    // would make ptxas insert a fence of its own before each (warning C7519).
    uint32_t p[kBlockN / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      p[kk][0] = pack2<kBf16>(sc[8 * kk + 0], sc[8 * kk + 1]);
      p[kk][1] = pack2<kBf16>(sc[8 * kk + 2], sc[8 * kk + 3]);
      p[kk][2] = pack2<kBf16>(sc[8 * kk + 4], sc[8 * kk + 5]);
      p[kk][3] = pack2<kBf16>(sc[8 * kk + 6], sc[8 * kk + 7]);
    }
    mbar_wait(v_full + 8 * s, parity);
    wgmma_fence();  // orders the writes to o[] (rescale) and p[] before the wgmmas
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      // 16 keys = 16 rows of V = 2048 bytes further into each 64-column box.
      wgmma_pv<kBf16, D>(o, p[kk], make_desc_mn_sw128(v_tile + kk * 16 * 128));
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(o);

    // ---- release the stage; thread 0 refills it with block j + 2
    if (lane == 0) mbar_arrive(kv_empty + 8 * s);
    if (threadIdx.x == 0 && j + 2 < kv_blocks) {
      mbar_wait(kv_empty + 8 * s, parity);
      load_kv(j + 2);
    }
    __syncwarp();
  }

  // ---- O / l, stored straight from the fragment (pairs of 16-bit values)
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = row_sum[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const float inv = 1.f / l;
    const long long row = static_cast<long long>(q_row) + local_row + 8 * h;
    // The row's log-sum-exp in natural units: m is held in log2 units (scores x scale x
    // log2 e), so ln(sum exp(s - m')) + m' = m ln 2 + ln l.
    if (lse != nullptr && lane % 4 == 0) lse[row] = row_max[h] * 0.69314718055994531f + logf(l);
    uint16_t* dst = out + row * D + 2 * (lane % 4);
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj) {
      *reinterpret_cast<uint32_t*>(dst + 8 * jj) =
          pack2<kBf16>(o[4 * jj + 2 * h] * inv, o[4 * jj + 2 * h + 1] * inv);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encoder = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

// [rows, D] view of a contiguous [B, H, S, D] tensor, read in 128-row x 64-column boxes.
bool encode_rows(CUtensorMap* map, CUtensorMapDataType type, void* data, int64_t rows, int D) {
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(D), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(D) * 2};
  const cuuint32_t box[2] = {64, 128};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(map, type, 2, data, dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool is_contiguous_bhsd(const kiln_tensor& t, kiln_dtype dtype, const int64_t* shape) {
  if (t.dtype != dtype || t.rank != 4) return false;
  for (int i = 0; i < 4; ++i)
    if (t.shape[i] != shape[i]) return false;
  return true;
}

bool strides_contiguous(const kiln_tensor& t) {
  int64_t expect = 1;
  for (int i = 3; i >= 0; --i) {
    if (t.shape[i] > 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return reinterpret_cast<uintptr_t>(t.data) % 16 == 0;
}

// LSE as a dense [B, H, S] array, indexed by the same row as O's [B*H*S, D] view.
bool lse_contiguous(const kiln_tensor& t) {
  int64_t expect = 1;
  for (int i = 2; i >= 0; --i) {
    if (t.shape[i] > 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

template <bool kBf16, int D>
int launch(const kiln_tensor* t, float* lse, int64_t batch, int64_t heads, int64_t seq,
           int causal, float scale_log2, cudaStream_t stream) {
  using L = Layout<D>;
  const CUtensorMapDataType type =
      kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const int64_t rows = batch * heads * seq;
  CUtensorMap map_q;
  CUtensorMap map_k;
  CUtensorMap map_v;
  if (!encode_rows(&map_q, type, t[0].data, rows, D) ||
      !encode_rows(&map_k, type, t[1].data, rows, D) ||
      !encode_rows(&map_v, type, t[2].data, rows, D)) {
    return KILN_ERR_LAUNCH;
  }
  auto kernel = attention_kernel<kBf16, D>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes) !=
      cudaSuccess) {
    return KILN_ERR_LAUNCH;
  }
  const dim3 grid(static_cast<unsigned>(seq / kBlockM), static_cast<unsigned>(heads),
                  static_cast<unsigned>(batch));
  kernel<<<grid, kThreads, L::kSmemBytes, stream>>>(map_q, map_k, map_v,
                                                    static_cast<uint16_t*>(t[3].data),
                                                    static_cast<int>(heads), static_cast<int>(seq),
                                                    causal, scale_log2, lse);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}

}  // namespace

// Two calling conventions, told apart by the counts:
//   the zoo's op attention_fwd (kb/zoo/README.md): Q, K, V, O (f16 or bf16) and the scalars
//     causal (i64) and scale (f64);
//   the task tasks/attention_fwd: Q, K, V, O (bf16) and LSE (f32 [B, H, S], the row
//     log-sum-exp) and the one scalar causal (i64); the scale is 1/sqrt(D).
extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  const bool task_abi = n_tensors == 5 && n_scalars == 1;
  if (tensors == nullptr || scalars == nullptr || !(task_abi || (n_tensors == 4 && n_scalars == 2)))
    return KILN_ERR_BAD_ARGUMENT;
  if (scalars[0].dtype != KILN_I64 || (!task_abi && scalars[1].dtype != KILN_F64))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t causal = scalars[0].value.i;
  if (causal != 0 && causal != 1) return KILN_ERR_BAD_ARGUMENT;

  const kiln_tensor& q = tensors[0];
  const kiln_dtype dtype = q.dtype;
  if (dtype != KILN_BF16 && (task_abi || dtype != KILN_F16)) return KILN_ERR_BAD_ARGUMENT;
  if (q.rank != 4) return KILN_ERR_BAD_ARGUMENT;
  for (int i = 0; i < 4; ++i)
    if (q.shape[i] < 0) return KILN_ERR_BAD_ARGUMENT;
  for (int i = 0; i < 4; ++i)
    if (!is_contiguous_bhsd(tensors[i], dtype, q.shape)) return KILN_ERR_BAD_ARGUMENT;
  float* lse = nullptr;
  if (task_abi) {
    const kiln_tensor& l = tensors[4];
    if (l.dtype != KILN_F32 || l.rank != 3 || l.shape[0] != q.shape[0] ||
        l.shape[1] != q.shape[1] || l.shape[2] != q.shape[2])
      return KILN_ERR_BAD_ARGUMENT;
    lse = static_cast<float*>(l.data);
  }
  const int64_t batch = q.shape[0];
  const int64_t heads = q.shape[1];
  const int64_t seq = q.shape[2];
  const int64_t dim = q.shape[3];
  if (batch == 0 || heads == 0 || seq == 0) return KILN_OK;
  if (dim != 64 && dim != 128) return KILN_ERR_UNSUPPORTED;
  if (seq % kBlockM != 0) return KILN_ERR_UNSUPPORTED;
  if (batch > 65535 || heads > 65535 || batch * heads * seq >= INT_MAX) return KILN_ERR_UNSUPPORTED;
  for (int i = 0; i < 4; ++i)
    if (!strides_contiguous(tensors[i])) return KILN_ERR_UNSUPPORTED;
  if (task_abi && !lse_contiguous(tensors[4])) return KILN_ERR_UNSUPPORTED;

  const double scale = task_abi ? 1.0 / std::sqrt(static_cast<double>(dim)) : scalars[1].value.f;
  const float scale_log2 = static_cast<float>(scale * 1.4426950408889634);  // log2(e)
  const int c = static_cast<int>(causal);
  if (dtype == KILN_BF16) {
    return dim == 128 ? launch<true, 128>(tensors, lse, batch, heads, seq, c, scale_log2, stream)
                      : launch<true, 64>(tensors, lse, batch, heads, seq, c, scale_log2, stream);
  }
  return dim == 128 ? launch<false, 128>(tensors, lse, batch, heads, seq, c, scale_log2, stream)
                    : launch<false, 64>(tensors, lse, batch, heads, seq, c, scale_log2, stream);
}
