// Warp-level matrix instructions with the fragment ownership of the PTX ISA: ldmatrix and
// stmatrix (m8n8, .x1/.x2/.x4, .trans, b16) and mma.sync for m16n8k8 and m16n8k16 with f16 or
// bf16 inputs (f32 or f16 accumulators), m16n8k16/k32 with e4m3/e5m2 inputs in any mix (f32 or
// f16 accumulators), m16n8k4/k8 tf32, and m8n8k16, m16n8k16 and m16n8k32 with s8/u8 inputs in
// any mix (s32 accumulators, wrapped or .satfinite). Products are exact and sums are taken in
// double, rounded once to the accumulator type (exact for the integer forms).
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "decoder.h"
#include "lane_ops.h"
#include "memory_access.h"
#include "mma_element.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::OperandKind;
using ptx::Type;

// For an observer: the row lane i gave (16 bytes at shared offset offsets[i]) counts as its own
// access, as the lanes of a .sync.aligned collective reach it together.
void observe_rows(Exec& x, const Inst& in, AccessKind kind, const uint32_t* offsets,
                  uint32_t rows) {
  uint64_t addresses[32];
  for_lanes(rows, [&](uint32_t l) { addresses[l] = offsets[l]; });
  observe_access(x, Space::Shared, kind, Ordering::Weak, in, addresses, rows, 16);
}

// ldmatrix: ops: r[0..n), base. vec = matrices, flags 1 = trans.
void ldmatrix(Exec& x, const Inst& in, uint32_t mask) {
  if (mask != 0xffffffffu) {
    x.fault(in, static_cast<uint32_t>(std::countr_zero(~mask)), "barrier_divergence", 0,
            "ldmatrix.sync.aligned needs all 32 threads of the warp; lane " +
                std::to_string(std::countr_zero(~mask)) + " is not active here");
    return;
  }
  const uint32_t* o = x.ops(in);
  uint32_t matrices = in.vec;
  const uint64_t* base = x.reg(o[matrices]);
  bool trans = in.flags & 1;
  uint16_t m[4][8][8];
  uint32_t offsets[32];
  for (uint32_t i = 0; i < matrices; ++i) {
    for (uint32_t r = 0; r < 8; ++r) {
      uint32_t lane = i * 8 + r;
      uint64_t address = base[lane] + static_cast<uint64_t>(in.imm);
      uint32_t off = x.shared_offset(in.space, address, 16, lane, in);
      if (off == UINT32_MAX) return;
      if (off % 16 != 0) {
        x.fault(in, lane, "misaligned", address,
                "ldmatrix row addresses must be 16-byte aligned; lane " + std::to_string(lane) +
                    " gave shared offset " + std::to_string(off));
        return;
      }
      offsets[lane] = off;
      std::memcpy(m[i][r], x.cta->shared.data() + off, 16);
    }
  }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t row = lane / 4, col = (lane % 4) * 2;
    for (uint32_t i = 0; i < matrices; ++i) {
      uint16_t lo = trans ? m[i][col][row] : m[i][row][col];
      uint16_t hi = trans ? m[i][col + 1][row] : m[i][row][col + 1];
      x.reg(o[i])[lane] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
  }
  x.counters.bytes[static_cast<size_t>(Space::Shared)] += matrices * 128;
  uint32_t rows = matrices == 4 ? 0xffffffffu : (1u << (matrices * 8)) - 1;
  x.counters.bank_conflicts += bank_conflicts(offsets, rows, 16);
  if (x.observer != nullptr) [[unlikely]] {
    observe_rows(x, in, AccessKind::Read, offsets, rows);
  }
}

// stmatrix: ops: base, r[0..n).
void stmatrix(Exec& x, const Inst& in, uint32_t mask) {
  if (mask != 0xffffffffu) {
    x.fault(in, static_cast<uint32_t>(std::countr_zero(~mask)), "barrier_divergence", 0,
            "stmatrix.sync.aligned needs all 32 threads of the warp");
    return;
  }
  const uint32_t* o = x.ops(in);
  uint32_t matrices = in.vec;
  const uint64_t* base = x.reg(o[0]);
  bool trans = in.flags & 1;
  uint16_t m[4][8][8];
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t row = lane / 4, col = (lane % 4) * 2;
    for (uint32_t i = 0; i < matrices; ++i) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[1 + i])[lane]);
      uint16_t lo = static_cast<uint16_t>(v), hi = static_cast<uint16_t>(v >> 16);
      if (trans) {
        m[i][col][row] = lo;
        m[i][col + 1][row] = hi;
      } else {
        m[i][row][col] = lo;
        m[i][row][col + 1] = hi;
      }
    }
  }
  uint32_t offsets[32];
  for (uint32_t i = 0; i < matrices; ++i) {
    for (uint32_t r = 0; r < 8; ++r) {
      uint32_t lane = i * 8 + r;
      uint64_t address = base[lane] + static_cast<uint64_t>(in.imm);
      uint32_t off = x.shared_offset(in.space, address, 16, lane, in);
      if (off == UINT32_MAX) return;
      offsets[lane] = off;
      std::memcpy(x.cta->shared.data() + off, m[i][r], 16);
    }
  }
  x.counters.bytes[static_cast<size_t>(Space::Shared)] += matrices * 128;
  if (x.observer != nullptr) [[unlikely]] {
    observe_rows(x, in, AccessKind::Write, offsets,
                 matrices == 4 ? 0xffffffffu : (1u << (matrices * 8)) - 1);
  }
}

