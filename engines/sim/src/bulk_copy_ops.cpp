// Bulk asynchronous copies (the Tensor Memory Accelerator): cp.async.bulk between global and
// shared memory, and cp.async.bulk.tensor (1d..5d, tile mode) through a tensor map, with the
// 32/64/128-byte swizzles and out-of-bounds fill, completing transaction bytes on an mbarrier.
// The copy happens when the instruction runs; consumers still have to wait on the mbarrier
// (or bulk group) for a correct kernel, and the phase only completes once the bytes are counted.
// An observer hears both sides of every copy as the async proxy's, and the bulk groups' commits
// and waits.
#include <bit>
#include <cstring>

#include "decoder.h"
#include "kiln/sim/tensor_map.h"
#include "lane_ops.h"
#include "mbarrier.h"
#include "memory_access.h"
#include "observe.h"

namespace kiln::sim {

namespace {

using ptx::OperandKind;
using ptx::Type;

enum BulkKind : uint8_t { GlobalToShared, SharedToGlobal, SharedToShared, TensorLoad, TensorStore };

// Transaction bytes arrive on the mbarrier at `mbar_address` (with multicast: the barrier at the
// same offset in `destination`).
void arrive_tx(Exec& x, const Inst& in, uint64_t mbar_address, uint32_t lane, int64_t bytes,
               Cta* destination = nullptr) {
  Cta* owner = nullptr;
  uint32_t off = x.shared_offset(Space::Shared, mbar_address, 8, lane, in, &owner);
  if (off == UINT32_MAX) return;
  Cta& target = destination != nullptr ? *destination : *owner;
  Mbarrier* m = find_mbarrier(x, target, in, off, lane);
  if (m == nullptr) return;
  mbarrier_complete_tx(*m, bytes);
  if (x.observer != nullptr) [[unlikely]] {
    SyncEvent e = sync_event(x, SyncKind::MbarrierCompleteTx, in, 1u << lane);
    e.async = true;
    e.count = static_cast<uint32_t>(bytes);  // synccheck counts them (tx_overflow)
    e.owner = target.rank;
    e.id = off;
    e.phase = m->phase;
    x.observer->sync(e);
  }
}

// The async proxy's side of a bulk copy, for the observer: `bytes` read at `from` and written
// at `to` (shared addresses are offsets into `shared_owner`'s memory).
void observe_bulk(Exec& x, const Inst& in, uint32_t lane, Space to_space, uint64_t to,
                  Space from_space, uint64_t from, uint32_t bytes) {
  observe_range(x, from_space, AccessKind::Read, in, lane, from, bytes, true, true);
  observe_range(x, to_space, AccessKind::Write, in, lane, to, bytes, true, true);
}

// The global side of a tensor copy for the observer, gathered into contiguous runs (a box row
// inside the tensor is one run): `add` extends the run or reports it and starts another.
struct GlobalRuns {
  Exec& x;
  const Inst& in;
  uint32_t lane;
  AccessKind kind;
  uint64_t start = 0, bytes = 0;

