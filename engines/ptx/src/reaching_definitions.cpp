#include "kiln/ptx/reaching_definitions.h"

#include "kiln/ptx/def_use.h"

namespace kiln::ptx {
namespace {

// Bit layout: definitions first, then one "undefined" pseudo-definition per register.
struct BitSpan {
  uint64_t* words;
  uint32_t count;
  void set(uint32_t bit) { words[bit >> 6] |= uint64_t{1} << (bit & 63); }
  void reset(uint32_t bit) { words[bit >> 6] &= ~(uint64_t{1} << (bit & 63)); }
};

bool test(const uint64_t* words, uint32_t bit) { return (words[bit >> 6] >> (bit & 63)) & 1; }

}  // namespace

ReachingDefinitions ReachingDefinitions::compute(const Function& f, const ControlFlowGraph& cfg) {
  ReachingDefinitions rd;
  rd.function_ = &f;
  rd.cfg_ = &cfg;
  const auto regs = static_cast<uint32_t>(f.registers.size());
  rd.by_reg_.assign(regs, {});
  rd.defs_at_.assign(f.instructions.size(), {});
  std::vector<RegisterId> scratch;
  for (InstructionId i = 0; i < f.instructions.size(); ++i) {
    scratch.clear();
    append_defs(f.instructions[i], scratch);
    for (RegisterId r : scratch) {
      if (r >= regs) continue;
      const auto id = static_cast<DefinitionId>(rd.defs_.size());
      rd.defs_.push_back({i, r, f.instructions[i].guard.has_value()});
      rd.by_reg_[r].push_back(id);
      rd.defs_at_[i].push_back(id);
    }
  }
  const auto bits = static_cast<uint32_t>(rd.defs_.size()) + regs;
  rd.words_ = (bits + 63) / 64 + 1;  // never zero: &set[b * w] must stay a valid element
  const uint32_t blocks = cfg.size();
  const size_t w = rd.words_;

  // gen/kill per block; a register written unconditionally kills all its other definitions
  // and its undefined pseudo-definition.
  std::vector<uint64_t> gen(blocks * w, 0), kill(blocks * w, 0);
  for (BlockId b = 0; b < blocks; ++b) {
    BitSpan g{&gen[b * w], bits}, k{&kill[b * w], bits};
    const BasicBlock& block = cfg.block(b);
    for (InstructionId i = block.first; i < block.last; ++i) {
      for (DefinitionId d : rd.defs_at_[i]) {
        const Definition& def = rd.defs_[d];
        if (!def.conditional) {
          for (DefinitionId other : rd.by_reg_[def.reg]) {
            g.reset(other);
            k.set(other);
          }
          k.set(static_cast<uint32_t>(rd.defs_.size()) + def.reg);
          k.reset(d);
        }
        g.set(d);
      }
    }
  }
  rd.in_.assign(blocks * w, 0);
  std::vector<uint64_t> out(blocks * w, 0);
  // The entry's input: every register undefined.
  std::vector<uint64_t> entry(w, 0);
  {
    BitSpan e{entry.data(), bits};
    for (RegisterId r = 0; r < regs; ++r) e.set(static_cast<uint32_t>(rd.defs_.size()) + r);
  }
  const std::vector<BlockId>& rpo = cfg.reverse_post_order();
  bool changed = true;
  while (changed) {
    changed = false;
    for (BlockId b : rpo) {
      uint64_t* in = &rd.in_[b * w];
      if (b == cfg.entry()) {
        for (size_t i = 0; i < w; ++i) in[i] = entry[i];
      }
      for (BlockId p : cfg.block(b).predecessors) {
        const uint64_t* po = &out[p * w];
        for (size_t i = 0; i < w; ++i) in[i] |= po[i];
      }
      uint64_t* o = &out[b * w];
      const uint64_t* g = &gen[b * w];
      const uint64_t* k = &kill[b * w];
      for (size_t i = 0; i < w; ++i) {
        const uint64_t next = g[i] | (in[i] & ~k[i]);
        if (next != o[i]) {
          o[i] = next;
          changed = true;
        }
      }
    }
  }
  return rd;
}

template <typename Visit>
void ReachingDefinitions::scan(InstructionId at, RegisterId reg, Visit&& visit,
                               bool& undefined) const {
  undefined = false;
  if (reg >= by_reg_.size() || at >= defs_at_.size()) return;
  const BlockId b = cfg_->block_of(at);
  const uint64_t* in = &in_[static_cast<size_t>(b) * words_];
  // Walk the block backwards from `at`: the nearest unconditional write decides alone.
  const InstructionId first = cfg_->block(b).first;
  std::vector<DefinitionId> conditional;
  for (InstructionId i = at; i-- > first;) {
    for (DefinitionId d : defs_at_[i]) {
      if (defs_[d].reg != reg) continue;
      if (!defs_[d].conditional) {
        for (DefinitionId c : conditional) visit(c);
        visit(d);
        return;
      }
      conditional.push_back(d);
    }
  }
  for (DefinitionId c : conditional) visit(c);
  for (DefinitionId d : by_reg_[reg]) {
    if (test(in, d)) visit(d);
  }
  undefined = test(in, static_cast<uint32_t>(defs_.size()) + reg);
}

std::vector<DefinitionId> ReachingDefinitions::reaching(InstructionId at, RegisterId reg) const {
  std::vector<DefinitionId> out;
  bool undefined = false;
  scan(
      at, reg, [&](DefinitionId d) { out.push_back(d); }, undefined);
  return out;
}

bool ReachingDefinitions::may_be_undefined(InstructionId at, RegisterId reg) const {
  bool undefined = false;
  scan(
      at, reg, [](DefinitionId) {}, undefined);
  return undefined;
}

}  // namespace kiln::ptx
