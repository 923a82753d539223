// Warp-level data movement: shfl.sync (up/down/bfly/idx, widths, partial masks), vote, match,
// redux; ldmatrix (x1/x2/x4, .trans); mma.sync fragments (f16, bf16, e4m3, e5m2, s8).
#include <algorithm>

#include "harness.h"

namespace kiln::simdiff {
namespace {

// 8 warps: warp w uses segment width 32 >> (w % 4); lane deltas/indices vary per lane.
Case shuffle(const std::string& mode, uint32_t mask) {
  std::vector<uint64_t> a, b, c;
  uint64_t s = 61;
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t warp = i / 32, width = 32u >> (warp % 4);
    a.push_back(lcg(s) & 0xffffffff);
    b.push_back(mask == 0xffffffff ? lcg(s) % 40 : lcg(s) % width);
    uint32_t seg = (32 - width) << 8;
    c.push_back(mode == "up" ? seg : seg | 0x1f);
  }
  std::string m = std::to_string(mask);
  std::string body =
      "mov.u32 %r2, %laneid;\n  shr.b32 %r3, " + m +
      ", %r2;\n  and.b32 %r3, %r3, 1;\n"
      "  setp.eq.u32 %q, %r3, 1;\n  mov.u32 %r0, 0xdeadbeef;\n  setp.ne.u32 %p, 0, 0;\n"
      "  @!%q bra SKIP;\n  shfl.sync." +
      mode + ".b32 %r0|%p, %a, %b, %c, " + m +
      ";\n"
      "SKIP:\n  selp.b32 %r1, 1, 0, %p;\n  mov.b64 %d, {%r0, %r1};";
  Case k = eval_case("shfl.sync." + mode + " mask " + m, body, 32, 64, a, b, c);
  // PTX leaves d undefined when the source lane is not in membermask (an H200 gives 0): only
  // the predicate is compared there. The source lane as PTX's shfl.sync pseudocode finds it:
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t lane = i % 32, seg_mask = (c[i] >> 8) & 0x1f, bv = static_cast<uint32_t>(b[i]);
    uint32_t max_lane = (lane & seg_mask) | (c[i] & 0x1f & ~seg_mask);
    uint32_t min_lane = lane & seg_mask;
    int64_t j = lane;
    bool in_range = false;
    if (mode == "up") j = int64_t{lane} - bv, in_range = j >= int64_t{max_lane};
    if (mode == "down") j = int64_t{lane} + bv, in_range = j <= int64_t{max_lane};
    if (mode == "bfly") j = lane ^ bv, in_range = j <= int64_t{max_lane};
    if (mode == "idx") j = min_lane | (bv & 0x1f & ~seg_mask), in_range = j <= int64_t{max_lane};
    if (!in_range) j = lane;
    bool member = (mask >> lane) & 1, source_member = (mask >> (j & 31)) & 1;
    k.care.push_back(member && !source_member ? 0xffffffff00000000ull : ~0ull);
  }
  return k;
}

std::vector<uint32_t> smem_pattern(size_t words) {
  std::vector<uint32_t> v(words);
  for (size_t i = 0; i < words; ++i) v[i] = static_cast<uint32_t>((2 * i) | (2 * i + 1) << 16);
  return v;
}

// f16 (or bf16/fp8) values from {-2, -1.5, ..., 2}: products and sums exact in f32.
uint32_t small_f16(uint64_t& s) {
  static const uint16_t v[] = {0xc000, 0xbe00, 0xbc00, 0xb800, 0x0000,
                               0x3800, 0x3c00, 0x3e00, 0x4000};
  return v[lcg(s) % 9];
}
uint32_t small_bf16(uint64_t& s) {
  static const uint16_t v[] = {0xc000, 0xbfc0, 0xbf80, 0xbf00, 0x8000,
                               0x3f00, 0x3f80, 0x3fc0, 0x4000};
  return v[lcg(s) % 9];
}
uint32_t small_fp8(uint64_t& s, bool e5m2) {
  static const uint8_t e4[] = {0xc0, 0xbc, 0xb8, 0xb0, 0x00, 0x30, 0x38, 0x3c, 0x40};
  static const uint8_t e5[] = {0xc0, 0xbe, 0xbc, 0xb8, 0x80, 0x38, 0x3c, 0x3e, 0x40};
  return e5m2 ? e5[lcg(s) % 9] : e4[lcg(s) % 9];
}
uint32_t small_f32(uint64_t& s) {
  static const uint32_t v[] = {0xc0800000, 0xbf800000, 0x00000000, 0x3f000000, 0x40400000};
  return v[lcg(s) % 5];
}

