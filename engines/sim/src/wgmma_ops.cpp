// Hopper warpgroup MMA: wgmma.mma_async (m64nNk16 for f16/bf16, m64nNk32 for e4m3/e5m2 in any
// mix and for s8/u8 in any mix with s32 accumulators, wrapped or .satfinite, m64nNk8 for tf32)
// with A and B read from shared memory through matrix descriptors (K-major,
// no swizzle or the 32/64/128-byte swizzles) or A from registers; wgmma.fence, commit_group and
// wait_group. The product is computed when the instruction issues, each warp of the warpgroup
// doing its 16 rows of the 64-row tile, so the waits have nothing left to wait for. An observer
// hears each warp's operand reads (as async-proxy reads that last until the wait_group retiring
// their group) and the commits and waits.
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "decoder.h"
#include "lane_ops.h"
#include "mma_element.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::OperandKind;
using ptx::Type;

using Elem = MmaElement;
enum : uint8_t {
  kARegisters = 1,
  kAccumulateF16 = 2,
  kScalePredicate = 4,
  kTransA = 8,   // A is M-major (imm-trans-a = 1)
  kTransB = 16,  // B is N-major (imm-trans-b = 1)
  kAccumulateS32 = 32,
  kSatfinite = 64
};

uint32_t elem_bytes(Elem e) { return mma_element_bits(e) / 8; }

// Shared-memory offset of byte `kbyte` of K-major row `row` in the matrix a descriptor names.
uint32_t descriptor_offset(uint64_t desc, uint32_t row, uint32_t kbyte) {
  uint32_t start = static_cast<uint32_t>(desc & 0x3fff) << 4;
  uint32_t lbo = static_cast<uint32_t>((desc >> 16) & 0x3fff) << 4;
  uint32_t sbo = static_cast<uint32_t>((desc >> 32) & 0x3fff) << 4;
  uint32_t mode = static_cast<uint32_t>(desc >> 62);
  if (mode == 0) {  // core matrices of 8 rows x 16 bytes
    return start + (row / 8) * sbo + (kbyte / 16) * lbo + (row % 8) * 16 + kbyte % 16;
  }
  uint32_t width = mode == 1 ? 128 : mode == 2 ? 64 : 32;
  uint32_t mask = mode == 1 ? 7 : mode == 2 ? 3 : 1;
  uint32_t logical = start + (row / 8) * sbo + (row % 8) * width + kbyte;
  return logical ^ (((logical >> 7) & mask) << 4);
}

// The same for an MN-major matrix (16-bit elements): element `mn` of K-row `k`. Without swizzle,
// core matrices are 8 K-rows of 16 contiguous bytes along MN, SBO apart along MN and LBO apart
// along K; with a swizzle of W bytes, K-rows are W bytes of MN, 8 of them form an atom, atoms are
// LBO apart along MN and SBO apart along K.
uint32_t mn_major_offset(uint64_t desc, uint32_t mn, uint32_t k, uint32_t eb) {
  uint32_t start = static_cast<uint32_t>(desc & 0x3fff) << 4;
  uint32_t lbo = static_cast<uint32_t>((desc >> 16) & 0x3fff) << 4;
  uint32_t sbo = static_cast<uint32_t>((desc >> 32) & 0x3fff) << 4;
  uint32_t mode = static_cast<uint32_t>(desc >> 62);
  uint32_t per_chunk = 16 / eb;  // elements in 16 bytes
  if (mode == 0) {
    return start + (mn % per_chunk) * eb + (mn / per_chunk) * sbo + (k % 8) * 16 + (k / 8) * lbo;
  }
  uint32_t width = mode == 1 ? 128 : mode == 2 ? 64 : 32;
  uint32_t mask = mode == 1 ? 7 : mode == 2 ? 3 : 1;
  uint32_t per_row = width / eb;
  uint32_t logical =
      start + (mn % per_row) * eb + (mn / per_row) * lbo + (k % 8) * width + (k / 8) * sbo;
  return logical ^ (((logical >> 7) & mask) << 4);
}

