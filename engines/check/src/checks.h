// The static synccheck's checks, one per file; static_synccheck.cpp runs them per function.
#pragma once

#include <set>
#include <string>

#include "function_context.h"

namespace kiln::check {

// CTA barriers (and calls to functions that contain one) under divergent control.
void check_barrier_divergence(FunctionContext& context,
                              const std::set<std::string>& functions_with_barriers);
// Grid-wide barriers (cg::this_grid().sync()) under a block- or thread-dependent condition:
// every block of a cooperative launch must arrive. Runs before check_barrier_divergence, which
// then leaves the grid barrier's CTA barrier to this finding.
void check_grid_barriers(FunctionContext& context);
// One named barrier id used with different thread counts, or a count not a multiple of 32.
void check_named_barriers(FunctionContext& context);
// .aligned warp collectives under divergence; full .sync masks under lane-dependent branches.
void check_collectives(FunctionContext& context);
// mbarrier use before init, init not made visible, bulk copies without expect_tx.
void check_mbarriers(FunctionContext& context);
// cp.async data read with no wait on the path; waits that cannot wait for anything.
void check_async_copies(FunctionContext& context);
// wgmma.mma_async without wgmma.fence; accumulators read before commit_group + wait_group.
void check_wgmma(FunctionContext& context);

}  // namespace kiln::check