// A: 4 regs, B: 2 regs, C: 4 f32 (or 2 f16x2) per lane; D the same shape as C.
Case mma(const std::string& shape_types, int elem, bool f16_accum, bool exact) {
  uint64_t s = 71;
  uint32_t c_regs = f16_accum ? 2 : 4;
  std::vector<uint32_t> in;
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 6; ++r) {
      uint32_t w = 0;
      for (int k = 0; k < 32 / elem; ++k) {
        uint32_t v = !exact       ? static_cast<uint32_t>(lcg(s)) & 0x3bff
                     : elem == 16 ? (shape_types.find("bf16") != std::string::npos ? small_bf16(s)
                                                                                   : small_f16(s))
                     : shape_types.find("s8") != std::string::npos
                         ? static_cast<uint32_t>(lcg(s) & 0xff)
                         : small_fp8(s, shape_types.find("e5m2") != std::string::npos);
        w |= v << (k * elem);
      }
      in.push_back(w);
    }
    for (uint32_t r = 0; r < c_regs; ++r) {
      in.push_back(f16_accum ? small_f16(s) | small_f16(s) << 16
                   : shape_types.find("s32") != std::string::npos ? static_cast<uint32_t>(lcg(s))
                                                                  : small_f32(s));
    }
  }
  std::string d = f16_accum ? "{%o0, %o1}" : "{%o0, %o1, %o2, %o3}";
  std::string cc = f16_accum ? "{%i6, %i7}" : "{%i6, %i7, %i8, %i9}";
  std::string body = "mma.sync.aligned." + shape_types + " " + d +
                     ", {%i0, %i1, %i2, %i3}, {%i4, %i5}, " + cc + ";";
  Case c = fragment_case("mma.sync." + shape_types + (exact ? "" : " (random)"), body, 32, in,
                         6 + c_regs, c_regs);
  if (!exact) {
    c.exact = false;
    c.format = f16_accum ? Format::kF16 : Format::kF32;
    c.max_ulp = 64;
  }
  return c;
}

}  // namespace

void add_warp_cases(std::vector<Case>& cases) {
  for (const char* mode : {"up", "down", "bfly", "idx"}) {
    cases.push_back(shuffle(mode, 0xffffffff));
    cases.push_back(shuffle(mode, 0x0000ffff));
    cases.push_back(shuffle(mode, 0xffff0000));
  }
  {
    std::vector<uint64_t> a;
    uint64_t s = 81;
    for (int i = 0; i < 256; ++i) a.push_back(lcg(s) % 5);
    for (const char* body :
         {"setp.eq.u32 %q, %a, 2;\n  vote.sync.ballot.b32 %d, %q, 0xffffffff;",
          "setp.ne.u32 %q, %a, 0;\n  vote.sync.all.pred %p, %q, 0xffffffff;\n  selp.b32 %d, 1, 0, "
          "%p;",
          "setp.ne.u32 %q, %a, 0;\n  vote.sync.any.pred %p, %q, 0xffffffff;\n  selp.b32 %d, 1, 0, "
          "%p;",
          "match.any.sync.b32 %d, %a, 0xffffffff;", "match.all.sync.b32 %d|%p, %a, 0xffffffff;",
          "redux.sync.add.u32 %d, %a, 0xffffffff;", "redux.sync.max.s32 %d, %a, 0xffffffff;",
          "redux.sync.xor.b32 %d, %a, 0xffffffff;", "activemask.b32 %d;"}) {
      std::string b = body;
      size_t at = b.find("vote"), m = b.find("match"), r = b.find("redux");
      at = std::min({at, m, r, b.find("activemask")});
      cases.push_back(eval_case(b.substr(at, b.find(' ', at) - at), b, 32, 32, a));
    }
  }
  // ldmatrix: lane l gives the row address of row (l % 8) of matrix (l / 8); rows are 16 bytes
  // apart in a 64-byte-wide tile.
  for (int count : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      std::vector<uint32_t> in;
      for (uint32_t lane = 0; lane < 32; ++lane) {
        uint32_t matrix = (lane / 8) % count, row = lane % 8;
        in.push_back(row * 64 + matrix * 16 + (lane >= 8u * count ? 0u : 0u));
      }
      std::string regs = count == 1 ? "{%o0}" : count == 2 ? "{%o0, %o1}" : "{%o0, %o1, %o2, %o3}";
      std::string n = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(count) +
                      (trans ? ".trans" : "") + ".shared.b16";
      cases.push_back(fragment_case(n, "add.u32 %t0, %sa, %i0;\n  " + n + " " + regs + ", [%t0];",
                                    32, in, 1, count, smem_pattern(512)));
    }
  }
  cases.push_back(mma("m16n8k16.row.col.f32.f16.f16.f32", 16, false, true));
  cases.push_back(mma("m16n8k16.row.col.f16.f16.f16.f16", 16, true, true));
  cases.push_back(mma("m16n8k16.row.col.f32.bf16.bf16.f32", 16, false, true));
  cases.push_back(mma("m16n8k32.row.col.f32.e4m3.e4m3.f32", 8, false, true));
  cases.push_back(mma("m16n8k32.row.col.f32.e5m2.e4m3.f32", 8, false, true));
  cases.push_back(mma("m16n8k32.row.col.s32.s8.s8.s32", 8, false, true));
  cases.push_back(mma("m16n8k32.row.col.satfinite.s32.s8.s8.s32", 8, false, true));
  cases.push_back(mma("m16n8k16.row.col.f32.f16.f16.f32", 16, false, false));
}

}  // namespace kiln::simdiff
