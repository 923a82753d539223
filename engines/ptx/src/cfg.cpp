#include "kiln/ptx/cfg.h"

#include <algorithm>

namespace kiln::ptx {
namespace {

void add_edge(std::vector<BasicBlock>& blocks, BlockId from, BlockId to) {
  std::vector<BlockId>& succ = blocks[from].successors;
  if (std::find(succ.begin(), succ.end(), to) != succ.end()) return;
  succ.push_back(to);
  blocks[to].predecessors.push_back(from);
}

}  // namespace

ControlFlowGraph ControlFlowGraph::build(const Function& f) {
  ControlFlowGraph cfg;
  const auto n = static_cast<InstructionId>(f.instructions.size());

  // Block starts: the entry, every code label's target, and the instruction after a terminator.
  const size_t slots = static_cast<size_t>(n) + 1;
  std::vector<uint8_t> starts(slots, 0);
  std::vector<LabelId> label_at(slots, kNone);
  starts.front() = 1;
  for (LabelId l = 0; l < f.labels.size(); ++l) {
    const Label& label = f.labels[l];
    if (label.kind != LabelKind::Code || label.target > n) continue;
    starts[label.target] = 1;
    if (label_at[label.target] == kNone) label_at[label.target] = l;
  }
  for (InstructionId i = 0; i < n; ++i) {
    if (is_terminator(f.instructions[i])) starts[i + 1] = 1;
  }
  std::vector<BlockId> block_starting(slots, kNone);
  for (InstructionId i = 0; i <= n; ++i) {
    if (!starts[i]) continue;
    // A start at n exists only when a label sits after the last instruction (or n == 0).
    if (i == n && i != 0 && label_at[i] == kNone) continue;
    block_starting[i] = static_cast<BlockId>(cfg.blocks_.size());
    BasicBlock b;
    b.first = i;
    b.label = label_at[i];
    cfg.blocks_.push_back(b);
  }
  for (size_t b = 0; b < cfg.blocks_.size(); ++b) {
    cfg.blocks_[b].last = b + 1 < cfg.blocks_.size() ? cfg.blocks_[b + 1].first : n;
  }
  const auto exit = static_cast<BlockId>(cfg.blocks_.size());
  BasicBlock exit_block;
  exit_block.first = exit_block.last = n;
  cfg.blocks_.push_back(exit_block);

  cfg.terminators_.assign(cfg.blocks_.size(), kNone);
  for (BlockId b = 0; b < exit; ++b) {
    const BasicBlock& block = cfg.blocks_[b];
    if (!block.empty() && is_terminator(f.instructions[block.last - 1])) {
      cfg.terminators_[b] = block.last - 1;
    }
  }
  cfg.block_of_.assign(n, 0);
  for (BlockId b = 0; b < exit; ++b) {
    for (InstructionId i = cfg.blocks_[b].first; i < cfg.blocks_[b].last; ++i) cfg.block_of_[i] = b;
  }

  auto block_of_label = [&](LabelId l) -> BlockId {
    if (l >= f.labels.size()) return kNone;
    const InstructionId target = f.labels[l].target;
    return target <= n ? block_starting[target] : kNone;
  };
  auto all_code_labels = [&](BlockId from) {
    for (LabelId l = 0; l < f.labels.size(); ++l) {
      if (f.labels[l].kind != LabelKind::Code) continue;
      if (BlockId to = block_of_label(l); to != kNone) add_edge(cfg.blocks_, from, to);
    }
    cfg.conservative_ = true;
  };
  auto label_named = [&](const std::string& name, uint32_t scope) -> LabelId {
    LabelId found = kNone;
    for (LabelId l = 0; l < f.labels.size(); ++l) {
      if (f.labels[l].name == name && f.labels[l].kind == LabelKind::Code &&
          f.scope_within(scope, f.labels[l].scope)) {
        // The innermost declaring scope wins.
        if (found == kNone || f.scope_within(f.labels[l].scope, f.labels[found].scope)) found = l;
      }
    }
    return found;
  };

  for (BlockId b = 0; b < exit; ++b) {
    const BasicBlock& block = cfg.blocks_[b];
    const BlockId next = b + 1;  // the exit block when b is the last real block
    if (block.empty()) {
      add_edge(cfg.blocks_, b, next);
      continue;
    }
    const Instruction& last = f.instructions[block.last - 1];
    const bool guarded = last.guard.has_value();
    if (last.opcode == Opcode::Bra) {
      if (!last.operands.empty() && last.operands[0].kind == OperandKind::Label) {
        if (BlockId to = block_of_label(last.operands[0].label); to != kNone) {
          add_edge(cfg.blocks_, b, to);
        }
      }
      if (guarded) add_edge(cfg.blocks_, b, next);
    } else if (last.opcode == Opcode::Brx) {
      // brx.idx %r, table: the table is a .branchtargets label.
      bool resolved = false;
      for (const Operand& op : last.operands) {
        if (op.kind != OperandKind::Label || op.label >= f.labels.size()) continue;
        const Label& table = f.labels[op.label];
        if (table.kind != LabelKind::BranchTargets || table.directive >= f.directives.size())
          continue;
        resolved = true;
        for (const std::string& target : f.directives[table.directive].targets) {
          const LabelId l = label_named(target, table.scope);
          if (BlockId to = block_of_label(l); to != kNone) {
            add_edge(cfg.blocks_, b, to);
          } else {
            resolved = false;
          }
        }
      }
      if (!resolved) all_code_labels(b);
      if (guarded) add_edge(cfg.blocks_, b, next);
    } else if (ends_thread(last)) {
      add_edge(cfg.blocks_, b, exit);
      if (guarded) add_edge(cfg.blocks_, b, next);
    } else {
      add_edge(cfg.blocks_, b, next);
    }
  }

  // Reverse post-order by an iterative depth-first search from the entry.
  const auto count = static_cast<uint32_t>(cfg.blocks_.size());
  cfg.rpo_index_.assign(count, kNone);
  std::vector<uint8_t> visited(count, 0);
  std::vector<std::pair<BlockId, uint32_t>> stack{{0, 0}};
  std::vector<BlockId> post;
  visited.at(0) = 1;  // at(): GCC 12 at -O3 cannot see that entry and exit always exist
  while (!stack.empty()) {
    auto& [block, next_succ] = stack.back();
    const std::vector<BlockId>& succ = cfg.blocks_[block].successors;
    if (next_succ < succ.size()) {
      const BlockId s = succ[next_succ++];
      if (!visited[s]) {
        visited[s] = 1;
        stack.emplace_back(s, 0);
      }
    } else {
      post.push_back(block);
      stack.pop_back();
    }
  }
  cfg.rpo_.assign(post.rbegin(), post.rend());
  for (uint32_t i = 0; i < cfg.rpo_.size(); ++i) cfg.rpo_index_[cfg.rpo_[i]] = i;
  return cfg;
}

}  // namespace kiln::ptx
