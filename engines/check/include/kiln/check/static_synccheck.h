// The static synccheck engine: finds synchronization bugs in PTX (nvcc output with -lineinfo)
// without running it, from the CFG, the uniformity analysis and small dataflow passes.
//
// Checks, each in its own file under src/:
//   barrier_check     CTA barriers under divergent control (.aligned ones at all; others on a
//                     path where some threads arrive at none), grid barriers
//                     (cg::this_grid().sync()) under block- or thread-dependent control; a
//                     warning instead when the condition is a load every thread makes of one
//                     unwritten word (Finding::cause "uniform_load_guard"); named-barrier
//                     id/count mismatches
//   collective_check  .aligned warp collectives under divergence; full .sync masks under
//                     lane-dependent branches
//   mbarrier_check    use before init, init not made visible, bulk copies without expect_tx
//   async_copy_check  cp.async data read before any wait; waits that cannot wait
//   wgmma_check       wgmma.mma_async without wgmma.fence, or its results read before
//                     commit_group + wait_group
// The analysis is per function and sound only as far as its model goes: what it cannot model
// (calls to functions without a body, unresolved indirect branches, mbarrier addresses it
// cannot trace) is listed in the report's notes and makes a clean verdict `incomplete`.
#pragma once

#include "kiln/check/finding.h"
#include "kiln/ptx/module.h"

namespace kiln::check {

struct SyncCheckOptions {
  // Assume blockDim.x is a multiple of 32 (see ptx::UniformityOptions::warp_aligned_x).
  bool warp_aligned_x = true;
  // Only these functions (mangled names); empty: every function with a body.
  std::vector<std::string> functions;
};

CheckReport static_synccheck(const ptx::Module& module, const SyncCheckOptions& options = {});

}  // namespace kiln::check
