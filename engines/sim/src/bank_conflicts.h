// Shared-memory bank conflicts of one warp-wide access: 32 banks of 4 bytes. Accesses wider
// than 4 bytes per thread are served in phases (8 bytes: two half-warps; 16 bytes: four
// quarter-warps), as the hardware does. The count is the wavefronts beyond one per phase.
#pragma once

#include <cstdint>

namespace kiln::sim {

// `offsets[lane]` is the shared offset each active lane (bit set in `mask`) accesses.
uint32_t bank_conflicts(const uint32_t* offsets, uint32_t mask, uint32_t bytes_per_lane);

}  // namespace kiln::sim
