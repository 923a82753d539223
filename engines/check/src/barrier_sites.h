// How a CTA-level barrier instruction reads: bar/barrier in all their forms, classified once
// so the barrier checks agree on what is a barrier, its id and its thread count.
#pragma once

#include <optional>
#include <vector>

#include "kiln/ptx/instruction.h"

namespace kiln::check {

class FunctionContext;

struct BarrierSite {
  bool waits = false;                   // bar.sync, barrier.sync, bar.red, barrier.cluster.wait
  bool aligned = false;                 // every thread of a warp must execute the same instruction
  bool cluster = false;                 // barrier.cluster.*
  const ptx::Operand* id = nullptr;     // the barrier id operand, if any
  const ptx::Operand* count = nullptr;  // the thread count operand, if any
};

// nullopt for anything that is not bar/barrier (bar.warp.sync is a warp collective, not this).
std::optional<BarrierSite> barrier_site(const ptx::Instruction& inst);

// A grid-wide barrier (cg::this_grid().sync() under a cooperative launch). nvcc inlines it
// from cooperative_groups/details/sync.h: `barrier.sync 0`, then one thread per block adds to
// the driver's grid workspace (its address in %envreg1/%envreg2) with
// `atom.add.release.gpu.u32` and spins on `ld.acquire.gpu.u32` until every block has added,
// then `barrier.sync 0` again. Every block of the grid must arrive.
struct GridBarrier {
  ptx::InstructionId arrival = 0;  // the atomic on the grid workspace
  ptx::InstructionId entry = 0;    // the CTA barrier before it (the arrival if there is none)
};

// The grid barriers of the function, in order.
std::vector<GridBarrier> grid_barriers(const FunctionContext& context);

}  // namespace kiln::check
