#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace kiln::simdiff {

std::string ptx_header() { return ".version 8.5\n.target sm_90a\n.address_size 64\n\n"; }

uint64_t lcg(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 17;
}

namespace {

constexpr uint32_t kEvalBlock = 128;

#define KILN_TRY(expr)                  \
  do {                                  \
    std::string kiln_e = (expr);        \
    if (!kiln_e.empty()) return kiln_e; \
  } while (0)

template <typename T>
std::string put(Backend& b, const std::vector<T>& v, uint64_t* address) {
  size_t bytes = std::max<size_t>(4, v.size() * sizeof(T));
  KILN_TRY(b.allocate(bytes, address));
  return v.empty() ? "" : b.upload(*address, v.data(), v.size() * sizeof(T));
}

// Orders float bit patterns so that neighbours differ by one; NaN is far from everything.
int64_t ordered(uint64_t bits, int width) {
  uint64_t sign = bits >> (width - 1) & 1;
  uint64_t mag = bits & ((1ull << (width - 1)) - 1);
  return sign ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
}

bool is_nan(uint64_t bits, int width, int mantissa) {
  uint64_t mag = bits & ((1ull << (width - 1)) - 1);
  return mag > ((((1ull << (width - 1 - mantissa)) - 1) << mantissa));
}

double to_double(uint64_t bits, Format f) {
  switch (f) {
    case Format::kF32: {
      float x;
      uint32_t u = static_cast<uint32_t>(bits);
      std::memcpy(&x, &u, 4);
      return x;
    }
    case Format::kF64: {
      double x;
      std::memcpy(&x, &bits, 8);
      return x;
    }
    case Format::kBF16: {
      float x;
      uint32_t u = static_cast<uint32_t>(bits) << 16;
      std::memcpy(&x, &u, 4);
      return x;
    }
    case Format::kF16: {
      uint32_t e = bits >> 10 & 31, m = bits & 1023;
      double v = e == 0    ? std::ldexp(m, -24)
                 : e == 31 ? (m ? NAN : INFINITY)
                           : std::ldexp(1024 + m, static_cast<int>(e) - 25);
      return (bits >> 15 & 1) ? -v : v;
    }
    default:
      return static_cast<double>(bits);
  }
}

std::string hex(uint64_t v, int bits) {
  std::ostringstream o;
  o << "0x" << std::hex;
  o.width(bits / 4);
  o.fill('0');
  o << v;
  return o.str();
}

}  // namespace

Case eval_case(const std::string& name, const std::string& body, int in_bits, int out_bits,
               std::vector<uint64_t> a, std::vector<uint64_t> b, std::vector<uint64_t> c) {
  size_t n = a.size();
  size_t padded = (n + kEvalBlock - 1) / kEvalBlock * kEvalBlock;
  b.resize(n, 0);
  c.resize(n, 0);
  std::string ib = std::to_string(in_bits), ob = std::to_string(out_bits);
  std::string ptx =
      ptx_header() +
      R"(.visible .entry eval(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)
{
  .reg .b64 %rd<16>;
  .reg .b32 %t, %r<8>;
  .reg .b16 %h<8>;
  .reg .b64 %x<8>;
  .reg .f32 %f<8>;
  .reg .pred %p, %q, %s;
  .reg .b)" +
      ib + R"( %a, %b, %c;
  .reg .b)" +
      ob + R"( %d;
  mov.u32 %t, %tid.x;
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %ntid.x;
  mad.lo.u32 %t, %r0, %r1, %t;
  mul.wide.u32 %rd5, %t, 8;
  ld.param.u64 %rd1, [pa];
  add.s64 %rd1, %rd1, %rd5;
  ld.global.b)" +
      ib + R"( %a, [%rd1];
  ld.param.u64 %rd2, [pb];
  add.s64 %rd2, %rd2, %rd5;
  ld.global.b)" +
      ib + R"( %b, [%rd2];
  ld.param.u64 %rd3, [pc];
  add.s64 %rd3, %rd3, %rd5;
  ld.global.b)" +
      ib + R"( %c, [%rd3];
  ld.param.u64 %rd4, [pd];
  add.s64 %rd4, %rd4, %rd5;
  ld.global.b)" +
      ob + R"( %d, [%rd4];
  mov.u32 %r0, 0;
  mov.u32 %r1, 0;
  )" + body +
      R"(
  st.global.b)" +
      ob + R"( [%rd4], %d;
  ret;
}
)";
  Case k;
  k.name = name;
  k.out_bits = out_bits;
  k.inputs = {a, b, c};
  k.run = [ptx, a, b, c, n, padded, name](Backend& be, std::vector<uint64_t>* out) -> std::string {
    KILN_TRY(be.load(ptx, name));
    std::vector<uint64_t> pa = a, pb = b, pc = c;
    pa.resize(padded, 0);
    pb.resize(padded, 0);
    pc.resize(padded, 0);
    uint64_t da = 0, db = 0, dc = 0, dd = 0;
    KILN_TRY(put(be, pa, &da));
    KILN_TRY(put(be, pb, &db));
    KILN_TRY(put(be, pc, &dc));
    KILN_TRY(put(be, std::vector<uint64_t>(padded, 0), &dd));
    KILN_TRY(be.launch("eval", {static_cast<uint32_t>(padded / kEvalBlock)}, {kEvalBlock}, 0,
                       Params().add(da).add(db).add(dc).add(dd)));
    out->assign(padded, 0);
    KILN_TRY(be.download(out->data(), dd, padded * 8));
    out->resize(n);
    return "";
  };
  return k;
}