// Reads a `rows` x `k` matrix (K-major, or MN-major with `trans`) through a descriptor; false
// after a fault. With `chunks`, also the offsets of the 16-byte pieces of shared memory it read
// (every layout keeps 16 bytes together, and each piece starts with an element).
bool read_matrix(Exec& x, const Inst& in, uint64_t desc, uint32_t first_row, uint32_t rows,
                 uint32_t k, Elem e, bool trans, double* out,
                 std::vector<uint64_t>* chunks = nullptr) {
  uint32_t eb = elem_bytes(e);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      uint32_t off = trans ? mn_major_offset(desc, first_row + r, kk, eb)
                           : descriptor_offset(desc, first_row + r, kk * eb);
      if (off + eb > x.shared_bytes) {
        x.fault(
            in, 0, "out_of_bounds", off,
            "wgmma matrix descriptor 0x" +
                [&] {
                  char buf[20];
                  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(desc));
                  return std::string(buf);
                }() +
                " reaches shared offset " + std::to_string(off) + ", beyond the CTA's " +
                std::to_string(x.shared_bytes) + " bytes; check the start address and strides");
        return false;
      }
      if (chunks != nullptr && (off & 15) == 0) chunks->push_back(off);
      uint32_t bits = 0;
      std::memcpy(&bits, x.cta->shared.data() + off, eb);
      out[r * k + kk] = mma_element_value(bits, e);
    }
  }
  return true;
}

// The warp's operand reads for the observer: the 16-byte pieces at `chunks` (shared offsets),
// 32 to an event.
void observe_operands(Exec& x, const Inst& in, std::vector<uint64_t>& chunks) {
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  uint8_t owner[32];
  std::fill(owner, owner + 32, static_cast<uint8_t>(x.cta->rank));
  AccessEvent e;
  e.space = ObservedSpace::Shared;
  e.kind = AccessKind::Read;
  e.async = e.proxy = e.wgmma = true;
  e.cta = x.cta->rank;
  e.warp = x.warp->index;
  e.bytes = 16;
  e.pc = x.pc_of(in);
  e.owner = owner;
  for (size_t at = 0; at < chunks.size(); at += 32) {
    size_t count = std::min<size_t>(32, chunks.size() - at);
    e.mask = count == 32 ? 0xffffffffu : (1u << count) - 1;
    e.address = chunks.data() + at;
    x.observer->access(e);
  }
}

// wgmma.commit_group and wait_group (imm: groups allowed to stay pending) only matter to an
// observer: the products are done at issue.
void wgmma_commit(Exec& x, const Inst& in, uint32_t mask) {
  if (x.observer != nullptr && mask != 0) [[unlikely]] {
    x.observer->sync(sync_event(x, SyncKind::WgmmaCommit, in, mask));
  }
}
void wgmma_wait(Exec& x, const Inst& in, uint32_t mask) {
  if (x.observer != nullptr && mask != 0) [[unlikely]] {
    SyncEvent e = sync_event(x, SyncKind::WgmmaWait, in, mask);
    e.id = static_cast<uint32_t>(in.imm);
    x.observer->sync(e);
  }
}