// The register counts of one mma.sync form: A, B, and C/D (which share a type).
struct MmaShape {
  uint32_t m = 0, k = 0;
  uint32_t na = 0, nb = 0, nd = 0;
};

MmaShape mma_shape(uint32_t m, uint32_t k, MmaElement a, MmaElement b, MmaElement acc) {
  MmaShape s{m, k};
  s.na = m * k / 32 / (32 / mma_element_bits(a));
  s.nb = k * 8 / 32 / (32 / mma_element_bits(b));
  s.nd = m * 8 / 32 / (acc == MmaElement::F16 ? 2 : 1);
  return s;
}

// Row and column of element `e` of A register `r` held by the lane of group g, thread t.
void a_position(const MmaShape& s, uint32_t per_reg, uint32_t g, uint32_t t, uint32_t r, uint32_t e,
                uint32_t& row, uint32_t& col) {
  row = g + 8 * (r & 1);
  if (per_reg == 1) {  // tf32
    col = t + 4 * (r >> 1);
    if (s.k == 4) row = g + 8 * r, col = t;
  } else {
    col = per_reg * t + e + (s.k / 2) * (r >> 1);
  }
}

// mma.sync mMn8kK: ops: d[nd], a[na], b[nb], c[nd]. width = K, vec = M, mode = A element,
// flags = B element, target = C/D element, imm = 1 with .satfinite.
void mma(Exec& x, const Inst& in, uint32_t mask) {
  if (mask != 0xffffffffu) {
    x.fault(in, static_cast<uint32_t>(std::countr_zero(~mask)), "barrier_divergence", 0,
            "mma.sync.aligned needs all 32 threads of the warp converged and active");
    return;
  }
  const uint32_t* o = x.ops(in);
  MmaElement ea = static_cast<MmaElement>(in.mode), eb = static_cast<MmaElement>(in.flags);
  MmaElement acc = static_cast<MmaElement>(in.target);
  MmaShape s = mma_shape(in.vec, in.width, ea, eb, acc);
  uint32_t bits_a = mma_element_bits(ea), bits_b = mma_element_bits(eb);
  uint32_t per_a = 32 / bits_a, per_b = 32 / bits_b;
  uint32_t mask_a = bits_a == 32 ? 0xffffffffu : (1u << bits_a) - 1;
  uint32_t mask_b = bits_b == 32 ? 0xffffffffu : (1u << bits_b) - 1;
  double a[16][32] = {}, b[32][8] = {}, c[16][8] = {};
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane >> 2, t = lane & 3;
    for (uint32_t r = 0; r < s.na; ++r) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[s.nd + r])[lane]);
      for (uint32_t e = 0; e < per_a; ++e) {
        uint32_t row, col;
        a_position(s, per_a, g, t, r, e, row, col);
        a[row][col] = mma_element_value((v >> (bits_a * e)) & mask_a, ea);
      }
    }
    for (uint32_t r = 0; r < s.nb; ++r) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[s.nd + s.na + r])[lane]);
      for (uint32_t e = 0; e < per_b; ++e) {
        uint32_t kk = per_b == 1 ? t + 4 * r : per_b * t + e + (s.k / 2) * r;
        b[kk][g] = mma_element_value((v >> (bits_b * e)) & mask_b, eb);
      }
    }
    for (uint32_t r = 0; r < s.nd; ++r) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[s.nd + s.na + s.nb + r])[lane]);
      if (acc == MmaElement::F16) {
        c[g + 8 * r][2 * t] = mma_element_value(v & 0xffff, acc);
        c[g + 8 * r][2 * t + 1] = mma_element_value(v >> 16, acc);
      } else {
        c[g + 8 * (r >> 1)][2 * t + (r & 1)] = mma_element_value(v, acc);
      }
    }
  }
  uint32_t dm[16][8];
  for (uint32_t i = 0; i < s.m; ++i) {
    for (uint32_t j = 0; j < 8; ++j) {
      double sum = c[i][j];
      for (uint32_t kk = 0; kk < s.k; ++kk) sum += a[i][kk] * b[kk][j];
      dm[i][j] = accumulator_bits(sum, acc, in.imm & 1);
    }
  }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane >> 2, t = lane & 3;
    for (uint32_t r = 0; r < s.nd; ++r) {
      if (acc == MmaElement::F16) {
        x.reg(o[r])[lane] = dm[g + 8 * r][2 * t] | (dm[g + 8 * r][2 * t + 1] << 16);
      } else {
        x.reg(o[r])[lane] = dm[g + 8 * (r >> 1)][2 * t + (r & 1)];
      }
    }
  }
}