Case fragment_case(const std::string& name, const std::string& body, uint32_t threads,
                   std::vector<uint32_t> in, uint32_t in_per_thread, uint32_t out_per_thread,
                   std::vector<uint32_t> smem) {
  in.resize(static_cast<size_t>(threads) * in_per_thread, 0);
  if (smem.empty()) smem.assign(4, 0);
  std::string nin = std::to_string(in_per_thread), nout = std::to_string(out_per_thread);
  std::string loads, stores, zero;
  for (uint32_t k = 0; k < in_per_thread; ++k) {
    loads += "  ld.global.b32 %i" + std::to_string(k) + ", [%rd3+" + std::to_string(4 * k) + "];\n";
  }
  for (uint32_t k = 0; k < out_per_thread; ++k) {
    zero += "  mov.b32 %o" + std::to_string(k) + ", 0;\n";
    stores +=
        "  st.global.b32 [%rd4+" + std::to_string(4 * k) + "], %o" + std::to_string(k) + ";\n";
  }
  std::string ptx = ptx_header() +
                    R"(.visible .entry frag(.param .u64 pin, .param .u64 pout, .param .u64 psm)
{
  .shared .align 1024 .b8 sm[)" +
                    std::to_string(smem.size() * 4) + R"(];
  .reg .b32 %i<)" + nin +
                    R"(>, %o<)" + nout + R"(>, %t<16>, %sa, %me, %w;
  .reg .b64 %rd<8>, %x<8>;
  .reg .f32 %f<8>;
  .reg .pred %p<4>;
  mov.u32 %me, %tid.x;
  mov.u32 %sa, sm;
  ld.param.u64 %rd1, [psm];
  mov.u32 %w, %me;
COPY:
  setp.ge.u32 %p0, %w, )" +
                    std::to_string(smem.size()) + R"(;
  @%p0 bra COPIED;
  mul.wide.u32 %rd2, %w, 4;
  add.s64 %rd2, %rd1, %rd2;
  ld.global.b32 %t0, [%rd2];
  shl.b32 %t1, %w, 2;
  add.u32 %t1, %sa, %t1;
  st.shared.b32 [%t1], %t0;
  add.u32 %w, %w, )" +
                    std::to_string(threads) + R"(;
  bra COPY;
COPIED:
  bar.sync 0;
  mul.wide.u32 %rd2, %me, )" +
                    std::to_string(4 * in_per_thread) + R"(;
  ld.param.u64 %rd3, [pin];
  add.s64 %rd3, %rd3, %rd2;
)" + loads + zero + body +
                    R"(
  mul.wide.u32 %rd2, %me, )" +
                    std::to_string(4 * out_per_thread) + R"(;
  ld.param.u64 %rd4, [pout];
  add.s64 %rd4, %rd4, %rd2;
)" + stores + R"(  ret;
}
)";
  Case k;
  k.name = name;
  k.out_bits = 32;
  std::vector<uint64_t> in64(in.begin(), in.end());
  k.inputs = {in64};
  size_t nout_total = static_cast<size_t>(threads) * out_per_thread;
  k.run = [ptx, in, smem, threads, nout_total, name](Backend& be,
                                                     std::vector<uint64_t>* out) -> std::string {
    KILN_TRY(be.load(ptx, name));
    uint64_t din = 0, dsm = 0, dout = 0;
    KILN_TRY(put(be, in, &din));
    KILN_TRY(put(be, smem, &dsm));
    KILN_TRY(put(be, std::vector<uint32_t>(nout_total, 0), &dout));
    KILN_TRY(be.launch("frag", {1}, {threads}, 0, Params().add(din).add(dout).add(dsm)));
    std::vector<uint32_t> words(nout_total);
    KILN_TRY(be.download(words.data(), dout, nout_total * 4));
    out->assign(words.begin(), words.end());
    return "";
  };
  return k;
}