  void add(uint64_t address, uint32_t n) {
    if (bytes != 0 && address == start + bytes && bytes + n <= UINT32_MAX) {
      bytes += n;
      return;
    }
    flush();
    start = address;
    bytes = n;
  }
  void flush() {
    if (bytes != 0) {
      observe_range(x, Space::Global, kind, in, lane, start, static_cast<uint32_t>(bytes), true,
                    true);
    }
    bytes = 0;
  }
};

// cp.async.bulk.commit_group and wait_group[.read] (imm: groups allowed to stay pending) only
// matter to an observer: bulk copies complete when issued.
void bulk_commit(Exec& x, const Inst& in, uint32_t mask) {
  if (x.observer != nullptr && mask != 0) [[unlikely]] {
    x.observer->sync(sync_event(x, SyncKind::BulkCommit, in, mask));
  }
}
void bulk_wait(Exec& x, const Inst& in, uint32_t mask) {
  if (x.observer != nullptr && mask != 0) [[unlikely]] {
    SyncEvent e = sync_event(x, SyncKind::BulkWait, in, mask);
    e.id = static_cast<uint32_t>(in.imm);
    x.observer->sync(e);
  }
}

enum : uint8_t { kMulticast = 1 };

// ops: dst, src, size, mbar (GlobalToShared / SharedToShared), or dst, src, size.
void bulk(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  BulkKind kind = static_cast<BulkKind>(in.mode);
  for_lanes(mask, [&](uint32_t l) {
    if (x.event & kEventFault) return;
    uint64_t dst = x.reg(o[0])[l], src = x.reg(o[1])[l];
    uint32_t size = static_cast<uint32_t>(x.reg(o[2])[l]);
    if (size % 16 != 0 || dst % 16 != 0 || src % 16 != 0) {
      x.fault(in, l, "misaligned", dst % 16 ? dst : src,
              "cp.async.bulk needs 16-byte aligned addresses and a size that is a multiple of 16");
      return;
    }
    if (kind == SharedToGlobal) {
      uint32_t s = x.shared_offset(Space::Shared, src, size, l, in);
      if (s == UINT32_MAX) return;
      uint8_t* g = x.global_bytes(dst, size, l, in);
      if (g == nullptr) return;
      std::memcpy(g, x.cta->shared.data() + s, size);
      if (x.observer != nullptr) [[unlikely]] {
        observe_bulk(x, in, l, Space::Global, dst, Space::Shared, s, size);
      }
      return;
    }
    uint32_t d = x.shared_offset(Space::Shared, dst, size, l, in);
    if (d == UINT32_MAX) return;
    const uint8_t* from = nullptr;
    if (kind == SharedToShared) {
      uint32_t s = x.shared_offset(Space::Shared, src, size, l, in);
      if (s == UINT32_MAX) return;
      from = x.cta->shared.data() + s;
    } else {
      from = x.global_bytes(src, size, l, in);
      if (from == nullptr) return;
    }
    std::memmove(x.cta->shared.data() + d, from, size);
    if (x.observer != nullptr) [[unlikely]] {
      Space from_space = kind == SharedToShared ? Space::Shared : Space::Global;
      uint64_t from_address =
          kind == SharedToShared ? static_cast<uint64_t>(from - x.cta->shared.data()) : src;
      observe_bulk(x, in, l, Space::Shared, d, from_space, from_address, size);
    }
    arrive_tx(x, in, x.reg(o[3])[l], l, size);
  });
}

uint32_t swizzle(uint32_t address, uint32_t mode) {
  uint32_t m = mode == 1 ? 1 : mode == 2 ? 3 : mode == 3 ? 7 : 0;
  return address ^ (((address >> 7) & m) << 4);
}

// ops: map, coords[rank], shared, mbar (TensorLoad) / map, coords[rank], shared (TensorStore).
// vec = rank.
void bulk_tensor(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  BulkKind kind = static_cast<BulkKind>(in.mode);
  uint32_t rank = in.vec;
  for_lanes(mask, [&](uint32_t l) {
    if (x.event & kEventFault) return;
    uint64_t map_address = x.reg(o[0])[l] + static_cast<uint64_t>(in.imm);
    const uint8_t* map_bytes = x.resolve(Space::Generic, map_address, kTensorMapBytes, 1, l, in);
    if (map_bytes == nullptr) return;
    std::optional<TensorMapDesc> map = decode_tensor_map(map_bytes);
    if (!map) {
      x.fault(in, l, "invalid_launch", map_address,
              "the tensor-map operand does not point at a CUtensorMap made by "
              "cuTensorMapEncodeTiled; pass the map as a __grid_constant__ kernel parameter or "
              "copy it to global memory");
      return;
    }
    if (map->rank != rank) {
      x.fault(in, l, "invalid_launch", map_address,
              "cp.async.bulk.tensor." + std::to_string(rank) + "d used with a rank-" +
                  std::to_string(map->rank) + " tensor map");
      return;
    }
    for (uint32_t i = 0; i < rank; ++i) {
      if (map->element_strides[i] > 1) {
        x.fault(in, l, "unsupported_instruction", map_address,
                "tensor maps with element strides other than 1 are not supported yet");
        return;
      }
    }
    int64_t coord[5] = {};
    for (uint32_t i = 0; i < rank; ++i) coord[i] = static_cast<int32_t>(x.reg(o[1 + i])[l]);
    uint32_t eb = map->element_bytes;
    if (eb == 0 || eb > 16) {
      x.fault(in, l, "invalid_launch", map_address,
              "tensor map element size " + std::to_string(eb) + " is not 1..16 bytes");
      return;
    }
    uint64_t elements = 1;
    for (uint32_t i = 0; i < rank; ++i) elements *= map->box_dim[i];
    uint64_t box_bytes = elements * eb;
    uint64_t smem = x.reg(o[1 + rank])[l];
    Cta* owner = nullptr;
    uint32_t base =
        x.shared_offset(Space::Shared, smem, static_cast<uint32_t>(box_bytes), l, in, &owner);
    if (base == UINT32_MAX) return;
    // .multicast::cluster: the box lands at the same offset in every CTA of ctaMask.
    Cta* destinations[16] = {owner};
    uint32_t n_destinations = 1;
    if (in.flags & kMulticast) {
      uint32_t cta_mask = static_cast<uint32_t>(x.reg(o[3 + rank])[l]) & 0xffff;
      n_destinations = 0;
      for (uint32_t r = 0; r < x.cluster_ctas.size(); ++r) {
        if ((cta_mask >> r) & 1) destinations[n_destinations++] = x.cluster_ctas[r];
      }
    }
    bool nan_fill = map->oob_fill == 1;
    GlobalRuns runs{x, in, l, kind == TensorLoad ? AccessKind::Read : AccessKind::Write};
    bool observed = x.observer != nullptr;
    for (uint64_t e = 0; e < elements; ++e) {
      uint64_t rest = e;
      int64_t pos[5] = {};
      bool inside = true;
      uint64_t global_offset = 0;
      for (uint32_t i = 0; i < rank; ++i) {
        pos[i] = coord[i] + static_cast<int64_t>(rest % map->box_dim[i]);
        rest /= map->box_dim[i];
        if (pos[i] < 0 || static_cast<uint64_t>(pos[i]) >= map->global_dim[i]) inside = false;
        global_offset +=
            static_cast<uint64_t>(pos[i]) * (i == 0 ? eb : map->global_stride_bytes[i]);
      }
      uint32_t s = swizzle(base + static_cast<uint32_t>(e * eb), map->swizzle);
      uint8_t* shared = owner->shared.data() + s;
      if (observed && inside) [[unlikely]]
        runs.add(map->global_address + global_offset, eb);
      if (kind == TensorLoad) {
        uint8_t element[16] = {};
        if (inside) {
          const uint8_t* g = x.global_bytes(map->global_address + global_offset, eb, l, in);
          if (g == nullptr) return;
          std::memcpy(element, g, eb);
        } else if (nan_fill) {
          std::memset(element, 0xff, eb);
        }
        for (uint32_t d = 0; d < n_destinations; ++d) {
          std::memcpy(destinations[d]->shared.data() + s, element, eb);
        }
      } else if (inside) {
        uint8_t* g = x.global_bytes(map->global_address + global_offset, eb, l, in);
        if (g == nullptr) return;
        std::memcpy(g, shared, eb);
      }
    }
    x.counters.bytes[static_cast<size_t>(Space::Global)] += box_bytes;
    x.counters.bytes[static_cast<size_t>(Space::Shared)] += box_bytes;
    if (observed) [[unlikely]] {
      // The global side (elements inside the tensor), then the box's bytes in shared memory
      // (a swizzle permutes them within the box).
      runs.flush();
      for (uint32_t d = 0; d < n_destinations; ++d) {
        uint64_t at =
            (static_cast<uint64_t>(destinations[d]->rank + 1) << kClusterRankShift) | base;
        observe_range(x, Space::Shared, kind == TensorLoad ? AccessKind::Write : AccessKind::Read,
                      in, l, at, static_cast<uint32_t>(box_bytes), true, true);
      }
    }
    if (kind == TensorLoad) {
      for (uint32_t d = 0; d < n_destinations; ++d) {
        arrive_tx(x, in, x.reg(o[2 + rank])[l], l, static_cast<int64_t>(box_bytes),
                  (in.flags & kMulticast) ? destinations[d] : nullptr);
      }
    }
  });
}

void no_op(Exec&, const Inst&, uint32_t) {}

uint32_t address_slot(Decoder& d, const ptx::Operand& op) {
  Address a = d.address(op);
  if (a.offset != 0) d.fail("address offsets ([r+8]) on bulk copies are not supported yet");
  return a.base;
}

}  // namespace

bool decode_bulk(Decoder& d, const ptx::Instruction& in, Inst& out) {
  size_t n = in.operands.size();
  if (in.has_modifier("prefetch")) {
    out.fn = &no_op;
    return true;
  }
  if (in.has_modifier("commit_group")) {
    out.fn = &bulk_commit;
    return true;
  }
  if (in.has_modifier("wait_group")) {
    if (n != 1 || in.operands[0].kind != OperandKind::Immediate) return false;
    out.imm = in.operands[0].number.as_int();
    out.fn = &bulk_wait;
    return true;
  }
  bool multicast = in.has_modifier("multicast::cluster");
  if (multicast && !in.has_modifier("tensor")) {
    d.fail("multicast bulk copies without a tensor map are not supported yet");
    return false;
  }
  std::vector<ptx::StateSpace> spaces = in.state_spaces();
  if (spaces.size() < 2) return false;
  Space to = space_of(spaces[0]), from = space_of(spaces[1]);
  if (in.has_modifier("tensor")) {
    if (in.has_modifier("im2col") || in.has_modifier("im2col_no_offs") ||
        in.has_modifier("tile::gather4") || in.has_modifier("tile::scatter4")) {
      d.fail("only .tile mode tensor copies are supported (not im2col or gather/scatter)");
      return false;
    }
    uint32_t rank = 0;
    for (uint32_t r = 1; r <= 5; ++r) {
      if (in.has_modifier(std::to_string(r) + "d")) rank = r;
    }
    if (rank == 0) return false;
    out.vec = static_cast<uint8_t>(rank);
    bool load = to == Space::Shared && from == Space::Global;
    bool store = to == Space::Global && from == Space::Shared;
    if (!load && !store) return false;
    const ptx::Operand& tensor = load ? in.operands[1] : in.operands[0];
    if (tensor.kind != OperandKind::Address || tensor.elements.size() != 2 ||
        tensor.elements[1].kind != OperandKind::Vector ||
        tensor.elements[1].elements.size() != rank) {
      return false;
    }
    if ((load && n < 3) || (store && n < 2)) return false;
    out.imm = tensor.offset;
    d.push(d.value(tensor.elements[0], Type::U64));
    for (const ptx::Operand& c : tensor.elements[1].elements) d.push(d.value(c, Type::S32));
    d.push(address_slot(d, load ? in.operands[0] : in.operands[1]));
    if (load) d.push(address_slot(d, in.operands[2]));
    if (multicast) {  // ctaMask follows the mbarrier
      if (!load || n < 4) return false;
      d.push(d.value(in.operands[3], Type::U16));
      out.flags |= kMulticast;
    }
    out.mode = load ? TensorLoad : TensorStore;
    out.fn = &bulk_tensor;
    return true;
  }
  if (n < 3) return false;
  if (to == Space::Shared && from == Space::Global) {
    out.mode = GlobalToShared;
  } else if (to == Space::Global && from == Space::Shared) {
    out.mode = SharedToGlobal;
  } else if (to == Space::Shared && from == Space::Shared) {
    out.mode = SharedToShared;
  } else {
    return false;
  }
  d.push(address_slot(d, in.operands[0]));
  d.push(address_slot(d, in.operands[1]));
  d.push(d.value(in.operands[2], Type::U32));
  if (out.mode != SharedToGlobal) {
    if (n < 4) return false;
    d.push(address_slot(d, in.operands[3]));
  }
  out.fn = &bulk;
  return true;
}

}  // namespace kiln::sim
