// The hook points of the MemoryObserver (kiln/sim/memory_observer.h): handlers call these only
// when Exec::observer is set, so the ordinary path pays one null check per instruction.
#pragma once

#include <cstdint>

#include "address_space.h"
#include "exec.h"
#include "kiln/sim/memory_observer.h"

namespace kiln::sim {

// Decoded into Inst::flags bits 1..3 of loads, stores and atomics.
inline constexpr uint32_t kOrderingShift = 1;
inline Ordering ordering_of(const Inst& in) {
  return static_cast<Ordering>((in.flags >> kOrderingShift) & 7);
}

// Reports the lanes of `mask` that touched shared or global memory (local, param and const
// memory are private or read-only). `addresses` are in space `space` (generic addresses for
// Generic), indexed by lane.
inline void observe_access(Exec& x, Space space, AccessKind kind, Ordering ordering, const Inst& in,
                           const uint64_t* addresses, uint32_t mask, uint32_t bytes,
                           bool async = false, bool proxy = false) {
  if (mask == 0 || (x.event & kEventFault)) return;
  if (x.stop_at_sync && (ordering != Ordering::Weak || kind == AccessKind::Atomic || async))
    x.event |= kEventStep;
  uint64_t shared[32], global[32];
  uint8_t owner[32];
  uint32_t shared_mask = 0, global_mask = 0;
  for_lanes(mask, [&](uint32_t l) {
    uint64_t a = addresses[l];
    Space s = space;
    if (s == Space::Generic) {
      if (in_window(a, kSharedWindow)) {
        s = Space::Shared;
        a -= kSharedWindow;
      } else if (in_window(a, kLocalWindow) || in_window(a, kParamWindow)) {
        return;
      } else {
        s = Space::Global;
      }
    }
    if (s == Space::Shared) {
      uint64_t field = a >> kClusterRankShift;
      owner[l] = static_cast<uint8_t>(field == 0 ? x.cta->rank : field - 1);
      shared[l] = a & kSharedOffsetMask;
      shared_mask |= 1u << l;
    } else if (s == Space::Global) {
      global[l] = a;
      global_mask |= 1u << l;
    }
  });
  AccessEvent e;
  e.kind = kind;
  e.ordering = ordering;
  e.async = async;
  e.proxy = proxy;
  e.cta = x.cta->rank;
  e.warp = x.warp->index;
  e.bytes = bytes;
  e.pc = x.pc_of(in);
  if (shared_mask != 0) {
    e.space = ObservedSpace::Shared;
    e.mask = shared_mask;
    e.address = shared;
    e.owner = owner;
    x.observer->access(e);
  }
  if (global_mask != 0) {
    e.space = ObservedSpace::Global;
    e.mask = global_mask;
    e.address = global;
    e.owner = nullptr;
    x.observer->access(e);
  }
}

// One lane's contiguous access (bulk copies, cp.async): `bytes` at `address`; `proxy` for the
// async proxy's (TMA).
inline void observe_range(Exec& x, Space space, AccessKind kind, const Inst& in, uint32_t lane,
                          uint64_t address, uint32_t bytes, bool async, bool proxy = false) {
  uint64_t addresses[32];
  addresses[lane] = address;
  observe_access(x, space, kind, Ordering::Weak, in, addresses, 1u << lane, bytes, async, proxy);
}

inline SyncEvent sync_event(Exec& x, SyncKind kind, const Inst& in, uint32_t mask) {
  if (x.stop_at_sync) x.event |= kEventStep;
  SyncEvent e;
  e.kind = kind;
  e.cta = x.cta->rank;
  e.warp = x.warp->index;
  e.mask = mask;
  e.pc = x.pc_of(in);
  return e;
}

}  // namespace kiln::sim
