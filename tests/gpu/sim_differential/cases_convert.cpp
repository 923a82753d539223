// cvt: f32 -> f16/bf16/e4m3/e5m2 with each rounding mode, relu and satfinite; back to f32;
// f32 <-> integers with the integer rounding modes and saturation; f64 <-> f32.
#include "harness.h"

namespace kiln::simdiff {
namespace {

std::vector<uint64_t> f32_unary() {
  std::vector<uint64_t> v = f32_edges();
  uint64_t s = 1;
  for (int i = 0; i < 512; ++i) v.push_back(lcg(s) & 0xffffffff);  // every exponent
  for (int i = 0; i < 512; ++i) {                                  // magnitudes from 2^-30 to 2^34
    uint64_t r = lcg(s);
    v.push_back((r & 0x807fffff) | (((r >> 23) % 64 + 97) << 23));
  }
  for (int i = 0; i < 256; ++i) {  // near the f16/e4m3/e5m2 ranges with low mantissa bits set
    uint64_t r = lcg(s);
    v.push_back((r & 0x807fffff) | (((r >> 23) % 48 + 100) << 23));
  }
  return v;
}

std::vector<uint64_t> shifted(const std::vector<uint64_t>& v, size_t by) {
  std::vector<uint64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = v[(i + by) % v.size()];
  return out;
}

Case f32_to(const std::string& name, const std::string& instr, int out_bits, Format f) {
  Case c = eval_case(name, instr, 32, out_bits, f32_unary());
  c.format = f;
  return c;
}

}  // namespace

void add_convert_cases(std::vector<Case>& cases) {
  for (const char* rnd : {"rn", "rz", "rm", "rp"}) {
    std::string r = rnd;
    cases.push_back(
        f32_to("cvt." + r + ".f16.f32", "cvt." + r + ".f16.f32 %d, %a;", 16, Format::kF16));
    cases.push_back(
        f32_to("cvt." + r + ".bf16.f32", "cvt." + r + ".bf16.f32 %d, %a;", 16, Format::kBF16));
  }
  cases.push_back(f32_to("cvt.rn.relu.f16.f32", "cvt.rn.relu.f16.f32 %d, %a;", 16, Format::kF16));
  cases.push_back(
      f32_to("cvt.rn.relu.bf16.f32", "cvt.rn.relu.bf16.f32 %d, %a;", 16, Format::kBF16));
  cases.push_back(
      f32_to("cvt.rn.satfinite.f16.f32", "cvt.rn.satfinite.f16.f32 %d, %a;", 16, Format::kF16));
  cases.push_back(
      f32_to("cvt.rn.satfinite.bf16.f32", "cvt.rn.satfinite.bf16.f32 %d, %a;", 16, Format::kBF16));
  cases.push_back(
      f32_to("cvt.rz.satfinite.bf16.f32", "cvt.rz.satfinite.bf16.f32 %d, %a;", 16, Format::kBF16));
  std::vector<uint64_t> a = f32_unary(), b = shifted(a, 37);
  for (const char* t : {"f16x2", "bf16x2"}) {
    for (const char* m : {"rn", "rz", "rn.relu", "rn.satfinite"}) {
      std::string name = std::string("cvt.") + m + "." + t + ".f32";
      Case c = eval_case(name, name + " %d, %a, %b;", 32, 32, a, b);
      c.format = std::string(t) == "f16x2" ? Format::kF16 : Format::kBF16;
      cases.push_back(c);
    }
  }
  for (const char* t : {"e4m3x2", "e5m2x2"}) {
    for (const char* m : {"rn.satfinite", "rn.satfinite.relu"}) {
      std::string name = std::string("cvt.") + m + "." + t + ".f32";
      cases.push_back(eval_case(name, name + " %d, %a, %b;", 32, 16, a, b));
    }
    // f16x2 -> fp8x2 (inputs: pairs of f16 bit patterns) and fp8x2 -> f16x2 (all 256 bytes).
    std::vector<uint64_t> h, e;
    std::vector<uint64_t> fe = f16_edges();
    uint64_t s = 7;
    for (size_t i = 0; i < 1024; ++i) {
      uint64_t lo = i < fe.size() * fe.size() ? fe[i % fe.size()] : lcg(s) & 0xffff;
      uint64_t hi = i < fe.size() * fe.size() ? fe[i / fe.size()] : lcg(s) & 0xffff;
      h.push_back(lo | hi << 16);
    }
    for (uint64_t i = 0; i < 256; ++i) e.push_back(i | (255 - i) << 8);
    std::string to = std::string("cvt.rn.satfinite.") + t + ".f16x2";
    cases.push_back(eval_case(to, to + " %d, %a;", 32, 16, h));
    std::string from = std::string("cvt.rn.f16x2.") + t;
    Case c = eval_case(from, from + " %d, %a;", 16, 32, e);
    c.format = Format::kF16;
    cases.push_back(c);
  }
  // Widening: exact.
  {
    std::vector<uint64_t> h = f16_edges(), g = bf16_edges();
    uint64_t s = 3;
    for (int i = 0; i < 480; ++i) h.push_back(lcg(s) & 0xffff);
    for (int i = 0; i < 480; ++i) g.push_back(lcg(s) & 0xffff);
    Case c = eval_case("cvt.f32.f16", "cvt.f32.f16 %d, %a;", 16, 32, h);
    c.format = Format::kF32;
    cases.push_back(c);
    c = eval_case("cvt.f32.bf16", "cvt.f32.bf16 %d, %a;", 16, 32, g);
    c.format = Format::kF32;
    cases.push_back(c);
    c = eval_case("cvt.f64.f32", "cvt.f64.f32 %d, %a;", 32, 64, f32_unary());
    c.format = Format::kF64;
    cases.push_back(c);
  }
  // f64 -> f32 with each rounding mode.
  {
    std::vector<uint64_t> d = {0,
                               0x8000000000000000ull,
                               1,
                               0x36a0000000000000ull,
                               0x3690000000000000ull,
                               0x47efffffe0000000ull,
                               0x47efffffefffffffull,
                               0x47effffff0000000ull,
                               0x7ff0000000000000ull,
                               0x7ff8000000000000ull,
                               0x3ff0000010000000ull,
                               0x3ff0000030000000ull,
                               0x3ff0000010000001ull,
                               0xbff0000010000000ull};
    uint64_t s = 11;
    for (int i = 0; i < 1000; ++i) {
      uint64_t r = lcg(s) << 20 ^ lcg(s);
      d.push_back((r & 0x800fffffffffffffull) | (((r >> 52) % 400 + 0x380 - 100) << 52));
    }
    for (const char* rnd : {"rn", "rz", "rm", "rp"}) {
      std::string n = std::string("cvt.") + rnd + ".f32.f64";
      Case c = eval_case(n, n + " %d, %a;", 64, 32, d);
      c.format = Format::kF32;
      cases.push_back(c);
    }
  }
  // f32 -> integer (saturating; NaN -> 0) and back.
  for (const char* rnd : {"rni", "rzi", "rmi", "rpi"}) {
    for (const char* t : {"s32", "u32", "s16", "u8"}) {
      std::string n = std::string("cvt.") + rnd + "." + t + ".f32";
      int bits = std::string(t) == "s32" || std::string(t) == "u32" ? 32 : 16;
      std::string body = bits == 32 ? n + " %d, %a;" : n + " %h0, %a;\n  mov.b16 %d, %h0;";
      if (std::string(t) == "u8") body = n + " %h0, %a;\n  mov.b16 %d, %h0;";
      cases.push_back(eval_case(n, body, 32, bits, f32_unary()));
    }
    std::string n64 = std::string("cvt.") + rnd + ".s64.f32";
    cases.push_back(eval_case(n64, n64 + " %d, %a;", 32, 64, f32_unary()));
    std::string u64 = std::string("cvt.") + rnd + ".u64.f32";
    cases.push_back(eval_case(u64, u64 + " %d, %a;", 32, 64, f32_unary()));
    std::string ff = std::string("cvt.") + rnd + ".f32.f32";
    Case c = eval_case(ff, ff + " %d, %a;", 32, 32, f32_unary());
    c.format = Format::kF32;
    cases.push_back(c);
  }
  cases.push_back(
      eval_case("cvt.rni.sat.s32.f32", "cvt.rni.sat.s32.f32 %d, %a;", 32, 32, f32_unary()));
  {
    std::vector<uint64_t> ints = {0,          1,          0xffffffff, 0x7fffffff,
                                  0x80000000, 0x01000001, 0x01000003, 0x00ffffff,
                                  0x7fffffbf, 0x7fffffc0, 0xfefffffd};
    uint64_t s = 5;
    for (int i = 0; i < 1000; ++i) ints.push_back(lcg(s) >> (i % 24) & 0xffffffff);
    std::vector<uint64_t> longs = {0,
                                   1,
                                   ~0ull,
                                   0x7fffffffffffffffull,
                                   0x8000000000000000ull,
                                   0x0020000000000001ull,
                                   0x0000010000000001ull};
    for (int i = 0; i < 1000; ++i) longs.push_back((lcg(s) << 30 ^ lcg(s)) >> (i % 40));
    for (const char* rnd : {"rn", "rz", "rm", "rp"}) {
      for (const char* t : {"s32", "u32", "s64", "u64"}) {
        bool wide = t[1] == '6';
        std::string n = std::string("cvt.") + rnd + ".f32." + t;
        Case c = eval_case(n, n + " %d, %a;", wide ? 64 : 32, 32, wide ? longs : ints);
        c.format = Format::kF32;
        cases.push_back(c);
      }
      std::string h = std::string("cvt.") + rnd + ".f16.s32";
      Case c = eval_case(h, h + " %d, %a;", 32, 16, ints);
      c.format = Format::kF16;
      cases.push_back(c);
    }
  }
}

}  // namespace kiln::simdiff
