// Address resolution on the hot path of ld/st/atom handlers: the global fast path (the last
// allocation hit), statistics per state space, and shared-memory bank conflicts.
#pragma once

#include <bit>
#include <cstdint>

#include "bank_conflicts.h"
#include "exec.h"

namespace kiln::sim {

inline Space classify(uint64_t address) {
  if (in_window(address, kSharedWindow)) return Space::Shared;
  if (in_window(address, kLocalWindow)) return Space::Local;
  if (in_window(address, kParamWindow)) return Space::Param;
  return Space::Global;
}

// Host pointer for an access of `bytes` (a power of two, also the alignment) or nullptr after
// a fault.
template <Space S>
inline uint8_t* access(Exec& x, uint64_t address, uint32_t bytes, uint32_t lane, const Inst& in) {
  if constexpr (S == Space::Global) {
    uint64_t off = address - x.cache_base;
    if ((address & (bytes - 1)) == 0 && off <= x.cache_size && bytes <= x.cache_size - off) {
      return x.cache_bytes + off;
    }
  }
  if constexpr (S == Space::Shared) {
    if ((address & (bytes - 1)) == 0 && address < x.shared_bytes &&
        bytes <= x.shared_bytes - address) {
      return x.cta->shared.data() + address;
    }
  }
  return x.resolve(S, address, bytes, bytes, lane, in);
}

// Counts bytes per space and, for shared accesses, bank conflicts. `addresses` holds each
// active lane's address in space S (generic addresses for Generic).
template <Space S>
inline void account(Exec& x, const uint64_t* addresses, uint32_t mask, uint32_t bytes) {
  if constexpr (S == Space::Generic) {
    uint32_t shared_mask = 0;
    uint32_t offsets[32];
    for (uint32_t m = mask; m != 0; m &= m - 1) {
      uint32_t lane = static_cast<uint32_t>(std::countr_zero(m));
      Space s = classify(addresses[lane]);
      x.counters.bytes[static_cast<size_t>(s)] += bytes;
      if (s == Space::Shared) {
        shared_mask |= 1u << lane;
        offsets[lane] = static_cast<uint32_t>(addresses[lane] - kSharedWindow);
      }
    }
    if (shared_mask != 0) x.counters.bank_conflicts += bank_conflicts(offsets, shared_mask, bytes);
  } else {
    x.counters.bytes[static_cast<size_t>(S)] += static_cast<uint64_t>(lane_count(mask)) * bytes;
    if constexpr (S == Space::Shared) {
      uint32_t offsets[32];
      for (uint32_t m = mask; m != 0; m &= m - 1) {
        uint32_t lane = static_cast<uint32_t>(std::countr_zero(m));
        offsets[lane] = static_cast<uint32_t>(addresses[lane]);
      }
      x.counters.bank_conflicts += bank_conflicts(offsets, mask, bytes);
    }
  }
}

}  // namespace kiln::sim
