#include "decoder.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "exec.h"
#include "kiln/ptx/cfg.h"
#include "kiln/ptx/dominators.h"

namespace kiln::sim {

using ptx::Operand;
using ptx::OperandKind;
using ptx::Type;

Space space_of(ptx::StateSpace space) {
  switch (space) {
    case ptx::StateSpace::Global:
      return Space::Global;
    case ptx::StateSpace::Shared:
    case ptx::StateSpace::SharedCta:
    case ptx::StateSpace::SharedCluster:
      return Space::Shared;
    case ptx::StateSpace::Local:
      return Space::Local;
    case ptx::StateSpace::Const:
      return Space::Const;
    case ptx::StateSpace::Param:
    case ptx::StateSpace::ParamEntry:
    case ptx::StateSpace::ParamFunc:
      return Space::Param;
    default:
      return Space::Generic;
  }
}

void unsupported_handler(Exec& x, const Inst& inst, uint32_t mask) {
  uint32_t pc = x.pc_of(inst);
  const std::string& note = x.program->notes[pc];
  x.fault(inst, static_cast<uint32_t>(std::countr_zero(mask | (1u << 31))),
          "unsupported_instruction", 0,
          "the simulator does not implement '" + x.program->texts[pc] + "' (PTX line " +
              std::to_string(x.program->ptx_lines[pc]) + ")" + (note.empty() ? "" : ": " + note) +
              "; run this kernel on a GPU (benchmark), or rewrite it without this form");
}

namespace {

uint64_t align_up(uint64_t value, uint64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

uint32_t natural_align(const ptx::Variable& v) {
  if (v.align != 0) return v.align;
  uint32_t bits = ptx::type_bits(v.type);
  uint32_t bytes = std::max<uint32_t>(1, bits / 8) * std::max<uint32_t>(1, v.vector_width);
  return bytes;
}

void collect_symbols(const Operand& op, std::vector<std::string>& out) {
  if (op.kind == OperandKind::Symbol) out.push_back(op.name);
  for (const Operand& e : op.elements) collect_symbols(e, out);
}

}  // namespace

Decoder::Decoder(const ptx::Module& module, const ptx::Function& function,
                 const SymbolTable& globals)
    : module_(module), function_(function), globals_(globals) {}

void Decoder::fail(std::string why) {
  if (failure_.empty()) failure_ = std::move(why);
}

void Decoder::lay_out_symbols() {
  // Parameters of a kernel: the packed buffer the launch passes.
  uint64_t param_offset = 0;
  for (const ptx::Variable& p : function_.params) {
    uint64_t size = p.size_bytes().value_or(8);
    param_offset = align_up(param_offset, natural_align(p));
    locals_[p.name] = {Space::Param, param_offset};
    param_offset += size;
  }
  // The .shared symbols this function names (module scope or its own body).
  std::vector<std::string> used;
  for (const ptx::Instruction& in : function_.instructions) {
    for (const Operand& op : in.operands) collect_symbols(op, used);
  }
  std::sort(used.begin(), used.end());
  auto is_used = [&](const std::string& name) {
    return std::binary_search(used.begin(), used.end(), name);
  };
  std::vector<const ptx::Variable*> shared;
  for (const ptx::Variable& v : module_.variables) {
    if (space_of(v.space) == Space::Shared && is_used(v.name)) shared.push_back(&v);
  }
  uint64_t local_offset = 0;
  for (const ptx::Variable& v : function_.variables) {
    Space s = space_of(v.space);
    if (s == Space::Shared) shared.push_back(&v);
    if (s == Space::Local) {
      local_offset = align_up(local_offset, natural_align(v));
      locals_[v.name] = {Space::Local, local_offset};
      local_offset += v.size_bytes().value_or(0);
    }
  }
  uint64_t shared_offset = 0;
  uint32_t dynamic_align = 16;
  std::vector<const ptx::Variable*> dynamic;
  for (const ptx::Variable* v : shared) {
    std::optional<uint64_t> size = v->size_bytes();
    if (!size || v->linkage == ptx::Linkage::Extern) {
      dynamic.push_back(v);
      dynamic_align = std::max(dynamic_align, natural_align(*v));
      continue;
    }
    shared_offset = align_up(shared_offset, natural_align(*v));
    locals_[v->name] = {Space::Shared, shared_offset};
    shared_offset += *size;
  }
  program_.shared_static_bytes = static_cast<uint32_t>(shared_offset);
  program_.shared_dynamic_offset = static_cast<uint32_t>(align_up(shared_offset, dynamic_align));
  for (const ptx::Variable* v : dynamic) {
    locals_[v->name] = {Space::Shared, program_.shared_dynamic_offset};
  }
  program_.local_bytes = static_cast<uint32_t>(align_up(local_offset, 16));
}

void Decoder::number_registers() {
  register_slot_.resize(function_.registers.size());
  uint32_t values = 0, predicates = 0;
  for (size_t i = 0; i < function_.registers.size(); ++i) {
    const ptx::Register& r = function_.registers[i];
    register_slot_[i] = r.type == Type::Pred ? predicates++ : values++;
  }
  program_.value_slots = values;
  program_.predicate_slots = predicates;
}

bool Decoder::is_predicate(const Operand& operand) const {
  return operand.kind == OperandKind::Register && operand.reg < function_.registers.size() &&
         function_.registers[operand.reg].type == Type::Pred;
}

uint32_t Decoder::constant(uint64_t bits) {
  auto [it, inserted] = constant_slots_.try_emplace(bits, program_.value_slots);
  if (inserted) {
    ConstantSlot c;
    c.kind = ConstantSlot::Kind::Value;
    c.slot = program_.value_slots++;
    c.value = bits;
    program_.constants.push_back(c);
  }
  return it->second;
}

uint32_t Decoder::special(ptx::SpecialRegister reg, char component) {
  uint32_t key = static_cast<uint32_t>(reg) << 8 | static_cast<uint8_t>(component);
  auto [it, inserted] = special_slots_.try_emplace(key, program_.value_slots);
  if (inserted) {
    ConstantSlot c;
    c.kind = ConstantSlot::Kind::Special;
    c.slot = program_.value_slots++;
    c.special = reg;
    c.component = component;
    program_.constants.push_back(c);
  }
  return it->second;
}

uint32_t Decoder::scratch() {
  if (scratch_slot_ == UINT32_MAX) scratch_slot_ = program_.value_slots++;
  return scratch_slot_;
}

uint32_t Decoder::value(const Operand& op, Type type) {
  switch (op.kind) {
    case OperandKind::Register:
      if (op.reg >= register_slot_.size()) break;
      if (is_predicate(op)) {
        fail("a predicate register where a value is expected");
        return 0;
      }
      if (function_.registers[op.reg].vector_width > 1) {
        fail("vector registers (.reg .v4) are not supported");
        return 0;
      }
      return register_slot_[op.reg];
    case OperandKind::Immediate: {
      const ptx::Number& n = op.number;
      if (type == Type::F32) {
        if (n.format == ptx::NumberFormat::HexF32) return constant(n.bits & 0xffffffffu);
        float f = static_cast<float>(n.as_double());
        return constant(std::bit_cast<uint32_t>(f));
      }
      if (type == Type::F64) {
        if (n.format == ptx::NumberFormat::HexF64) return constant(n.bits);
        return constant(std::bit_cast<uint64_t>(n.as_double()));
      }
      if (n.format == ptx::NumberFormat::HexF32) return constant(n.bits & 0xffffffffu);
      uint32_t bits = ptx::type_bits(type);
      if (bits > 0 && bits < 64 && !n.is_float()) return constant(n.bits & ((1ull << bits) - 1));
      return constant(n.bits);
    }
    case OperandKind::SpecialRegister:
      return special(op.special, op.component);
    case OperandKind::Symbol: {
      auto local = locals_.find(op.name);
      if (local != locals_.end()) {
        return constant(local->second.address + static_cast<uint64_t>(op.offset));
      }
      auto global = globals_.find(op.name);
      if (global != globals_.end()) {
        return constant(global->second.address + static_cast<uint64_t>(op.offset));
      }
      fail("symbol '" + op.name + "' is not a variable the simulator placed");
      return 0;
    }
    case OperandKind::Sink:
      return scratch();
    default:
      break;
  }
  fail("unexpected operand form");
  return 0;
}

uint32_t Decoder::predicate(const Operand& op) {
  if (!is_predicate(op)) {
    if (op.kind == OperandKind::Immediate) {
      // A constant predicate: a dedicated always/never slot is not worth it; refuse.
      fail("an immediate where a predicate register is expected");
    } else {
      fail("expected a predicate register");
    }
    return 0;
  }
  return register_slot_[op.reg] | (op.negated ? kNegated : 0);
}

Address Decoder::address(const Operand& op) {
  Address a;
  if (op.kind != OperandKind::Address || op.elements.empty()) {
    fail("expected an address [..]");
    return a;
  }
  const Operand& base = op.address_base();
  a.offset = op.offset;
  if (base.kind == OperandKind::Symbol) {
    a.symbol = true;
    auto local = locals_.find(base.name);
    if (local != locals_.end()) {
      a.symbol_space = local->second.space;
    } else if (auto global = globals_.find(base.name); global != globals_.end()) {
      a.symbol_space = global->second.space;
    }
    a.base = value(base, Type::U64);
    a.offset += 0;
  } else if (base.kind == OperandKind::Immediate) {
    a.base = constant(0);
    a.offset += base.number.as_int();
  } else {
    a.base = value(base, Type::U64);
  }
  return a;
}

void Decoder::decode_instruction(uint32_t index) {
  const ptx::Instruction& in = function_.instructions[index];
  Inst out;
  out.source = index;
  out.ops = static_cast<uint32_t>(program_.operands.size());
  failure_.clear();
  bool ok = false;
  using ptx::Opcode;
  switch (in.opcode) {
    case Opcode::Bra:
    case Opcode::Ret:
    case Opcode::Exit:
    case Opcode::Trap:
    case Opcode::Bar:
    case Opcode::Barrier:
    case Opcode::Nanosleep:
    case Opcode::Brkpt:
    case Opcode::Pmevent:
    case Opcode::Setmaxnreg:
    case Opcode::Griddepcontrol:
      ok = decode_control(*this, in, out);
      break;
    case Opcode::Ld:
    case Opcode::Ldu:
    case Opcode::St:
    case Opcode::Membar:
    case Opcode::Fence:
    case Opcode::Prefetch:
    case Opcode::Prefetchu:
    case Opcode::Applypriority:
    case Opcode::Discard:
    case Opcode::Createpolicy:
    case Opcode::Isspacep:
      ok = decode_memory(*this, in, out);
      break;
    case Opcode::Atom:
    case Opcode::Red:
      ok = decode_atomic(*this, in, out);
      break;
    case Opcode::Setp:
    case Opcode::Set:
    case Opcode::Selp:
    case Opcode::Slct:
      ok = decode_compare(*this, in, out);
      break;
    case Opcode::Mov:
    case Opcode::Cvta:
    case Opcode::Activemask:
      ok = decode_move(*this, in, out);
      break;
    case Opcode::Cvt:
      ok = decode_convert(*this, in, out);
      break;
    case Opcode::Shfl:
    case Opcode::Vote:
    case Opcode::Redux:
    case Opcode::Match:
    case Opcode::Elect:
      ok = decode_warp(*this, in, out);
      break;
    case Opcode::Ldmatrix:
    case Opcode::Stmatrix:
    case Opcode::Mma:
    case Opcode::Movmatrix:
      ok = decode_matrix(*this, in, out);
      break;
    case Opcode::Cp:
    case Opcode::Mbarrier:
      ok = decode_async(*this, in, out);
      break;
    case Opcode::Wgmma:
      ok = decode_wgmma(*this, in, out);
      break;
    case Opcode::Mapa:
      ok = decode_move(*this, in, out);
      break;
    default: {
      Type t = in.type();
      bool half = t == Type::F16 || t == Type::F16x2 || t == Type::BF16 || t == Type::BF16x2;
      if (half) {
        ok = decode_half(*this, in, out);
      } else if (ptx::is_float_type(t)) {
        ok = decode_float(*this, in, out);
      } else if ((in.opcode == Opcode::And || in.opcode == Opcode::Or || in.opcode == Opcode::Xor ||
                  in.opcode == Opcode::Not) &&
                 t == Type::Pred) {
        ok = decode_move(*this, in, out);
      } else {
        ok = decode_integer(*this, in, out);
      }
    }
  }
  std::string note;
  if (!ok || failed()) {
    note = failed() ? failure_ : "";
    program_.operands.resize(out.ops);
    Inst bad;
    bad.fn = &unsupported_handler;
    bad.source = index;
    bad.ops = out.ops;
    out = bad;
  }
  out.nops = static_cast<uint16_t>(program_.operands.size() - out.ops);
  failure_.clear();
  if (in.guard) {
    const ptx::Register& r = function_.registers[in.guard->reg];
    if (r.type == Type::Pred) {
      out.guard = register_slot_[in.guard->reg] | (in.guard->negated ? kNegated : 0);
    }
  }
  program_.code[index] = out;
  program_.ptx_lines[index] = in.location.line;
  program_.texts[index] = in.full_opcode();
  program_.notes[index] = std::move(note);
}

Program Decoder::decode() {
  program_.name = function_.name;
  lay_out_symbols();
  number_registers();
  uint32_t n = static_cast<uint32_t>(function_.instructions.size());
  program_.code.resize(n + 1);
  program_.ptx_lines.resize(n + 1);
  program_.texts.resize(n + 1);
  program_.notes.resize(n + 1);
  for (uint32_t i = 0; i < n; ++i) decode_instruction(i);

  // Branch targets and reconvergence points.
  ptx::ControlFlowGraph cfg = ptx::ControlFlowGraph::build(function_);
  ptx::DominatorTree pdom = ptx::DominatorTree::post_dominators(cfg);
  for (uint32_t i = 0; i < n; ++i) {
    Inst& inst = program_.code[i];
    const ptx::Instruction& in = function_.instructions[i];
    if (in.opcode != ptx::Opcode::Bra || inst.fn == &unsupported_handler) continue;
    ptx::BlockId block = cfg.block_of(i);
    ptx::BlockId ip = pdom.idom(block);
    if (ip == ptx::kNone || ip == cfg.exit()) {
      inst.reconverge = n;
    } else {
      inst.reconverge = cfg.block(ip).first;
    }
  }
  // Falling off the end of the body ends the thread.
  Inst end;
  end.source = n;
  end.klass = InstClass::Control;
  end.fn = &exit_handler;
  program_.code[n] = end;
  program_.texts[n] = "ret (end of function)";
  program_.ptx_lines[n] = n > 0 ? function_.instructions[n - 1].location.line : 0;
  return std::move(program_);
}

}  // namespace kiln::sim
