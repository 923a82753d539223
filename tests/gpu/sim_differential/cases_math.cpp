// f32/f64/f16x2/bf16x2 arithmetic with explicit rounding (bit-exact), integer ops (bit-exact),
// and the .approx special functions (within twice the PTX-documented bound of the GPU).
#include <cmath>
#include <cstring>

#include "harness.h"

namespace kiln::simdiff {
namespace {

uint64_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// Pairs (and triples) of edge values crossed, then random patterns.
void crossed(const std::vector<uint64_t>& edges, uint64_t mask, std::vector<uint64_t>& a,
             std::vector<uint64_t>& b, std::vector<uint64_t>& c, uint64_t seed) {
  size_t e = edges.size();
  for (size_t i = 0; i < e * e; ++i) {
    a.push_back(edges[i % e]);
    b.push_back(edges[i / e]);
    c.push_back(edges[(i * 7 + 3) % e]);
  }
  for (int i = 0; i < 1024; ++i) {
    a.push_back(lcg(seed) & mask);
    b.push_back(lcg(seed) & mask);
    c.push_back(lcg(seed) & mask);
  }
}

std::vector<uint64_t> pack2(const std::vector<uint64_t>& lo, const std::vector<uint64_t>& hi) {
  std::vector<uint64_t> out(lo.size());
  for (size_t i = 0; i < lo.size(); ++i) out[i] = lo[i] | hi[(i + 5) % hi.size()] << 16;
  return out;
}

Case approx(const std::string& name, const std::vector<uint64_t>& in, Format f, int bits,
            double ulp, double abs_tol) {
  Case c = eval_case(name, name + " %d, %a;", bits, bits, in);
  c.format = f;
  c.exact = false;
  c.max_ulp = ulp;
  c.abs_tol = abs_tol;
  return c;
}

std::vector<uint64_t> range(float lo, float hi, int n, bool specials) {
  std::vector<uint64_t> v;
  if (specials)
    v = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x00000001, 0x007fffff};
  for (int i = 0; i < n; ++i)
    v.push_back(bits_of(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n)));
  return v;
}

}  // namespace

