// Where the simulator's state spaces sit in the generic address space. Global allocations and
// module .global/.const variables use their own addresses as generic addresses (as on a GPU);
// shared, local and param memory appear through 4 GiB windows, so cvta and generic ld/st can
// tell the spaces apart.
#pragma once

#include <cstdint>

namespace kiln::sim {

inline constexpr uint64_t kWindowBytes = 1ull << 32;
inline constexpr uint64_t kSharedWindow = 0x0001'0000'0000'0000ull;
inline constexpr uint64_t kLocalWindow = 0x0002'0000'0000'0000ull;
inline constexpr uint64_t kParamWindow = 0x0003'0000'0000'0000ull;
inline constexpr uint64_t kGlobalBase = 0x0000'7000'0000'0000ull;  // first allocation
inline constexpr uint64_t kGlobalAlignment = 256;

// A shared::cluster address (mapa) carries the target CTA's rank + 1 above the shared offset;
// a plain shared address (rank field 0) names the executing CTA.
inline constexpr uint32_t kClusterRankShift = 24;
inline constexpr uint64_t kSharedOffsetMask = (1ull << kClusterRankShift) - 1;

inline bool in_window(uint64_t address, uint64_t window) { return address - window < kWindowBytes; }

}  // namespace kiln::sim
