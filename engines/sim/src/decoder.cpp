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

uint64_t align_up(uint64_t value, uint64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

uint32_t natural_align(const ptx::Variable& v) {
  if (v.align != 0) return v.align;
  uint32_t bits = ptx::type_bits(v.type);
  return std::max<uint32_t>(1, bits / 8) * std::max<uint32_t>(1, v.vector_width);
}

Decoder::Decoder(const ptx::Module& module, const ptx::Function& function,
                 const SymbolTable& globals, const SymbolTable& shared, Program& program)
    : module_(module), function_(function), globals_(globals), shared_(shared), program_(program) {}

uint32_t Decoder::local_offset(const std::string& name) const {
  auto it = locals_.find(name);
  if (it == locals_.end() || it->second.space != Space::Local) return UINT32_MAX;
  return static_cast<uint32_t>(it->second.address);
}

uint32_t Decoder::add_call_site(CallSite site) {
  program_.call_sites.push_back(std::move(site));
  return static_cast<uint32_t>(program_.call_sites.size() - 1);
}

void Decoder::fail(std::string why) {
  if (failure_.empty()) failure_ = std::move(why);
}

void Decoder::lay_out_symbols() {
  FunctionRange& range = program_.functions.back();
  uint64_t local = program_.local_bytes;
  auto place_local = [&](const ptx::Variable& v, uint64_t size) {
    local = align_up(local, std::max<uint32_t>(natural_align(v), 4));
    locals_[v.name] = {Space::Local, local};
    local += size;
    return static_cast<uint32_t>(local - size);
  };
  if (function_.is_kernel()) {
    // Parameters of a kernel: the packed buffer the launch passes.
    uint64_t param_offset = 0;
    for (const ptx::Variable& p : function_.params) {
      param_offset = align_up(param_offset, natural_align(p));
      locals_[p.name] = {Space::Param, param_offset};
      param_offset += p.size_bytes().value_or(8);
    }
  } else {
    // A .func's parameters and results live in local memory; call copies arguments in.
    for (const ptx::Variable& p : function_.params) {
      uint32_t size = static_cast<uint32_t>(p.size_bytes().value_or(8));
      range.param_offsets.push_back(place_local(p, size));
      range.param_sizes.push_back(size);
    }
    for (const ptx::Variable& r : function_.returns) {
      uint32_t size = static_cast<uint32_t>(r.size_bytes().value_or(8));
      range.return_offsets.push_back(place_local(r, size));
      range.return_sizes.push_back(size);
    }
  }
  // Body variables: .local arrays, and the .param variables of call blocks (a name declared in
  // several blocks gets room for the largest).
  std::unordered_map<std::string, uint64_t> param_sizes;
  for (const ptx::Variable& v : function_.variables) {
    if (space_of(v.space) == Space::Param) {
      uint64_t& size = param_sizes[v.name];
      size = std::max(size, v.size_bytes().value_or(8));
    }
  }
  for (const ptx::Variable& v : function_.variables) {
    Space space = space_of(v.space);
    if (space == Space::Local && !locals_.count(v.name)) place_local(v, v.size_bytes().value_or(0));
    if (space == Space::Param && !locals_.count(v.name)) place_local(v, param_sizes[v.name]);
  }
  for (const auto& [name, info] : shared_) {
    if (!locals_.count(name)) locals_[name] = info;
  }
  program_.local_bytes = static_cast<uint32_t>(align_up(local, 16));
}

void Decoder::number_registers() {
  register_slot_.resize(function_.registers.size());
  FunctionRange& range = program_.functions.back();
  range.slot_begin = program_.value_slots;
  range.pred_begin = program_.predicate_slots;
  for (size_t i = 0; i < function_.registers.size(); ++i) {
    const ptx::Register& r = function_.registers[i];
    register_slot_[i] = r.type == Type::Pred ? program_.predicate_slots++ : program_.value_slots++;
  }
  range.slot_end = program_.value_slots;
  range.pred_end = program_.predicate_slots;
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
    case Opcode::Brx:
    case Opcode::Call:
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
  uint32_t pc = code_base_ + index;
  program_.code[pc] = out;
  program_.ptx_lines[pc] = in.location.line;
  program_.texts[pc] = in.full_opcode();
  program_.notes[pc] = std::move(note);
}

void Decoder::decode() {
  code_base_ = static_cast<uint32_t>(program_.code.size());
  FunctionRange range;
  range.name = function_.name;
  range.entry = code_base_;
  program_.functions.push_back(range);
  lay_out_symbols();
  number_registers();
  uint32_t n = static_cast<uint32_t>(function_.instructions.size());
  uint32_t end_pc = code_base_ + n;
  program_.code.resize(end_pc + 1);
  program_.ptx_lines.resize(end_pc + 1);
  program_.texts.resize(end_pc + 1);
  program_.notes.resize(end_pc + 1);
  for (uint32_t i = 0; i < n; ++i) decode_instruction(i);

  // Reconvergence points: the first instruction of the immediate post-dominator.
  ptx::ControlFlowGraph cfg = ptx::ControlFlowGraph::build(function_);
  ptx::DominatorTree pdom = ptx::DominatorTree::post_dominators(cfg);
  for (uint32_t i = 0; i < n; ++i) {
    Inst& inst = program_.code[code_base_ + i];
    const ptx::Instruction& in = function_.instructions[i];
    bool branch = in.opcode == ptx::Opcode::Bra || in.opcode == ptx::Opcode::Brx;
    if (!branch || inst.fn == &unsupported_handler) continue;
    ptx::BlockId ip = pdom.idom(cfg.block_of(i));
    inst.reconverge =
        (ip == ptx::kNone || ip == cfg.exit()) ? end_pc : code_base_ + cfg.block(ip).first;
  }
  // Falling off the end of the body ends the thread (kernel) or returns (.func).
  Inst end;
  end.source = n;
  end.klass = InstClass::Control;
  end.fn = function_.is_kernel() ? &exit_handler : &return_handler;
  program_.code[end_pc] = end;
  program_.texts[end_pc] = "ret (end of " + function_.name + ")";
  program_.ptx_lines[end_pc] = n > 0 ? function_.instructions[n - 1].location.line : 0;
}

}  // namespace kiln::sim
