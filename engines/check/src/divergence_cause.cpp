#include "divergence_cause.h"

#include <algorithm>
#include <set>

#include "constant_value.h"
#include "kiln/ptx/function.h"

namespace kiln::check {
namespace {

bool region_contains(const ptx::DivergentBranch& branch, ptx::BlockId block) {
  return std::binary_search(branch.region.begin(), branch.region.end(), block);
}

// The loop holding both `branch_block` and `block` that `branch_block` exits, if any.
bool exits_enclosing_loop(const FunctionContext& context, ptx::BlockId branch_block,
                          ptx::BlockId block) {
  const ptx::LoopInfo& loops = context.analysis().loops;
  for (uint32_t l = loops.innermost(branch_block); l != ptx::kNone; l = loops.loops()[l].parent) {
    const ptx::Loop& loop = loops.loops()[l];
    if (!loop.contains(block)) continue;
    for (ptx::BlockId s : context.cfg().block(branch_block).successors) {
      if (!loop.contains(s)) return true;
    }
  }
  return false;
}

// What an address points into, as far as registers show it: a named variable or pointer
// parameter (Known), no pointer at all (an offset: immediates, %tid, ...), or something the
// trace cannot tell (a pointer loaded from memory, an atomic's result, two different bases).
struct MemoryBase {
  enum class Kind : uint8_t { None, Known, Unknown } kind = Kind::None;
  std::string name;  // Known: the variable or parameter
  bool operator==(const MemoryBase&) const = default;
};

const MemoryBase kUnknownBase{MemoryBase::Kind::Unknown, {}};

// The base of a sum of `a` and `b` (add, mad, cvta, mov: an offset added to one pointer).
MemoryBase combine(const MemoryBase& a, const MemoryBase& b) {
  if (a.kind == MemoryBase::Kind::None) return b;
  if (b.kind == MemoryBase::Kind::None || a == b) return a;
  return kUnknownBase;
}

class BaseTracer {
 public:
  explicit BaseTracer(const FunctionContext& context) : context_(context) {}

  MemoryBase of_address(ptx::InstructionId at, const ptx::Operand& address) {
    const MemoryBase base = of_operand(at, address.address_base());
    return base.kind == MemoryBase::Kind::None ? kUnknownBase : base;
  }

 private:
  MemoryBase of_operand(ptx::InstructionId at, const ptx::Operand& op) {
    switch (op.kind) {
      case ptx::OperandKind::Symbol:
        return {MemoryBase::Kind::Known, op.name};
      case ptx::OperandKind::Register:
        return of_register(at, op.reg);
      case ptx::OperandKind::SpecialRegister:
        // %envreg1/2 hold the driver's grid workspace (the grid barrier's counter).
        if (op.special == ptx::SpecialRegister::Envreg) return {MemoryBase::Kind::Known, "%envreg"};
        return {};
      case ptx::OperandKind::Immediate:
        return {};
      default:
        return kUnknownBase;
    }
  }

  // Every definition reaching `at` must agree on the base; a loop-carried pointer (p += n)
  // meets itself, which adds nothing.
  MemoryBase of_register(ptx::InstructionId at, ptx::RegisterId reg) {
    const ptx::ReachingDefinitions& rd = context_.analysis().reaching;
    std::optional<MemoryBase> result;
    for (ptx::DefinitionId d : rd.reaching(at, reg)) {
      const MemoryBase b = of_definition(rd.definitions()[d].instruction);
      if (!result) {
        result = b;
      } else if (!(*result == b)) {
        result = combine(*result, b);
      }
    }
    return result.value_or(MemoryBase{});
  }

  MemoryBase of_definition(ptx::InstructionId def) {
    if (in_progress_.size() >= 64 || !in_progress_.insert(def).second) return {};
    MemoryBase base = of_instruction(def);
    in_progress_.erase(def);
    return base;
  }

  MemoryBase of_instruction(ptx::InstructionId def) {
    const ptx::Instruction& inst = context_.instruction(def);
    if (inst.opcode == ptx::Opcode::Ld) {
      // A kernel parameter holds the pointer; anything else loaded is a pointer we cannot see.
      const bool param = inst.state_space() == ptx::StateSpace::Param ||
                         inst.state_space() == ptx::StateSpace::ParamEntry;
      if (param && inst.operands.size() == 2 &&
          inst.operands[1].kind == ptx::OperandKind::Address &&
          inst.operands[1].address_base().kind == ptx::OperandKind::Symbol) {
        return {MemoryBase::Kind::Known, "param " + inst.operands[1].address_base().name};
      }
      return kUnknownBase;
    }
    if (ptx::is_load(inst) || ptx::is_atomic(inst) || ptx::is_call(inst) ||
        inst.opcode == ptx::Opcode::Shfl) {
      return kUnknownBase;
    }
    MemoryBase base;
    for (size_t i = 1; i < inst.operands.size(); ++i) {
      base = combine(base, of_operand(def, inst.operands[i]));
    }
    return base;
  }

