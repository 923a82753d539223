// How a CTA-level barrier instruction reads: bar/barrier in all their forms, classified once
// so the barrier checks agree on what is a barrier, its id and its thread count.
#pragma once

#include <optional>

#include "kiln/ptx/instruction.h"

namespace kiln::check {

struct BarrierSite {
  bool waits = false;                   // bar.sync, barrier.sync, bar.red, barrier.cluster.wait
  bool aligned = false;                 // every thread of a warp must execute the same instruction
  bool cluster = false;                 // barrier.cluster.*
  const ptx::Operand* id = nullptr;     // the barrier id operand, if any
  const ptx::Operand* count = nullptr;  // the thread count operand, if any
};

// nullopt for anything that is not bar/barrier (bar.warp.sync is a warp collective, not this).
std::optional<BarrierSite> barrier_site(const ptx::Instruction& inst);

}  // namespace kiln::check
