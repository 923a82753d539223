// A forward dataflow solver over a function's CFG, shared by the checks that track state along
// paths (mbarrier initialization, pending async copies, wgmma groups).
//
// State must be copyable and provide `bool merge(const State& other)`: combine `other` into
// this state (the meet over paths), returning whether anything changed. Transfer is
// `void(ptx::InstructionId, State&)`, applied to each instruction of a block in order.
// The result is the state at the entry of each block; unreachable blocks keep std::nullopt.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "kiln/ptx/cfg.h"

namespace kiln::check {

template <typename State, typename Transfer>
std::vector<std::optional<State>> forward_dataflow(const ptx::ControlFlowGraph& cfg,
                                                   const State& entry, Transfer&& transfer) {
  std::vector<std::optional<State>> in(cfg.size());
  std::vector<char> queued(cfg.size(), 0);
  std::deque<ptx::BlockId> work;
  in[cfg.entry()] = entry;
  work.push_back(cfg.entry());
  queued[cfg.entry()] = 1;
  while (!work.empty()) {
    const ptx::BlockId b = work.front();
    work.pop_front();
    queued[b] = 0;
    State state = *in[b];
    const ptx::BasicBlock& block = cfg.block(b);
    for (ptx::InstructionId i = block.first; i < block.last; ++i) transfer(i, state);
    for (ptx::BlockId s : block.successors) {
      bool changed = false;
      if (!in[s]) {
        in[s] = state;
        changed = true;
      } else {
        changed = in[s]->merge(state);
      }
      if (changed && !queued[s]) {
        queued[s] = 1;
        work.push_back(s);
      }
    }
  }
  return in;
}

// Replays the solved states through every reachable block once more, calling
// `visit(id, state_before)` before each instruction's transfer: where checks report.
template <typename State, typename Transfer, typename Visit>
void replay_dataflow(const ptx::ControlFlowGraph& cfg, const std::vector<std::optional<State>>& in,
                     Transfer&& transfer, Visit&& visit) {
  for (ptx::BlockId b = 0; b < cfg.size(); ++b) {
    if (!in[b]) continue;
    State state = *in[b];
    const ptx::BasicBlock& block = cfg.block(b);
    for (ptx::InstructionId i = block.first; i < block.last; ++i) {
      visit(i, static_cast<const State&>(state));
      transfer(i, state);
    }
  }
}

}  // namespace kiln::check