  const FunctionContext& context_;
  std::set<ptx::InstructionId> in_progress_;
};

const ptx::Operand* first_address(const ptx::Instruction& inst) {
  for (const ptx::Operand& op : inst.operands) {
    if (op.kind == ptx::OperandKind::Address && !op.elements.empty()) return &op;
  }
  return nullptr;
}

// Memory classes that never overlap: a .shared store cannot change a .global word. Generic
// addresses may point anywhere.
int space_class(ptx::StateSpace space) {
  switch (space) {
    case ptx::StateSpace::Shared:
    case ptx::StateSpace::SharedCta:
    case ptx::StateSpace::SharedCluster:
      return 1;
    case ptx::StateSpace::Global:
      return 2;
    case ptx::StateSpace::Local:
      return 3;
    case ptx::StateSpace::Const:
      return 4;
    default:
      return 0;
  }
}

bool writes_memory(const ptx::Instruction& inst) {
  return ptx::is_store(inst) || ptx::is_atomic(inst) || inst.opcode == ptx::Opcode::Cp ||
         inst.opcode == ptx::Opcode::Mbarrier;
}

// Whether some instruction of the function may write the word `load` reads.
bool may_be_written(const FunctionContext& context, ptx::InstructionId load) {
  const ptx::Operand* address = first_address(context.instruction(load));
  if (address == nullptr) return true;
  BaseTracer tracer(context);
  const MemoryBase read = tracer.of_address(load, *address);
  const int read_space = space_class(context.instruction(load).state_space());
  const ptx::Function& f = context.function();
  for (ptx::InstructionId id = 0; id < f.instructions.size(); ++id) {
    const ptx::Instruction& inst = f.instructions[id];
    if (ptx::is_call(inst)) return true;  // the callee may write anything
    if (!writes_memory(inst)) continue;
    const int space = space_class(inst.state_space());
    if (read_space != 0 && space != 0 && read_space != space) continue;
    const ptx::Operand* target = first_address(inst);
    if (target == nullptr) return true;
    const MemoryBase written = tracer.of_address(id, *target);
    const bool both_known =
        read.kind == MemoryBase::Kind::Known && written.kind == MemoryBase::Kind::Known;
    if (both_known && read.name != written.name) continue;
    return true;
  }
  return false;
}

}  // namespace

DivergenceCause branch_cause(const FunctionContext& context, ptx::BlockId branch_block,
                             std::string_view dependent, ptx::BlockId block) {
  const ptx::InstructionId term = context.cfg().terminator(branch_block);
  const std::string where = term != ptx::kNone ? " at " + context.where(term) : std::string();
  const std::string what(dependent);
  if (term != ptx::kNone && ptx::ends_thread(context.instruction(term))) {
    return {"a " + what + " early return" + where, term};
  }
  if (exits_enclosing_loop(context, branch_block, block)) {
    return {"a loop whose trip count is " + what + where, term};
  }
  return {"a " + what + " branch" + where, term};
}

DivergenceCause branch_cause(const FunctionContext& context, const ptx::DivergentBranch& branch,
                             ptx::BlockId block) {
  return branch_cause(
      context, branch.block,
      branch.level == ptx::Uniformity::Divergent ? "thread-dependent" : "warp-dependent", block);
}

DivergenceCause divergence_cause(const FunctionContext& context, ptx::InstructionId at,
                                 ptx::Uniformity allowed) {
  const ptx::Instruction& inst = context.instruction(at);
  const ptx::UniformityAnalysis& u = context.uniformity();
  if (inst.guard && u.level(inst.guard->reg, at) > allowed) {
    return {"its guard predicate depends on the thread", ptx::kNone};
  }
  const ptx::BlockId block = context.cfg().block_of(at);
  const ptx::DivergentBranch* best = nullptr;
  for (const ptx::DivergentBranch& branch : u.divergent_branches()) {
    if (branch.level <= allowed || !region_contains(branch, block)) continue;
    // Prefer the branch closest to the instruction: the one with the smallest region.
    if (best == nullptr || branch.region.size() < best->region.size()) best = &branch;
  }
  if (best == nullptr) return {"a thread-dependent branch before it", ptx::kNone};
  return branch_cause(context, *best, block);
}

std::vector<const ptx::DivergentBranch*> divergent_branches_over(const FunctionContext& context,
                                                                 ptx::InstructionId at,
                                                                 ptx::Uniformity allowed) {
  const ptx::BlockId block = context.cfg().block_of(at);
  std::vector<const ptx::DivergentBranch*> result;
  for (const ptx::DivergentBranch& branch : context.uniformity().divergent_branches()) {
    if (branch.level > allowed && region_contains(branch, block)) result.push_back(&branch);
  }
  return result;
}

std::optional<std::vector<ptx::InstructionId>> uniform_load_guard(
    const FunctionContext& context, ptx::InstructionId at,
    const std::vector<ptx::BlockId>& branches, ptx::Uniformity allowed) {
  const ptx::UniformityAnalysis& strict = context.uniformity();
  const ptx::UniformityAnalysis& relaxed = context.uniform_load_uniformity();
  std::vector<ValueUse> roots;
  const ptx::Instruction& inst = context.instruction(at);
  if (inst.guard && strict.level(inst.guard->reg, at) > allowed) {
    if (relaxed.level(inst.guard->reg, at) > allowed) return std::nullopt;
    roots.push_back({at, inst.guard->reg});
  }
  for (ptx::BlockId branch : branches) {
    // Still divergent when loads count as uniform: the thread itself decides.
    if (relaxed.branch_level(branch) > allowed) return std::nullopt;
    roots.push_back(branch_predicate(context, branch));
  }
  if (roots.empty()) return std::nullopt;
  // Only branches above Uniform can make a value differ between threads.
  const std::vector<ptx::InstructionId> slice =
      value_slice(context, roots, [&](ptx::BlockId b) { return strict.branch_level(b) > allowed; });
  std::vector<ptx::InstructionId> loads;
  for (ptx::InstructionId id : slice) {
    if (context.instruction(id).opcode != ptx::Opcode::Ld) continue;
    if (strict.result_level(id) == ptx::Uniformity::Uniform) continue;
    // A per-warp address (flags[warp]) is not one word for the CTA.
    if (relaxed.result_level(id) != ptx::Uniformity::Uniform) return std::nullopt;
    if (may_be_written(context, id)) return std::nullopt;
    loads.push_back(id);
  }
  if (loads.empty()) return std::nullopt;
  return loads;
}

}  // namespace kiln::check
