#include "kiln/ptx/uniformity.h"

#include <algorithm>
#include <optional>

#include "kiln/ptx/def_use.h"
#include "kiln/ptx/loops.h"
#include "thread_value.h"

namespace kiln::ptx {

using detail::ThreadValue;

namespace {

Uniformity join(Uniformity a, Uniformity b) { return a > b ? a : b; }

Uniformity special_level(SpecialRegister reg) {
  switch (special_register_variance(reg)) {
    case ThreadVariance::Uniform:
      return Uniformity::Uniform;
    case ThreadVariance::PerWarp:
      return Uniformity::WarpUniform;
    case ThreadVariance::PerThread:
      return Uniformity::Divergent;
  }
  return Uniformity::Divergent;
}

std::optional<uint64_t> immediate(const Instruction& inst, size_t i) {
  if (i >= inst.operands.size() || inst.operands[i].kind != OperandKind::Immediate ||
      inst.operands[i].number.is_float()) {
    return std::nullopt;
  }
  return inst.operands[i].number.bits;
}

std::optional<uint32_t> log2_exact(uint64_t v) {
  if (v == 0 || (v & (v - 1)) != 0) return std::nullopt;
  uint32_t k = 0;
  while ((v >> k) != 1) ++k;
  return k;
}

// The bit operations that keep a %tid.x pattern precise, when operand 1 (or, for and/or, either
// source) is a pattern and the other source a constant. nullopt: not such an operation.
std::optional<ThreadValue> pattern_result(const Instruction& inst,
                                          const std::vector<ThreadValue>& values) {
  auto pattern = [&](size_t i) { return i < values.size() && detail::is_tid_pattern(values[i]); };
  const uint32_t width = std::max<uint32_t>(type_bits(inst.type()), 1);
  switch (inst.opcode) {
    case Opcode::Mov:
      if (pattern(1) && inst.operands[0].kind == OperandKind::Register) return values[1];
      return std::nullopt;
    case Opcode::Cvt: {
      // cvt.u64.u32: the destination type comes first; integer conversions keep the bits.
      if (!pattern(1) || inst.has_modifier("sat") || inst.types.empty()) return std::nullopt;
      for (Type t : inst.types) {
        if (is_float_type(t)) return std::nullopt;
      }
      return detail::truncate(values[1], std::max<uint32_t>(type_bits(inst.types.front()), 1));
    }
    case Opcode::Shr:
      if (auto k = immediate(inst, 2); pattern(1) && k) {
        return detail::shift_right(values[1], static_cast<uint32_t>(std::min<uint64_t>(*k, 127)));
      }
      return std::nullopt;
    case Opcode::Div:
      if (auto d = immediate(inst, 2); pattern(1) && d) {
        if (auto k = log2_exact(*d)) return detail::shift_right(values[1], *k);
      }
      return std::nullopt;
    case Opcode::Shl:
      if (auto k = immediate(inst, 2); pattern(1) && k) {
        return detail::shift_left(values[1], static_cast<uint32_t>(std::min<uint64_t>(*k, 127)),
                                  width);
      }
      return std::nullopt;
    case Opcode::Mul:
      if (!inst.has_modifier("lo")) return std::nullopt;
      if (auto m = immediate(inst, 2); pattern(1) && m) {
        if (auto k = log2_exact(*m)) return detail::shift_left(values[1], *k, width);
      }
      return std::nullopt;
    case Opcode::And:
    case Opcode::Or:
      for (size_t p = 1; p <= 2; ++p) {
        const std::optional<uint64_t> mask = immediate(inst, 3 - p);
        if (!pattern(p) || !mask) continue;
        return inst.opcode == Opcode::And ? detail::and_mask(values[p], *mask)
                                          : detail::or_mask(values[p], *mask);
      }
      return std::nullopt;
    case Opcode::Bfe: {
      const std::optional<uint64_t> pos = immediate(inst, 2), len = immediate(inst, 3);
      if (!pattern(1) || !pos || !len || inst.has_modifier("s32") || inst.has_modifier("s64")) {
        return std::nullopt;
      }
      return detail::bit_field(values[1], static_cast<uint32_t>(std::min<uint64_t>(*pos, 127)),
                               static_cast<uint32_t>(std::min<uint64_t>(*len, 127)));
    }
    case Opcode::Setp: {
      // %tid.x against a warp boundary: tid < 32k (and >=, and <= / > 32k - 1) holds for whole
      // warps, as in `if (threadIdx.x < 128)` picking warps 0-3 in warp-specialized code.
      const std::optional<uint64_t> k = immediate(inst, 2);
      if (!k || values.size() < 2 || values[1] != detail::exact_tid_x() ||
          inst.has_modifier("and") || inst.has_modifier("or") || inst.has_modifier("xor")) {
        return std::nullopt;
      }
      const bool strict = inst.has_modifier("lt") || inst.has_modifier("lo") ||
                          inst.has_modifier("ge") || inst.has_modifier("hs");
      const bool inclusive = inst.has_modifier("le") || inst.has_modifier("ls") ||
                             inst.has_modifier("gt") || inst.has_modifier("hi");
      const uint64_t boundary = inclusive ? *k + 1 : *k;
      if ((strict || inclusive) && boundary % 32 == 0) {
        return detail::from_level(Uniformity::WarpUniform);
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// Blocks reachable from `from` without entering `stop` (stop itself is not included).
std::vector<uint8_t> reach(const ControlFlowGraph& cfg, const std::vector<BlockId>& from,
                           BlockId stop, const std::vector<uint8_t>* within) {
  std::vector<uint8_t> seen(cfg.size(), 0);
  std::vector<BlockId> work;
  for (BlockId s : from) {
    if (s == stop || seen[s] || (within != nullptr && !(*within)[s])) continue;
    seen[s] = 1;
    work.push_back(s);
  }
  while (!work.empty()) {
    const BlockId b = work.back();
    work.pop_back();
    for (BlockId s : cfg.block(b).successors) {
      if (s == stop || seen[s] || (within != nullptr && !(*within)[s])) continue;
      seen[s] = 1;
      work.push_back(s);
    }
  }
  return seen;
}

}  // namespace

std::string_view uniformity_name(Uniformity level) {
  switch (level) {
    case Uniformity::Uniform:
      return "uniform";
    case Uniformity::WarpUniform:
      return "warp-uniform";
    case Uniformity::Divergent:
      return "divergent";
  }
  return "divergent";
}

UniformityAnalysis UniformityAnalysis::compute(const Function& function,
                                               const ControlFlowGraph& cfg,
                                               const DominatorTree& post_dominators,
                                               const UniformityOptions& options) {
  UniformityAnalysis a;
  a.function_ = &function;
  a.cfg_ = &cfg;
  a.pdom_ = &post_dominators;
  a.options_ = options;
  a.warp_aligned_x_ = options.warp_aligned_x;
  if (const FunctionAttribute* reqntid = function.attribute("reqntid")) {
    if (!reqntid->values.empty()) a.warp_aligned_x_ = reqntid->values[0] % 32 == 0;
  }
  a.register_count_ = static_cast<uint32_t>(function.registers.size());
  const uint32_t blocks = cfg.size();
  const auto n = static_cast<uint32_t>(function.instructions.size());
  a.block_in_.assign(blocks, std::vector<Value>(a.register_count_, detail::kUnsetValue));
  a.block_out_ = a.block_in_;
  a.join_taint_.assign(blocks, {});
  a.block_defs_.assign(blocks, {});
  a.result_.assign(n, Uniformity::Uniform);
  a.guard_.assign(n, Uniformity::Uniform);
  a.branch_.assign(blocks, Uniformity::Uniform);
  a.block_control_.assign(blocks, Uniformity::Uniform);
  a.pending_.assign(blocks, 1);
  a.visited_.assign(blocks, 0);
  std::vector<RegisterId> regs;
  for (BlockId b = 0; b < blocks; ++b) {
    regs.clear();
    for (InstructionId i = cfg.block(b).first; i < cfg.block(b).last; ++i) {
      append_defs(function.instructions[i], regs);
    }
    std::sort(regs.begin(), regs.end());
    regs.erase(std::unique(regs.begin(), regs.end()), regs.end());
    a.block_defs_[b] = regs;
  }
  // Branch levels only rise and regions only grow, so this reaches a fixed point; the bound
  // is a guard against mistakes, not a limit real code meets.
  const DominatorTree dominators = DominatorTree::dominators(cfg);
  const LoopInfo loops = LoopInfo::compute(cfg, dominators);
  const uint32_t max_rounds = 2 * blocks + 4;
  while (a.rounds_ < max_rounds) {
    ++a.rounds_;
    a.propagate_values();
    if (!a.update_branches()) break;
    a.compute_regions(loops);
  }
  // Record per-instruction levels from the final block states.
  a.use_begin_.assign(n + 1, 0);
  std::vector<Value> state;
  for (BlockId b = 0; b < blocks; ++b) {
    state = a.block_in_[b];
    for (InstructionId i = cfg.block(b).first; i < cfg.block(b).last; ++i) {
      const Instruction& inst = function.instructions[i];
      a.use_begin_[i] = static_cast<uint32_t>(a.uses_.size());
      if (inst.guard && inst.guard->reg < state.size()) {
        a.guard_[i] = detail::to_level(state[inst.guard->reg]);
      }
      regs.clear();
      append_uses(inst, regs);
      for (RegisterId r : regs) {
        if (r < state.size()) a.uses_.emplace_back(r, detail::to_level(state[r]));
      }
      a.result_[i] = a.apply(i, state);
    }
  }
  a.use_begin_[n] = static_cast<uint32_t>(a.uses_.size());
  return a;
}

UniformityAnalysis::Value UniformityAnalysis::operand_value(const Operand& op,
                                                            const std::vector<Value>& state) const {
  switch (op.kind) {
    case OperandKind::Register:
      if (op.reg >= state.size()) return detail::kDivergentValue;
      return state[op.reg] == detail::kUnsetValue ? detail::kUniformValue : state[op.reg];
    case OperandKind::SpecialRegister:
      // With warp-aligned rows, a warp is 32 consecutive x of one (y, z).
      if (op.special == SpecialRegister::Tid && warp_aligned_x_) {
        if (op.component == 'x') return detail::exact_tid_x();
        if (op.component == 'y' || op.component == 'z') return detail::kWarpUniformValue;
      }
      return detail::from_level(special_level(op.special));
    case OperandKind::Immediate:
    case OperandKind::Symbol:
    case OperandKind::Label:
    case OperandKind::Sink:
      return detail::kUniformValue;
    case OperandKind::Address:
    case OperandKind::Vector:
    case OperandKind::List:
    case OperandKind::Pair: {
      Uniformity level = Uniformity::Uniform;
      for (const Operand& e : op.elements) {
        level = join(level, detail::to_level(operand_value(e, state)));
      }
      return detail::from_level(level);
    }
  }
  return detail::kDivergentValue;
}

// What a load returns: the address's level when every thread reading one address must see the
// same value (constant, kernel parameters, read-only global), else Divergent.
Uniformity UniformityAnalysis::load_level(const Instruction& inst, Uniformity address) const {
  const StateSpace space = inst.state_space();
  if (space == StateSpace::Const) return address;
  if (is_param_space(space)) {
    const Operand* addr = nullptr;
    for (const Operand& op : inst.operands) {
      if (op.kind == OperandKind::Address) addr = &op;
    }
    if (addr == nullptr || addr->elements.empty()) return Uniformity::Divergent;
    const Operand& base = addr->address_base();
    const bool own_param =
        base.kind == OperandKind::Symbol && function_->param(base.name) != nullptr;
    if (function_->is_kernel()) {
      // A kernel parameter by name, or through a register holding a parameter's address.
      if (own_param || base.kind == OperandKind::Register) return address;
      return Uniformity::Divergent;  // a callee's return value (callseq retval)
    }
    if (own_param && options_.function_params_uniform) return address;
    return Uniformity::Divergent;
  }
  if (space == StateSpace::Global && inst.has_modifier("nc")) return address;
  if (options_.loads_from_uniform_addresses_uniform && space != StateSpace::Local) return address;
  return Uniformity::Divergent;
}

UniformityAnalysis::Value UniformityAnalysis::compute_result(
    const Instruction& inst, const std::vector<Value>& state) const {
  const bool skip_first = has_destination(inst) && !reads_destination(inst);
  std::vector<Value> values(inst.operands.size(), detail::kUniformValue);
  Uniformity sources = Uniformity::Uniform;
  for (size_t i = skip_first ? 1 : 0; i < inst.operands.size(); ++i) {
    values[i] = operand_value(inst.operands[i], state);
    sources = join(sources, detail::to_level(values[i]));
  }
  if (std::optional<Value> bits = pattern_result(inst, values)) return *bits;
  auto operand = [&](size_t i) {
    return i < values.size() ? detail::to_level(values[i]) : Uniformity::Uniform;
  };
  Uniformity level = sources;
  switch (inst.opcode) {
    case Opcode::Ld:
      level = load_level(inst, sources);
      break;
    case Opcode::Ldu:
    case Opcode::Tex:
    case Opcode::Tld4:
      break;
    case Opcode::Atom:
    case Opcode::Suld:
    case Opcode::Elect:
    case Opcode::Mbarrier:
    case Opcode::Ldmatrix:
    case Opcode::Mma:
    case Opcode::Wgmma:
    case Opcode::Wmma:
    case Opcode::Movmatrix:
    case Opcode::Tcgen05:
    case Opcode::Multimem:
      level = Uniformity::Divergent;
      break;
    case Opcode::Activemask:
    case Opcode::Redux:
      level = Uniformity::WarpUniform;
      break;
    case Opcode::Bar:
    case Opcode::Barrier:
      level = Uniformity::Uniform;  // bar.red: one CTA-wide result for every thread
      break;
    case Opcode::Match:
      level = inst.has_modifier("all") ? Uniformity::WarpUniform : Uniformity::Divergent;
      break;
    case Opcode::Vote:
      level = inst.has_modifier("ballot") || operand(1) != Uniformity::Uniform
                  ? Uniformity::WarpUniform
                  : Uniformity::Uniform;
      break;
    case Opcode::Shfl:
      // shfl.sync.mode.b32 d[|p], a, b, c, membermask. When every lane holds the same value
      // any shuffle returns it; an idx shuffle from a warp-uniform lane broadcasts one lane.
      if (operand(1) != Uniformity::Divergent) {
        level = operand(1);
      } else if (inst.has_modifier("idx") &&
                 join(operand(2), operand(3)) != Uniformity::Divergent) {
        level = Uniformity::WarpUniform;
      } else {
        level = Uniformity::Divergent;
      }
      break;
    default:
      break;
  }
  return detail::from_level(level);
}

Uniformity UniformityAnalysis::apply(InstructionId id, std::vector<Value>& state) const {
  const Instruction& inst = function_->instructions[id];
  const Uniformity guard = inst.guard && inst.guard->reg < state.size()
                               ? detail::to_level(state[inst.guard->reg])
                               : Uniformity::Uniform;
  Uniformity written = Uniformity::Uniform;
  auto write = [&](RegisterId r, Value value) {
    if (r >= state.size()) return;
    // A guarded write happens in some threads only: the register now also depends on the guard.
    state[r] = inst.guard ? detail::join_values(detail::join_values(state[r], value),
                                                detail::from_level(guard))
                          : value;
    written = join(written, detail::to_level(state[r]));
  };
  if (call_returns_registers(inst)) {
    // What a callee returns is not known here.
    for (const Operand& e : inst.operands.front().elements) {
      if (e.kind == OperandKind::Register) write(e.reg, detail::kDivergentValue);
    }
    return written;
  }
  if (!has_destination(inst)) return Uniformity::Uniform;
  const Value value = compute_result(inst, state);
  const Operand& dest = inst.operands.front();
  if (dest.kind == OperandKind::Register) {
    write(dest.reg, value);
  } else if (dest.kind == OperandKind::Pair) {
    for (size_t k = 0; k < dest.elements.size(); ++k) {
      if (dest.elements[k].kind != OperandKind::Register) continue;
      Value v = detail::from_level(detail::to_level(value));
      // The predicate of shfl.up/down/bfly says whether the source lane was in range: per lane.
      if (k == 1 && inst.opcode == Opcode::Shfl && !inst.has_modifier("idx")) {
        v = detail::kDivergentValue;
      }
      write(dest.elements[k].reg, v);
    }
  } else if (dest.kind == OperandKind::Vector) {
    // Unpacking {lo, hi} splits the value: no element keeps a %tid.x bit pattern.
    const Value part = detail::from_level(detail::to_level(value));
    for (const Operand& e : dest.elements) {
      if (e.kind == OperandKind::Register) write(e.reg, part);
    }
  }
  return written;
}

void UniformityAnalysis::propagate_values() {
  const ControlFlowGraph& cfg = *cfg_;
  std::vector<Value> state(register_count_);
  bool any = true;
  while (any) {
    any = false;
    for (BlockId b : cfg.reverse_post_order()) {
      if (!pending_[b]) continue;
      pending_[b] = 0;
      std::fill(state.begin(), state.end(), detail::kUnsetValue);
      for (BlockId p : cfg.block(b).predecessors) {
        if (!cfg.reachable(p)) continue;
        const std::vector<Value>& out = block_out_[p];
        for (uint32_t r = 0; r < register_count_; ++r) {
          state[r] = detail::join_values(state[r], out[r]);
        }
      }
      for (const auto& [r, level] : join_taint_[b]) {
        state[r] = detail::join_values(state[r], detail::from_level(level));
      }
      if (visited_[b] && state == block_in_[b]) continue;
      visited_[b] = 1;
      block_in_[b] = state;
      for (InstructionId i = cfg.block(b).first; i < cfg.block(b).last; ++i) apply(i, state);
      if (state != block_out_[b]) {
        block_out_[b] = state;
        for (BlockId s : cfg.block(b).successors) {
          pending_[s] = 1;
          any = true;
        }
      }
    }
  }
}

bool UniformityAnalysis::update_branches() {
  const ControlFlowGraph& cfg = *cfg_;
  bool changed = false;
  std::vector<Value> state;
  for (BlockId b : cfg.reverse_post_order()) {
    const InstructionId t = cfg.terminator(b);
    if (t == kNone) continue;
    const Instruction& inst = function_->instructions[t];
    if (!inst.guard && inst.opcode != Opcode::Brx) continue;
    state = block_in_[b];
    for (InstructionId i = cfg.block(b).first; i < t; ++i) apply(i, state);
    Uniformity level = inst.guard && inst.guard->reg < state.size()
                           ? detail::to_level(state[inst.guard->reg])
                           : Uniformity::Uniform;
    if (inst.opcode == Opcode::Brx && !inst.operands.empty()) {
      level = join(level, detail::to_level(operand_value(inst.operands.front(), state)));
    }
    if (level > branch_[b]) {
      branch_[b] = level;
      changed = true;
    }
  }
  return changed;
}

void UniformityAnalysis::compute_regions(const LoopInfo& loops) {
  const ControlFlowGraph& cfg = *cfg_;
  const uint32_t blocks = cfg.size();
  branches_.clear();
  std::fill(block_control_.begin(), block_control_.end(), Uniformity::Uniform);
  std::vector<std::vector<Uniformity>> taint(blocks);
  auto add_taint = [&](BlockId j, const std::vector<uint8_t>& from_blocks, Uniformity level) {
    if (j == cfg.exit()) return;
    if (taint[j].empty()) taint[j].assign(register_count_, Uniformity::Uniform);
    for (BlockId x = 0; x < blocks; ++x) {
      if (!from_blocks[x]) continue;
      for (RegisterId r : block_defs_[x]) taint[j][r] = join(taint[j][r], level);
    }
  };

  for (BlockId b = 0; b < blocks; ++b) {
    if (branch_[b] == Uniformity::Uniform || !cfg.reachable(b)) continue;
    DivergentBranch info;
    info.block = b;
    info.level = branch_[b];
    BlockId p = pdom_->idom(b);
    if (p == kNone) p = cfg.exit();
    info.reconvergence = p;
    const std::vector<BlockId>& succ = cfg.block(b).successors;
    const std::vector<uint8_t> region = reach(cfg, succ, p, nullptr);
    std::vector<uint8_t> region_or_p = region;
    region_or_p[p] = 1;
    for (BlockId x = 0; x < blocks; ++x) {
      if (!region[x]) continue;
      info.region.push_back(x);
      block_control_[x] = join(block_control_[x], info.level);
    }
    // Spatial joins: blocks with two or more predecessors that paths from different successors
    // of the branch reach before (or at) the reconvergence point.
    std::vector<uint8_t> hits(blocks, 0);
    for (size_t k = 0; k < succ.size(); ++k) {
      // Within the region, never through p; p counts when reached.
      std::vector<uint8_t> from_k = reach(cfg, {succ[k]}, p, &region);
      bool reaches_p = succ[k] == p;
      for (BlockId x = 0; x < blocks; ++x) {
        if (!from_k[x]) continue;
        if (hits[x] < 255) ++hits[x];
        const std::vector<BlockId>& xs = cfg.block(x).successors;
        reaches_p = reaches_p || std::find(xs.begin(), xs.end(), p) != xs.end();
      }
      if (reaches_p && hits[p] < 255) ++hits[p];
    }
    for (BlockId x = 0; x < blocks; ++x) {
      if (hits[x] < 2 || cfg.block(x).predecessors.size() < 2 || x == cfg.exit()) continue;
      info.joins.push_back(x);
      // The registers written on the way: in region blocks that reach x inside the region.
      std::vector<uint8_t> writers(blocks, 0);
      std::vector<BlockId> work{x};
      while (!work.empty()) {
        const BlockId y = work.back();
        work.pop_back();
        for (BlockId q : cfg.block(y).predecessors) {
          if (region[q] && !writers[q]) {
            writers[q] = 1;
            work.push_back(q);
          }
        }
      }
      add_taint(x, writers, info.level);
    }
    // Temporal joins: a loop holding the branch that threads leave at different iterations
    // (the branch reconverges outside it). Its exits see every register the loop writes.
    for (const Loop& loop : loops.loops()) {
      if (!loop.contains(b) || loop.contains(p)) continue;
      std::vector<uint8_t> in_loop(blocks, 0);
      for (BlockId x : loop.blocks) in_loop[x] = 1;
      for (BlockId x : loop.exits) {
        if (!region_or_p[x] || x == cfg.exit()) continue;
        if (std::find(info.joins.begin(), info.joins.end(), x) == info.joins.end()) {
          info.joins.push_back(x);
        }
        add_taint(x, in_loop, info.level);
      }
    }
    std::sort(info.joins.begin(), info.joins.end());
    branches_.push_back(std::move(info));
  }
  std::vector<std::pair<RegisterId, Uniformity>> next;
  for (BlockId b = 0; b < blocks; ++b) {
    next.clear();
    for (RegisterId r = 0; r < taint[b].size(); ++r) {
      if (taint[b][r] != Uniformity::Uniform) next.emplace_back(r, taint[b][r]);
    }
    if (next != join_taint_[b]) {
      join_taint_[b] = next;
      pending_[b] = 1;
    }
  }
}

Uniformity UniformityAnalysis::level(RegisterId reg, InstructionId at) const {
  if (at >= result_.size() || reg >= register_count_) return Uniformity::Divergent;
  for (uint32_t k = use_begin_[at]; k < use_begin_[at + 1]; ++k) {
    if (uses_[k].first == reg) return uses_[k].second;
  }
  // Not read by `at`: replay its block up to it.
  const BlockId b = cfg_->block_of(at);
  std::vector<Value> state = block_in_[b];
  for (InstructionId i = cfg_->block(b).first; i < at; ++i) apply(i, state);
  return detail::to_level(state[reg]);
}

Uniformity UniformityAnalysis::control_level(InstructionId at) const {
  if (at >= result_.size()) return Uniformity::Divergent;
  return join(block_control_[cfg_->block_of(at)], guard_[at]);
}

}  // namespace kiln::ptx