bool push_list(Decoder& d, const ptx::Operand& op, size_t n) {
  if (op.kind == OperandKind::Vector) {
    if (op.elements.size() != n) return false;
    for (const ptx::Operand& e : op.elements) d.push(d.value(e, Type::B32));
    return true;
  }
  if (n != 1) return false;
  d.push(d.value(op, Type::B32));
  return true;
}

}  // namespace

bool decode_matrix(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Tensor;
  if (in.opcode == Opcode::Ldmatrix || in.opcode == Opcode::Stmatrix) {
    if (!in.has_modifier("m8n8") || in.type() != Type::B16 || in.operands.size() != 2) {
      return false;
    }
    out.vec = in.has_modifier("x4") ? 4 : in.has_modifier("x2") ? 2 : 1;
    out.flags = in.has_modifier("trans") ? 1 : 0;
    out.space = space_of(in.state_space());
    if (out.space != Space::Shared && out.space != Space::Generic) return false;
    bool load = in.opcode == Opcode::Ldmatrix;
    const ptx::Operand& regs = load ? in.operands[0] : in.operands[1];
    Address a = d.address(load ? in.operands[1] : in.operands[0]);
    out.imm = a.offset;
    if (!load) d.push(a.base);
    if (!push_list(d, regs, out.vec)) return false;
    if (load) d.push(a.base);
    out.fn = load ? &ldmatrix : &stmatrix;
    out.klass = load ? InstClass::Load : InstClass::Store;
    return true;
  }
  if (in.opcode != Opcode::Mma || !in.has_modifier("sync") || in.operands.size() != 4) return false;
  if (in.types.size() != 4) return false;
  uint32_t m = 0, k = 0;
  for (const std::string& mod : in.modifiers) {
    uint32_t mm = 0, kk = 0;
    if (std::sscanf(mod.c_str(), "m%un8k%u", &mm, &kk) == 2) m = mm, k = kk;
  }
  if (k == 0 || !in.has_modifier("row") || !in.has_modifier("col")) return false;
  std::optional<MmaElement> ed = mma_element_of(in.types[0]), ea = mma_element_of(in.types[1]),
                            eb = mma_element_of(in.types[2]), ec = mma_element_of(in.types[3]);
  if (!ed || !ea || !eb || !ec) {
    d.fail("mma with these element types (f64, 4-bit or single-bit inputs) is not supported yet");
    return false;
  }
  if (*ed != *ec) {
    d.fail("mma of this shape needs the same .dtype and .ctype (PTX ISA)");
    return false;
  }
  using E = MmaElement;
  auto is = [](E e, std::initializer_list<E> set) {
    return std::find(set.begin(), set.end(), e) != set.end();
  };
  bool fp8 = is(*ea, {E::E4M3, E::E5M2}) && is(*eb, {E::E4M3, E::E5M2});
  bool int8 = is(*ea, {E::S8, E::U8}) && is(*eb, {E::S8, E::U8});
  bool valid = false;
  if (int8) {
    valid = *ed == E::S32 && (m == 16 ? (k == 16 || k == 32) : (m == 8 && k == 16));
  } else if (m == 16 && is(*ed, {E::F32, E::F16})) {
    bool f32_only = *ed == E::F32;
    valid = (fp8 && (k == 16 || k == 32)) ||
            (*ea == E::F16 && *eb == E::F16 && (k == 8 || k == 16)) ||
            (f32_only && *ea == E::BF16 && *eb == E::BF16 && (k == 8 || k == 16)) ||
            (f32_only && *ea == E::TF32 && *eb == E::TF32 && (k == 4 || k == 8));
  }
  bool satfinite = in.has_modifier("satfinite");
  if (!valid || (satfinite && !int8)) {
    d.fail("this mma shape and type combination is not one the simulator implements");
    return false;
  }
  out.width = static_cast<uint8_t>(k);
  out.vec = static_cast<uint8_t>(m);
  out.mode = static_cast<uint8_t>(*ea);
  out.flags = static_cast<uint8_t>(*eb);
  out.target = static_cast<uint32_t>(*ed);
  out.imm = satfinite ? 1 : 0;
  MmaShape shape = mma_shape(m, k, *ea, *eb, *ed);
  if (!push_list(d, in.operands[0], shape.nd) || !push_list(d, in.operands[1], shape.na) ||
      !push_list(d, in.operands[2], shape.nb) || !push_list(d, in.operands[3], shape.nd)) {
    return false;
  }
  out.fn = &mma;
  return true;
}

}  // namespace kiln::sim
