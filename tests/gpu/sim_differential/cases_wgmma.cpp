// wgmma.mma_async: one warpgroup multiplies A[64xK] by B[NxK]^T from shared memory through
// matrix descriptors (each swizzle mode; K-major, and MN-major for f16), or with A from
// registers, accumulating into f32 registers that come back per thread, so the descriptor
// decoding, the swizzle, the accumulator fragment layout and the arithmetic are all compared.
// Exact cases use small values whose products and sums are exact in f32 (bit-exact on any
// summation order); one case uses random f16 data (within a bound).
#include <algorithm>
#include <optional>
#include <string>

#include "harness.h"

namespace kiln::simdiff {
namespace {

constexpr uint32_t kBOffset = 8192;  // A at byte 0, B at byte 8192 of shared memory

enum class Elem { kF16, kBF16, kTF32, kE4M3, kE5M2, kS8, kU8 };

const char* elem_name(Elem e) {
  static const char* names[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"};
  return names[static_cast<int>(e)];
}

bool is_integer(Elem e) { return e == Elem::kS8 || e == Elem::kU8; }

struct Layout {
  std::string name;
  uint32_t swizzle_field;  // descriptor bits 62-63: 0 none, 1 128B, 2 64B, 3 32B
  uint32_t lbo, sbo;       // bytes
};

// K-major layouts of a 64-row (or N-row) tile with 32 bytes of K per row: no swizzle packs
// 8x16-byte core matrices (LBO: next core matrix along K, SBO: next 8-row group); the
// swizzled ones keep rows of 32/64/128 bytes in 8-row atoms (SBO: next atom).
const Layout kKMajor[] = {{"K-major none", 0, 128, 256},
                          {"K-major 32B", 3, 16, 256},
                          {"K-major 64B", 2, 16, 512},
                          {"K-major 128B", 1, 16, 1024}};

uint32_t small_element(uint64_t& s, Elem e) {
  static const uint16_t f16[] = {0xc000, 0xbc00, 0xb800, 0x0000, 0x3800, 0x3c00, 0x4000, 0x4200};
  static const uint16_t bf16[] = {0xc000, 0xbf80, 0xbf00, 0x0000, 0x3f00, 0x3f80, 0x4000, 0x4040};
  static const uint32_t tf32[] = {0xc0000000, 0xbf800000, 0x00000000, 0x3f000000, 0x40400000};
  static const uint8_t e4m3[] = {0xc0, 0xbc, 0xb8, 0x00, 0x30, 0x38, 0x3c, 0x40};
  static const uint8_t e5m2[] = {0xc0, 0xbe, 0xbc, 0x00, 0x38, 0x3c, 0x3e, 0x40};
  switch (e) {
    case Elem::kF16:
      return f16[lcg(s) % 8];
    case Elem::kBF16:
      return bf16[lcg(s) % 8];
    case Elem::kTF32:
      return tf32[lcg(s) % 5];
    case Elem::kE4M3:
      return e4m3[lcg(s) % 8];
    case Elem::kE5M2:
      return e5m2[lcg(s) % 8];
    case Elem::kS8:
    case Elem::kU8:
      return static_cast<uint32_t>(lcg(s) & 0xff);  // integer sums are exact
  }
  return 0;
}

int element_bits(Elem e) {
  return e == Elem::kTF32 ? 32 : (e == Elem::kF16 || e == Elem::kBF16) ? 16 : 8;
}

std::vector<uint32_t> packed_words(size_t count, Elem e, bool random, uint64_t seed) {
  std::vector<uint32_t> words(count);
  const int bits = element_bits(e);
  for (uint32_t& w : words) {
    w = 0;
    for (int k = 0; k < 32 / bits; ++k) {
      const uint32_t v =
          random ? static_cast<uint32_t>(lcg(seed)) & 0x3bff : small_element(seed, e);
      w |= v << (k * bits);
    }
  }
  return words;
}

// PTX that leaves the descriptor of the tile at byte `offset` of `sm` in `reg`.
std::string descriptor(const std::string& reg, uint32_t offset, const Layout& layout) {
  const uint64_t offsets =
      static_cast<uint64_t>(layout.lbo >> 4) << 16 | static_cast<uint64_t>(layout.sbo >> 4) << 32;
  return "add.u32 %t0, %sa, " + std::to_string(offset) + ";\n  cvt.u64.u32 " + reg +
         ", %t0;\n  shr.u64 " + reg + ", " + reg + ", 4;\n  and.b64 " + reg + ", " + reg +
         ", 16383;\n  or.b64 " + reg + ", " + reg + ", " + std::to_string(offsets) +
         ";\n  mov.b64 %x2, " + std::to_string(layout.swizzle_field) +
         ";\n  shl.b64 %x2, %x2, 62;\n  or.b64 " + reg + ", " + reg + ", %x2;\n  ";
}

std::string register_list(const std::string& prefix, uint32_t first, uint32_t count) {
  std::string list = "{";
  for (uint32_t i = 0; i < count; ++i) list += (i ? ", " : "") + prefix + std::to_string(first + i);
  return list + "}";
}

struct WgmmaSpec {
  Elem elem = Elem::kF16;
  std::optional<Elem> b_elem;  // when B's type differs from A's (fp8 and integer mixes)
  bool satfinite = false;      // integer forms
  uint32_t n = 8;
  Layout a_layout = kKMajor[0], b_layout = kKMajor[0];
  bool transpose_a = false, transpose_b = false;  // MN-major (f16/bf16 only)
  bool a_in_registers = false;
  bool accumulate = true;  // scale-d
  int scale_a = 1;         // imm-scale-a (1 or -1)
  bool random = false;
};

Case wgmma_case(const WgmmaSpec& w) {
  const Elem b_elem = w.b_elem.value_or(w.elem);
  const bool integer = is_integer(w.elem);
  const uint32_t k = 256 / element_bits(w.elem);  // 32 bytes of K per row
  const uint32_t acc = w.n / 2;                   // f32 or s32 accumulators per thread
  const uint32_t a_regs = w.a_in_registers ? 4 : 0;
  const std::string shape = "m64n" + std::to_string(w.n) + "k" + std::to_string(k) +
                            (w.satfinite ? ".satfinite" : "") + (integer ? ".s32." : ".f32.") +
                            elem_name(w.elem) + "." + elem_name(b_elem);
  const bool transposable = w.elem == Elem::kF16 || w.elem == Elem::kBF16;

  std::string body = "{\n  .reg ." + std::string(integer ? "s32" : "f32") + " %acc<" +
                     std::to_string(acc) + ">;\n  .reg .pred %sd;\n  ";
  for (uint32_t i = 0; i < acc; ++i)
    body += "mov.b32 %acc" + std::to_string(i) + ", %i" + std::to_string(a_regs + i) + ";\n  ";
  body += descriptor("%x0", 0, w.a_layout) + descriptor("%x1", kBOffset, w.b_layout);
  body += std::string("setp.") + (w.accumulate ? "eq" : "ne") + ".u32 %sd, %me, %me;\n  ";
  body += "fence.proxy.async.shared::cta;\n  bar.sync 0;\n  wgmma.fence.sync.aligned;\n  ";
  body += "wgmma.mma_async.sync.aligned." + shape + " " + register_list("%acc", 0, acc) + ", " +
          (w.a_in_registers ? register_list("%i", 0, 4) : "%x0") + ", %x1, %sd";
  if (!integer) body += ", " + std::to_string(w.scale_a) + ", 1";  // imm-scale-a, imm-scale-b
  if (transposable) {
    if (!w.a_in_registers) body += std::string(", ") + (w.transpose_a ? "1" : "0");
    body += std::string(", ") + (w.transpose_b ? "1" : "0");
  }
  body += ";\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n  ";
  for (uint32_t i = 0; i < acc; ++i)
    body += "mov.b32 %o" + std::to_string(i) + ", %acc" + std::to_string(i) + ";\n  ";
  body += "}";

  uint64_t seed = 0x9e3779b9ull * (w.n + 7 * static_cast<uint64_t>(w.elem) +
                                   17 * static_cast<uint64_t>(b_elem) + 131 * w.a_layout.sbo);
  std::vector<uint32_t> in;
  const std::vector<uint32_t> a = packed_words(128 * a_regs, w.elem, w.random, seed + 1);
  for (uint32_t t = 0; t < 128; ++t) {
    for (uint32_t r = 0; r < a_regs; ++r) in.push_back(a[t * a_regs + r]);
    // C: small exact floats; for integers, values near the int32 limits so that sums wrap
    // (or saturate with .satfinite).
    for (uint32_t i = 0; i < acc; ++i)
      in.push_back(integer ? static_cast<uint32_t>(0x7ffff000u + (lcg(seed) & 0x1fffu))
                           : small_element(seed, Elem::kTF32));
  }
  std::string name = "wgmma." + shape + " A " +
                     (w.a_in_registers ? std::string("registers") : w.a_layout.name) + ", B " +
                     w.b_layout.name;
  if (!w.accumulate) name += ", scale-d 0";
  if (w.scale_a != 1) name += ", scale-a " + std::to_string(w.scale_a);
  if (w.random) name += " (random)";
  // B spans N/8 eight-row groups of at most 1 KiB.
  const uint32_t smem_words = (kBOffset + std::max(8192u, w.n / 8 * 1024)) / 4;
  std::vector<uint32_t> smem = packed_words(kBOffset / 4, w.elem, w.random, seed + 2);
  const std::vector<uint32_t> b_words =
      packed_words(smem_words - kBOffset / 4, b_elem, w.random, seed + 3);
  smem.insert(smem.end(), b_words.begin(), b_words.end());
  Case c = fragment_case(name, body, 128, in, a_regs + acc, acc, smem);
  if (w.random) {
    // The H200's tensor cores do not round the exact sum once: on random data its results
    // end in zero bits and differ from the exact sum by up to ~2^-22 in absolute terms
    // (2026-11-30), which is thousands of ulp where the sum cancels to near zero. The
    // addends here are below 19 in magnitude (16 products of values under 1, C at most 3),
    // so the bound is one f32 ulp at that magnitude: 2^-19 absolute.
    c.exact = false;
    c.format = Format::kF32;
    c.max_ulp = 64;
    c.abs_tol = 0x1p-19;
  }
  return c;
}

}  // namespace

void add_wgmma_cases(std::vector<Case>& cases) {
  // Each K-major layout, for A and B alike, at N = 8 and 64.
  for (const Layout& layout : kKMajor) {
    for (uint32_t n : {8u, 64u}) {
      WgmmaSpec w;
      w.n = n;
      w.a_layout = w.b_layout = layout;
      cases.push_back(wgmma_case(w));
    }
  }
  // Every input type through the 128B swizzle; f16 also at N = 256.
  for (Elem e : {Elem::kBF16, Elem::kTF32, Elem::kE4M3}) {
    WgmmaSpec w;
    w.elem = e;
    w.n = 64;
    w.a_layout = w.b_layout = kKMajor[3];
    cases.push_back(wgmma_case(w));
  }
  {
    WgmmaSpec w;
    w.n = 256;
    w.a_layout = w.b_layout = kKMajor[3];
    cases.push_back(wgmma_case(w));
  }
  // MN-major (transposed) f16 tiles in the 128B swizzle: the 64-element-wide atoms are 1 KiB,
  // two along K. LBO and SBO are given both ways round, so a swapped reading shows.
  for (uint32_t lbo : {1024u, 2048u}) {
    const Layout mn{
        "MN-major 128B (LBO " + std::to_string(lbo) + ", SBO " + std::to_string(3072 - lbo) + ")",
        1, lbo, 3072 - lbo};
    WgmmaSpec w;
    w.n = 64;
    w.a_layout = w.b_layout = mn;
    w.transpose_a = w.transpose_b = true;
    cases.push_back(wgmma_case(w));
  }
  // A from registers; scale-d 0 (D = A*B, C ignored); imm-scale-a -1 (A negated).
  {
    WgmmaSpec w;
    w.n = 64;
    w.b_layout = kKMajor[3];
    w.a_in_registers = true;
    cases.push_back(wgmma_case(w));
  }
  {
    WgmmaSpec w;
    w.n = 64;
    w.a_layout = w.b_layout = kKMajor[2];
    w.accumulate = false;
    cases.push_back(wgmma_case(w));
    w.accumulate = true;
    w.scale_a = -1;
    cases.push_back(wgmma_case(w));
  }
  // fp8 in every mix; s8/u8 in every mix, wrapped and .satfinite (C near INT32_MAX).
  for (auto [a, b] : {std::pair{Elem::kE5M2, Elem::kE4M3}, std::pair{Elem::kE4M3, Elem::kE5M2},
                      std::pair{Elem::kE5M2, Elem::kE5M2}, std::pair{Elem::kS8, Elem::kS8},
                      std::pair{Elem::kS8, Elem::kU8}, std::pair{Elem::kU8, Elem::kS8},
                      std::pair{Elem::kU8, Elem::kU8}}) {
    WgmmaSpec w;
    w.elem = a;
    w.b_elem = b;
    w.n = 64;
    w.a_layout = w.b_layout = kKMajor[3];
    cases.push_back(wgmma_case(w));
    if (is_integer(a)) {
      w.satfinite = true;
      cases.push_back(wgmma_case(w));
    }
  }
  // Random f16 data: the GPU's accumulation order and precision against the simulator's.
  {
    WgmmaSpec w;
    w.n = 64;
    w.a_layout = w.b_layout = kKMajor[3];
    w.random = true;
    cases.push_back(wgmma_case(w));
  }
}

}  // namespace kiln::simdiff