// ops: d[nd], a (desc, or 4 registers), b desc, scale-d. width = K, target = N, mode = A's
// Elem | B's Elem << 4, imm: bit 0 negate A, bit 1 negate B.
void wgmma(Exec& x, const Inst& in, uint32_t mask) {
  if (mask != 0xffffffffu) {
    x.fault(in, static_cast<uint32_t>(std::countr_zero(~mask)), "barrier_divergence", 0,
            "wgmma.mma_async.sync.aligned needs every thread of the warpgroup converged");
    return;
  }
  const uint32_t* o = x.ops(in);
  uint32_t k = in.width, n = in.target;
  const Elem e = static_cast<Elem>(in.mode & 15), eb_elem = static_cast<Elem>(in.mode >> 4);
  bool acc16 = in.flags & kAccumulateF16;
  uint32_t nd = acc16 ? n / 4 : n / 2;
  uint32_t na = (in.flags & kARegisters) ? 4 : 1;
  uint32_t warp_row = (x.warp->index % 4) * 16;
  std::vector<double> a_matrix(16 * 32), b_matrix(256 * 32);
  double* a = a_matrix.data();
  double* b = b_matrix.data();
  if (in.flags & kARegisters) {
    uint32_t eb = elem_bytes(e), per_reg = 4 / eb;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t g = lane >> 2, t = lane & 3;
      for (uint32_t r = 0; r < 4; ++r) {
        uint32_t v = static_cast<uint32_t>(x.reg(o[nd + r])[lane]);
        for (uint32_t i = 0; i < per_reg; ++i) {
          uint32_t row = g + 8 * (r & 1), col = per_reg * t + i + (k / 2) * (r >> 1);
          a[row * k + col] =
              mma_element_value((v >> (8 * eb * i)) & ((eb == 4) ? ~0u : (1u << (8 * eb)) - 1), e);
        }
      }
    }
  }
  std::vector<uint64_t> chunks;
  std::vector<uint64_t>* seen = x.observer != nullptr ? &chunks : nullptr;
  if (!(in.flags & kARegisters) &&
      !read_matrix(x, in, x.reg(o[nd])[0], warp_row, 16, k, e, in.flags & kTransA, a, seen)) {
    return;
  }
  // B is one operand of the whole warpgroup: observed once, for its first warp (each warp's A
  // rows are its own), which keeps the detector's work near the copies'.
  std::vector<uint64_t>* seen_b = x.warp->index % 4 == 0 ? seen : nullptr;
  if (!read_matrix(x, in, x.reg(o[nd + na])[0], 0, n, k, eb_elem, in.flags & kTransB, b, seen_b)) {
    return;
  }
  if (seen != nullptr && !chunks.empty()) [[unlikely]] {
    observe_operands(x, in, chunks);
  }
  bool accumulate = (in.flags & kScalePredicate) ? (x.pred_mask(o[nd + na + 1]) & 1) != 0
                                                 : x.reg(o[nd + na + 1])[0] != 0;
  double sign = ((in.imm & 1) ? -1.0 : 1.0) * ((in.imm & 2) ? -1.0 : 1.0);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane >> 2, t = lane & 3;
    for (uint32_t j = 0; j < n / 8; ++j) {
      for (uint32_t half = 0; half < 2; ++half) {
        uint32_t row = g + 8 * half;
        double v[2];
        for (uint32_t c = 0; c < 2; ++c) {
          uint32_t col = 8 * j + 2 * t + c;
          double s = 0;
          for (uint32_t kk = 0; kk < k; ++kk) s += a[row * k + kk] * b[col * k + kk];
          v[c] = sign * s;
        }
        if (acc16) {
          uint64_t* d = x.reg(o[2 * j + half]) + lane;
          if (accumulate) {
            v[0] += small_to_double(*d & 0xffff, kF16);
            v[1] += small_to_double((*d >> 16) & 0xffff, kF16);
          }
          *d = double_to_small(v[0], kF16, 0, false) |
               (static_cast<uint64_t>(double_to_small(v[1], kF16, 0, false)) << 16);
        } else {
          for (uint32_t c = 0; c < 2; ++c) {
            uint64_t* d = x.reg(o[4 * j + 2 * half + c]) + lane;
            if (in.flags & kAccumulateS32) {
              const double prev = accumulate ? static_cast<int32_t>(*d) : 0.0;
              *d = accumulator_bits(prev + v[c], Elem::S32, in.flags & kSatfinite);
              continue;
            }
            double prev = accumulate ? std::bit_cast<float>(static_cast<uint32_t>(*d)) : 0.0;
            *d = std::bit_cast<uint32_t>(static_cast<float>(prev + v[c]));
          }
        }
      }
    }
  }
}

void no_op(Exec&, const Inst&, uint32_t) {}

}  // namespace