void add_math_cases(std::vector<Case>& cases) {
  std::vector<uint64_t> a, b, c;
  crossed(f32_edges(), 0xffffffff, a, b, c, 21);
  for (const char* r : {"rn", "rz", "rm", "rp"}) {
    std::string s = r;
    for (std::string op : {"add", "sub", "mul"}) {
      Case k = eval_case(op + "." + s + ".f32", op + "." + s + ".f32 %d, %a, %b;", 32, 32, a, b);
      k.format = Format::kF32;
      cases.push_back(k);
    }
    Case k = eval_case("fma." + s + ".f32", "fma." + s + ".f32 %d, %a, %b, %c;", 32, 32, a, b, c);
    k.format = Format::kF32;
    cases.push_back(k);
    k = eval_case("div." + s + ".f32", "div." + s + ".f32 %d, %a, %b;", 32, 32, a, b);
    k.format = Format::kF32;
    cases.push_back(k);
    k = eval_case("sqrt." + s + ".f32", "sqrt." + s + ".f32 %d, %a;", 32, 32, a);
    k.format = Format::kF32;
    cases.push_back(k);
    k = eval_case("rcp." + s + ".f32", "rcp." + s + ".f32 %d, %a;", 32, 32, a);
    k.format = Format::kF32;
    cases.push_back(k);
  }
  for (std::string op :
       {"add.rn.ftz.f32", "mul.rn.ftz.f32", "fma.rn.ftz.f32", "add.rn.sat.f32", "min.f32",
        "max.f32", "min.NaN.f32", "max.NaN.f32", "abs.f32", "neg.f32", "copysign.f32"}) {
    std::string operands = op.rfind("fma", 0) == 0                              ? " %d, %a, %b, %c;"
                           : op.rfind("abs", 0) == 0 || op.rfind("neg", 0) == 0 ? " %d, %a;"
                                                                                : " %d, %a, %b;";
    Case k = eval_case(op, op + operands, 32, 32, a, b, c);
    k.format = Format::kF32;
    cases.push_back(k);
  }
  // f64.
  {
    std::vector<uint64_t> d = {0,
                               0x8000000000000000ull,
                               1,
                               0x3ff0000000000000ull,
                               0x7fefffffffffffffull,
                               0x7ff0000000000000ull,
                               0xfff0000000000000ull,
                               0x7ff8000000000000ull,
                               0x3ff0000000000001ull,
                               0xbff8000000000000ull,
                               0x000fffffffffffffull,
                               0x4340000000000001ull};
    std::vector<uint64_t> x, y, z;
    crossed(d, ~0ull, x, y, z, 31);
    for (const char* op :
         {"add.rn.f64", "mul.rz.f64", "fma.rn.f64", "fma.rm.f64", "div.rn.f64", "sqrt.rp.f64"}) {
      std::string s = op;
      std::string operands = s.rfind("fma", 0) == 0    ? " %d, %a, %b, %c;"
                             : s.rfind("sqrt", 0) == 0 ? " %d, %a;"
                                                       : " %d, %a, %b;";
      Case k = eval_case(s, s + operands, 64, 64, x, y, z);
      k.format = Format::kF64;
      cases.push_back(k);
    }
  }
  // f16, f16x2, bf16, bf16x2.
  {
    std::vector<uint64_t> h, hb, hc, g, gb, gc;
    crossed(f16_edges(), 0xffff, h, hb, hc, 41);
    crossed(bf16_edges(), 0xffff, g, gb, gc, 43);
    for (const char* op : {"add.rn.f16", "mul.rn.f16", "fma.rn.f16", "sub.rn.f16",
                           "fma.rn.relu.f16", "fma.rn.sat.f16", "min.f16", "max.NaN.f16"}) {
      std::string s = op;
      Case k = eval_case(s, s + (s.rfind("fma", 0) == 0 ? " %d, %a, %b, %c;" : " %d, %a, %b;"), 16,
                         16, h, hb, hc);
      k.format = Format::kF16;
      cases.push_back(k);
    }
    std::vector<uint64_t> h2 = pack2(h, hc), hb2 = pack2(hb, h), hc2 = pack2(hc, hb);
    for (const char* op : {"add.rn.f16x2", "mul.rn.f16x2", "fma.rn.f16x2", "fma.rn.relu.f16x2",
                           "sub.rn.ftz.f16x2", "min.f16x2", "max.f16x2"}) {
      std::string s = op;
      Case k = eval_case(s, s + (s.rfind("fma", 0) == 0 ? " %d, %a, %b, %c;" : " %d, %a, %b;"), 32,
                         32, h2, hb2, hc2);
      k.format = Format::kF16;
      cases.push_back(k);
    }
    for (const char* op : {"add.rn.bf16", "mul.rn.bf16", "fma.rn.bf16", "fma.rn.relu.bf16"}) {
      std::string s = op;
      Case k = eval_case(s, s + (s.rfind("fma", 0) == 0 ? " %d, %a, %b, %c;" : " %d, %a, %b;"), 16,
                         16, g, gb, gc);
      k.format = Format::kBF16;
      cases.push_back(k);
    }
    std::vector<uint64_t> g2 = pack2(g, gc), gb2 = pack2(gb, g), gc2 = pack2(gc, gb);
    for (const char* op : {"add.rn.bf16x2", "mul.rn.bf16x2", "fma.rn.bf16x2", "sub.rn.bf16x2",
                           "min.bf16x2", "max.NaN.bf16x2"}) {
      std::string s = op;
      Case k = eval_case(s, s + (s.rfind("fma", 0) == 0 ? " %d, %a, %b, %c;" : " %d, %a, %b;"), 32,
                         32, g2, gb2, gc2);
      k.format = Format::kBF16;
      cases.push_back(k);
    }
    cases.push_back(approx("ex2.approx.f16x2", h2, Format::kF16, 32, 2, 0));
  }
  // Integer ops: bit-exact.
  {
    std::vector<uint64_t> x, y, z;
    std::vector<uint64_t> e = {0,          1,          2,          31,         32,
                               33,         0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe,
                               0x12345678, 0x0000ffff, 0x8000ffff};
    crossed(e, 0xffffffff, x, y, z, 51);
    for (const char* op : {"add.sat.s32",     "sub.sat.s32",     "mul.hi.s32",
                           "mul.hi.u32",      "mul.lo.u32",      "div.s32",
                           "div.u32",         "rem.s32",         "rem.u32",
                           "min.s32",         "max.u32",         "mad.hi.s32",
                           "mad.lo.s32",      "mul24.hi.u32",    "shf.l.wrap.b32",
                           "shf.r.clamp.b32", "shl.b32",         "shr.s32",
                           "bfe.u32",         "bfe.s32",         "bfi.b32",
                           "prmt.b32",        "popc.b32",        "clz.b32",
                           "brev.b32",        "bfind.u32",       "bfind.shiftamt.s32",
                           "dp4a.s32.u32",    "dp2a.lo.u32.s32", "szext.clamp.s32",
                           "bmsk.wrap.b32"}) {
      std::string s = op;
      std::string operands;
      if (s == "popc.b32" || s == "clz.b32" || s == "brev.b32" || s.rfind("bfind", 0) == 0) {
        operands = " %d, %a;";
      } else if (s.rfind("mad", 0) == 0 || s.rfind("shf", 0) == 0 || s.rfind("dp", 0) == 0 ||
                 s.rfind("prmt", 0) == 0) {
        operands = " %d, %a, %b, %c;";
      } else if (s.rfind("bfe", 0) == 0) {
        operands = " %d, %a, %b, %c;";
      } else if (s.rfind("bfi", 0) == 0) {
        operands = " %d, %a, %b, %c, %c;";
      } else {
        operands = " %d, %a, %b;";
      }
      // div/rem by zero are undefined in PTX: divide by b|1.
      std::string body = s.rfind("div", 0) == 0 || s.rfind("rem", 0) == 0
                             ? "or.b32 %r0, %b, 1;\n  " + s + " %d, %a, %r0;"
                             : s + operands;
      cases.push_back(eval_case(s, body, 32, 32, x, y, z));
    }
    cases.push_back(
        eval_case("mul.wide.s32", "mul.wide.s32 %x0, %a, %b;\n  mov.b64 %d, %x0;", 32, 64, x, y));
  }
  // .approx functions: ulp from the GPU, bound twice the documented error (or abs error).
  {
    cases.push_back(approx("ex2.approx.f32", range(-130, 130, 2048, true), Format::kF32, 32, 4, 0));
    cases.push_back(
        approx("ex2.approx.ftz.f32", range(-125, 128, 2048, true), Format::kF32, 32, 4, 0));
    cases.push_back(
        approx("lg2.approx.f32", range(1e-6f, 1e6f, 1024, true), Format::kF32, 32, 4, 0x1p-21));
    cases.push_back(
        approx("lg2.approx.ftz.f32", range(0.5f, 2.0f, 2048, false), Format::kF32, 32, 4, 0x1p-21));
    cases.push_back(approx("sin.approx.f32", range(-3.14159f, 3.14159f, 2048, true), Format::kF32,
                           32, 4, 1.4e-6));
    cases.push_back(approx("cos.approx.f32", range(-3.14159f, 3.14159f, 2048, true), Format::kF32,
                           32, 4, 1.4e-6));
    cases.push_back(approx("sin.approx.ftz.f32", range(-100.0f, 100.0f, 2048, false), Format::kF32,
                           32, 4, 1.4e-6));
    cases.push_back(
        approx("rcp.approx.f32", range(-1e4f, 1e4f, 2048, true), Format::kF32, 32, 2, 0));
    // f64: powers of two, thirds, low words that are not zero (the H200 reads the high word
    // only), and a spread of random doubles.
    std::vector<uint64_t> f64_in = {
        0x3ff0000000000000ull, 0x4000000000000000ull, 0x3ff8000000000000ull, 0xc08f400000000000ull,
        0x3ff0000000000001ull, 0x3ff80000ffffffffull, 0x4008000000000000ull, 0xbfd5555555555555ull};
    uint64_t seed = 97;
    for (int i = 0; i < 512; ++i) {
      const uint64_t exponent = 0x300 + lcg(seed) % 0x200;  // 2^-255 .. 2^256
      f64_in.push_back((lcg(seed) & 1) << 63 | exponent << 52 |
                       ((lcg(seed) << 32 ^ lcg(seed)) & 0xfffffffffffffull));
    }
    // The simulator truncates the exact reciprocal of the high word; the H200's unit is off by
    // one in the last place of that 32-bit high word on 30 of 520 values (2026-11-30), so
    // the bound is two such places: 2^33 f64 ulps, a relative error of 2^-19.
    cases.push_back(approx("rcp.approx.ftz.f64", f64_in, Format::kF64, 64, 0x1p33, 0));
    cases.push_back(
        approx("rsqrt.approx.f32", range(1e-3f, 1e5f, 2048, true), Format::kF32, 32, 4, 0));
    cases.push_back(
        approx("sqrt.approx.f32", range(0.0f, 1e5f, 2048, true), Format::kF32, 32, 4, 0));
    cases.push_back(
        approx("tanh.approx.f32", range(-10.0f, 10.0f, 2048, true), Format::kF32, 32, 8192, 0));
  }
}

}  // namespace kiln::simdiff