CaseResult compare(const Case& c, const std::vector<uint64_t>& gpu,
                   const std::vector<uint64_t>& sim) {
  CaseResult r;
  r.name = c.name;
  r.exact = c.exact;
  r.bound_ulp = c.max_ulp;
  r.bound_abs = c.abs_tol;
  int lane = c.format == Format::kF16 || c.format == Format::kBF16 ? 16
             : c.format == Format::kF32                            ? 32
             : c.format == Format::kF64                            ? 64
                                                                   : c.out_bits;
  int mantissa = c.format == Format::kF16    ? 10
                 : c.format == Format::kBF16 ? 7
                 : c.format == Format::kF32  ? 23
                                             : 52;
  size_t n = std::min(gpu.size(), sim.size());
  r.values = n;
  bool within = gpu.size() == sim.size();
  for (size_t i = 0; i < n; ++i) {
    uint64_t care = i < c.care.size() ? c.care[i] : ~0ull;
    if (((gpu[i] ^ sim[i]) & care) == 0) {
      ++r.agree;
      continue;
    }
    double worst = 0;
    bool ok = true;
    for (int s = 0; s < c.out_bits; s += lane) {
      uint64_t mask = lane == 64 ? ~0ull : (1ull << lane) - 1;
      uint64_t g = gpu[i] >> s & mask, m = sim[i] >> s & mask;
      if (g == m) continue;
      double ulp = INFINITY;
      if (c.format != Format::kBits) {
        bool gn = is_nan(g, lane, mantissa), mn = is_nan(m, lane, mantissa);
        if (gn && mn)
          ulp = 0;
        else if (!gn && !mn)
          ulp = static_cast<double>(std::llabs(ordered(g, lane) - ordered(m, lane)));
        if (!c.exact && ulp > c.max_ulp &&
            !(std::fabs(to_double(g, c.format) - to_double(m, c.format)) <= c.abs_tol)) {
          ok = false;
        }
      }
      worst = std::max(worst, ulp);
    }
    if (c.exact || !ok) within = false;
    r.max_ulp = std::max(r.max_ulp, worst);
    if (r.examples.size() < 8 && (c.exact || !ok)) {
      std::string e = "[" + std::to_string(i) + "]";
      for (size_t k = 0; k < c.inputs.size(); ++k) {
        if (i < c.inputs[k].size())
          e += " " + std::string(1, static_cast<char>('a' + k)) + "=" + hex(c.inputs[k][i], 16);
      }
      e += " gpu=" + hex(gpu[i], c.out_bits) + " sim=" + hex(sim[i], c.out_bits);
      r.examples.push_back(e);
    }
  }
  if (c.exact) within = within && r.agree == n;
  r.passed = within;
  return r;
}

std::vector<uint64_t> f32_edges() {
  std::vector<uint64_t> v = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000,
      0x3f800000, 0xbf800000, 0x3fc00000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,
      0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff,
      // f16 limits and halfway cases
      0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0xc77ff000, 0x33800000, 0x33000000,
      0x33400000, 0x33c00000, 0x38800000, 0x387fe000, 0x387ff000, 0x3f801000, 0x3f803000,
      0x3f801001, 0xbf801000,
      // bf16 halfway cases
      0x3f808000, 0x3f818000, 0x3f808001, 0xbf808000, 0x7f7f8000, 0x7f7fffff, 0x00008000,
      // e4m3 / e5m2 limits
      0x43e00000, 0x43e80000, 0x43f00000, 0x43fa0000, 0xc3e80000, 0x3b000000, 0x3a800000,
      0x3ac00000, 0x47600000, 0x47700000, 0x47800000, 0xc7700000, 0x37800000, 0x37000000,
      // integer boundaries and halves
      0x3f000000, 0xbf000000, 0x40200000, 0xc0200000, 0x40600000, 0x4f000000, 0xcf000000,
      0x4effffff, 0x4f800000, 0x5f000000, 0xdf000000, 0x501502f9, 0xd01502f9, 0x4b800001,
      0x4b000001, 0x3effffff};
  return v;
}

std::vector<uint64_t> f16_edges() {
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3555,
          0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x5b00, 0x5f00, 0x5f80,
          0x7800, 0x1800, 0x1400, 0x2000, 0x3800, 0x3e00, 0x4100, 0x4200, 0xc100, 0x0200};
}

std::vector<uint64_t> bf16_edges() {
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x3f81,
          0x3eab, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0x43e0,
          0x43f0, 0x4760, 0x4770, 0x3b00, 0x3f00, 0x4020, 0xc020, 0x0040};
}

}  // namespace kiln::simdiff