bool decode_wgmma(Decoder& d, const ptx::Instruction& in, Inst& out) {
  out.klass = InstClass::Tensor;
  if (in.has_modifier("fence")) {
    out.fn = &no_op;
    return true;
  }
  if (in.has_modifier("commit_group")) {
    out.fn = &wgmma_commit;
    return true;
  }
  if (in.has_modifier("wait_group")) {
    if (in.operands.size() != 1 || in.operands[0].kind != OperandKind::Immediate) return false;
    out.imm = in.operands[0].number.as_int();
    out.fn = &wgmma_wait;
    return true;
  }
  if (!in.has_modifier("mma_async") || in.types.size() != 3) return false;
  uint32_t m = 0, n = 0, k = 0;
  for (const std::string& mod : in.modifiers) {
    if (std::sscanf(mod.c_str(), "m%un%uk%u", &m, &n, &k) == 3) break;
  }
  if (m != 64 || n == 0 || n > 256 || n % 8 != 0) return false;
  std::optional<Elem> a_elem = mma_element_of(in.types[1]), b_elem = mma_element_of(in.types[2]);
  if (!a_elem || !b_elem) return false;
  const Elem ea = *a_elem, eb = *b_elem;
  const auto fp8 = [](Elem e) { return e == Elem::E4M3 || e == Elem::E5M2; };
  const auto int8 = [](Elem e) { return e == Elem::S8 || e == Elem::U8; };
  // The input pairs PTX allows: f16, bf16 and tf32 with themselves, e4m3/e5m2 in any mix,
  // s8/u8 in any mix.
  const bool integer = int8(ea) && int8(eb);
  if (!(integer || (fp8(ea) && fp8(eb)) ||
        (ea == eb && (ea == Elem::F16 || ea == Elem::BF16 || ea == Elem::TF32))))
    return false;
  uint32_t expect_k = fp8(ea) || integer ? 32 : ea == Elem::TF32 ? 8 : 16;
  if (k != expect_k) return false;
  Type dt = in.types[0];
  if (integer ? dt != Type::S32 : (dt != Type::F32 && dt != Type::F16)) return false;
  if (in.has_modifier("satfinite") && !integer) return false;
  out.width = static_cast<uint8_t>(k);
  out.target = n;
  out.mode = static_cast<uint8_t>(static_cast<uint8_t>(ea) | static_cast<uint8_t>(eb) << 4);
  if (dt == Type::F16) out.flags |= kAccumulateF16;
  if (integer) out.flags |= kAccumulateS32;
  if (in.has_modifier("satfinite")) out.flags |= kSatfinite;
  const auto& ops = in.operands;
  // Integer forms end at scale-d; the others take imm-scale-a and imm-scale-b (and trans).
  if (ops.size() < (integer ? 4u : 6u) || ops[0].kind != OperandKind::Vector) return false;
  size_t nd = dt == Type::F16 ? n / 4 : n / 2;
  if (ops[0].elements.size() != nd) return false;
  bool a_regs = ops[1].kind == OperandKind::Vector;
  if (a_regs) out.flags |= kARegisters;
  // Immediates after scale-d: scale-a, scale-b, then (16-bit types) trans-a (descriptor A
  // only) and trans-b.
  std::vector<int64_t> imms;
  for (size_t i = 4; i < ops.size(); ++i) {
    if (ops[i].kind != OperandKind::Immediate) return false;
    imms.push_back(ops[i].number.as_int());
  }
  if (integer ? !imms.empty() : imms.size() < 2) return false;
  if (!integer && imms[0] == -1) out.imm |= 1;
  if (!integer && imms[1] == -1) out.imm |= 2;
  // imm-trans-a (descriptor A only), then imm-trans-b: 16-bit inputs only.
  size_t trans_b = a_regs ? 2 : 3;
  bool sixteen_bit = ea == Elem::F16 || ea == Elem::BF16;
  for (size_t i = 2; i < imms.size(); ++i) {
    if (imms[i] == 0) continue;
    if (!sixteen_bit || i > trans_b) return false;
    out.flags |= i == trans_b ? kTransB : kTransA;
  }
  for (const ptx::Operand& e : ops[0].elements) d.push(d.value(e, Type::B32));
  if (a_regs) {
    if (ops[1].elements.size() != 4) return false;
    for (const ptx::Operand& e : ops[1].elements) d.push(d.value(e, Type::B32));
  } else {
    d.push(d.value(ops[1], Type::B64));
  }
  d.push(d.value(ops[2], Type::B64));
  if (d.is_predicate(ops[3])) {
    out.flags |= kScalePredicate;
    d.push(d.predicate(ops[3]));
  } else {
    d.push(d.value(ops[3], Type::B32));
  }
  out.fn = &wgmma;
  return true;
}

}  // namespace kiln::sim
