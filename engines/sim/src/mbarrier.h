// mbarrier objects in shared memory: arrivals, expected transaction bytes and phases. The
// simulator keeps their state beside shared memory, keyed by the object's shared offset.
#pragma once

#include <cstdint>

#include "exec.h"

namespace kiln::sim {

// The barrier at `offset` of `cta`'s shared memory, or nullptr after raising a fault (never
// initialized).
Mbarrier* find_mbarrier(Exec& x, Cta& cta, const Inst& in, uint32_t offset, uint32_t lane);
// Counts `count` arrivals; completes the phase when no arrival or transaction byte is missing.
void mbarrier_arrive(Mbarrier& m, uint32_t count);
// Transaction bytes arrived (cp.async.bulk, complete_tx).
void mbarrier_complete_tx(Mbarrier& m, int64_t bytes);

}  // namespace kiln::sim
