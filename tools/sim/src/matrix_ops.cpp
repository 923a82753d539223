// Warp-level matrix instructions with the fragment ownership of the PTX ISA: ldmatrix and
// stmatrix (m8n8, .x1/.x2/.x4, .trans, b16) and mma.sync for m16n8k8 and m16n8k16 with f16 or
// bf16 inputs (f32 or f16 accumulators), m16n8k32 with e4m3/e5m2 inputs, and m16n8k4/k8 tf32.
// Products are exact and sums are taken in double, rounded once to the accumulator type.
#include <bit>
#include <cstring>

#include "decoder.h"
#include "lane_ops.h"
#include "memory_access.h"
#include "mma_element.h"

namespace kiln::sim {

namespace {

using ptx::Opcode;
using ptx::OperandKind;
using ptx::Type;

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
  x.counters.bank_conflicts +=
      bank_conflicts(offsets, (matrices == 4 ? 0xffffffffu : (1u << (matrices * 8)) - 1), 16);
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
  for (uint32_t i = 0; i < matrices; ++i) {
    for (uint32_t r = 0; r < 8; ++r) {
      uint32_t lane = i * 8 + r;
      uint64_t address = base[lane] + static_cast<uint64_t>(in.imm);
      uint32_t off = x.shared_offset(in.space, address, 16, lane, in);
      if (off == UINT32_MAX) return;
      std::memcpy(x.cta->shared.data() + off, m[i][r], 16);
    }
  }
  x.counters.bytes[static_cast<size_t>(Space::Shared)] += matrices * 128;
}

using Elem = MmaElement;
using enum MmaElement;

// mma.sync m16n8kK: ops: d[nd], a[na], b[nb], c[nc]. width = K; mode = A/B element; target =
// accumulator (F16 or F32); vec = element type of C.
void mma(Exec& x, const Inst& in, uint32_t mask) {
  if (mask != 0xffffffffu) {
    x.fault(in, static_cast<uint32_t>(std::countr_zero(~mask)), "barrier_divergence", 0,
            "mma.sync.aligned needs all 32 threads of the warp converged and active");
    return;
  }
  const uint32_t* o = x.ops(in);
  uint32_t k = in.width;
  Elem ab = static_cast<Elem>(in.mode);
  Elem acc = static_cast<Elem>(in.target);
  Elem c_elem = static_cast<Elem>(in.vec);
  uint32_t ebits = mma_element_bits(ab);
  uint32_t per_reg = 32 / ebits;
  uint32_t na = 16 * k / 32 / per_reg, nb = k * 8 / 32 / per_reg;
  uint32_t nd = acc == F32 ? 4 : 2, nc = c_elem == F32 ? 4 : 2;
  double a[16][32] = {}, b[32][8] = {}, c[16][8] = {};
  uint32_t emask = ebits == 32 ? 0xffffffffu : (1u << ebits) - 1;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane >> 2, t = lane & 3;
    for (uint32_t r = 0; r < na; ++r) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[nd + r])[lane]);
      for (uint32_t e = 0; e < per_reg; ++e) {
        uint32_t row = g + 8 * (r & 1), col;
        if (per_reg == 1) {
          col = t + 4 * (r >> 1);
          if (k == 4) row = g + 8 * r, col = t;
        } else {
          col = per_reg * t + e + (k / 2) * (r >> 1);
        }
        a[row][col] = mma_element_value((v >> (ebits * e)) & emask, ab);
      }
    }
    for (uint32_t r = 0; r < nb; ++r) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[nd + na + r])[lane]);
      for (uint32_t e = 0; e < per_reg; ++e) {
        uint32_t kk = per_reg == 1 ? t + 4 * r : per_reg * t + e + (k / 2) * r;
        b[kk][g] = mma_element_value((v >> (ebits * e)) & emask, ab);
      }
    }
    for (uint32_t r = 0; r < nc; ++r) {
      uint32_t v = static_cast<uint32_t>(x.reg(o[nd + na + nb + r])[lane]);
      if (c_elem == F32) {
        c[g + 8 * (r >> 1)][2 * t + (r & 1)] = mma_element_value(v, F32);
      } else {
        c[g + 8 * r][2 * t] = mma_element_value(v & 0xffff, F16);
        c[g + 8 * r][2 * t + 1] = mma_element_value(v >> 16, F16);
      }
    }
  }
  float dm[16][8];
  uint16_t hm[16][8];
  for (uint32_t i = 0; i < 16; ++i) {
    for (uint32_t j = 0; j < 8; ++j) {
      double s = c[i][j];
      for (uint32_t kk = 0; kk < k; ++kk) s += a[i][kk] * b[kk][j];
      dm[i][j] = static_cast<float>(s);
      if (acc == F16) hm[i][j] = static_cast<uint16_t>(double_to_small(s, kF16, 0, false));
    }
  }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane >> 2, t = lane & 3;
    for (uint32_t r = 0; r < nd; ++r) {
      if (acc == F32) {
        x.reg(o[r])[lane] = std::bit_cast<uint32_t>(dm[g + 8 * (r >> 1)][2 * t + (r & 1)]);
      } else {
        x.reg(o[r])[lane] = static_cast<uint32_t>(hm[g + 8 * r][2 * t]) |
                            (static_cast<uint32_t>(hm[g + 8 * r][2 * t + 1]) << 16);
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

// F32 for anything else: the decoder checks the types first.
Elem elem_of(Type t) { return mma_element_of(t).value_or(F32); }

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
  Type dt = in.types[0], at = in.types[1], bt = in.types[2], ct = in.types[3];
  uint32_t k = in.has_modifier("m16n8k16")   ? 16
               : in.has_modifier("m16n8k8")  ? 8
               : in.has_modifier("m16n8k32") ? 32
               : in.has_modifier("m16n8k4")  ? 4
                                             : 0;
  if (k == 0 || !in.has_modifier("row") || !in.has_modifier("col")) return false;
  bool fp8 = (at == Type::E4M3 || at == Type::E5M2) && (bt == Type::E4M3 || bt == Type::E5M2);
  bool half = (at == Type::F16 || at == Type::BF16) && at == bt;
  bool tf32 = at == Type::TF32 && bt == Type::TF32;
  if (!(fp8 && k == 32) && !(half && (k == 8 || k == 16)) && !(tf32 && (k == 4 || k == 8))) {
    return false;
  }
  if (fp8 && at != bt) {
    d.fail("mma with mixed e4m3/e5m2 inputs is not supported yet");
    return false;
  }
  if (dt != Type::F32 && dt != Type::F16) return false;
  if (ct != Type::F32 && ct != Type::F16) return false;
  if (at == Type::BF16 && dt != Type::F32) return false;
  out.width = static_cast<uint8_t>(k);
  out.mode = static_cast<uint8_t>(elem_of(at));
  out.target = static_cast<uint32_t>(dt == Type::F32 ? F32 : F16);
  out.vec = static_cast<uint8_t>(ct == Type::F32 ? F32 : F16);
  uint32_t ebits = mma_element_bits(elem_of(at)), per_reg = 32 / ebits;
  size_t na = 16 * k / 32 / per_reg, nb = k * 8 / 32 / per_reg;
  size_t nd = dt == Type::F32 ? 4 : 2, nc = ct == Type::F32 ? 4 : 2;
  if (!push_list(d, in.operands[0], nd) || !push_list(d, in.operands[1], na) ||
      !push_list(d, in.operands[2], nb) || !push_list(d, in.operands[3], nc)) {
    return false;
  }
  out.fn = &mma;
  return true;
}

}  // namespace kiln::sim
