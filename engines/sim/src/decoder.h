// Turns one kiln_ptx Function into a Program: lays out its .shared, .local and .param
// symbols, numbers registers and constants into slots, picks a handler for every instruction
// (from opcode, modifiers and types, once) and computes each branch's reconvergence point
// from the post-dominator tree. A form the simulator does not implement decodes to a handler
// that faults with unsupported_instruction when, and only when, it runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/ptx/function.h"
#include "kiln/ptx/module.h"
#include "program.h"

namespace kiln::sim {

struct SymbolInfo {
  Space space = Space::Global;
  uint64_t address = 0;  // in its own state space
};
// Module-scope .global and .const variables, by name, as the device placed them.
using SymbolTable = std::unordered_map<std::string, SymbolInfo>;

struct Address {
  uint32_t base = 0;  // slot
  int64_t offset = 0;
  bool symbol = false;
  Space symbol_space = Space::Global;
};

// Decodes one function and appends it to a Program: its code (then an implicit ret/exit), its
// registers as new slots, its .local and .param variables in per-thread local memory.
class Decoder {
 public:
  // `shared` places every .shared variable the kernel and its callees name.
  Decoder(const ptx::Module& module, const ptx::Function& function, const SymbolTable& globals,
          const SymbolTable& shared, Program& program);

  void decode();

  // Helpers for the per-area decode functions. A failed helper records why (see fail()), and
  // the instruction then decodes to the unsupported handler.
  const ptx::Function& function() const { return function_; }
  uint32_t value(const ptx::Operand& operand, ptx::Type type);  // a source or destination slot
  uint32_t predicate(const ptx::Operand& operand);              // index, | kNegated if !%p
  uint32_t constant(uint64_t bits);
  uint32_t scratch();  // a slot for '_'
  Address address(const ptx::Operand& operand);
  bool is_predicate(const ptx::Operand& operand) const;
  // Appends a slot to the instruction's operand list.
  void push(uint32_t slot) { program_.operands.push_back(slot); }
  void fail(std::string why);
  bool failed() const { return !failure_.empty(); }
  uint32_t dynamic_shared_offset() const { return program_.shared_dynamic_offset; }
  uint32_t code_base() const { return code_base_; }
  // The local-memory offset of a .param/.local variable of this function, or UINT32_MAX.
  uint32_t local_offset(const std::string& name) const;
  uint32_t add_call_site(CallSite site);

 private:
  void lay_out_symbols();
  void number_registers();
  void decode_instruction(uint32_t index);
  uint32_t special(ptx::SpecialRegister reg, char component);

  const ptx::Module& module_;
  const ptx::Function& function_;
  const SymbolTable& globals_;
  const SymbolTable& shared_;
  Program& program_;
  uint32_t code_base_ = 0;
  std::vector<uint32_t> register_slot_;  // by RegisterId: value slot or predicate index
  std::unordered_map<uint64_t, uint32_t> constant_slots_;
  std::unordered_map<uint32_t, uint32_t> special_slots_;
  std::unordered_map<std::string, SymbolInfo> locals_;  // shared, local and param symbols
  uint32_t scratch_slot_ = UINT32_MAX;
  std::string failure_;
};

// Decodes a kernel and every .func it calls (transitively) into one Program.
Program decode_kernel(const ptx::Module& module, const ptx::Function& kernel,
                      const SymbolTable& globals);

// Per-area decoders: each fills `out` (handler, fields, operands through d.push) and returns
// false for a form it does not implement.
bool decode_integer(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_carry(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_dot(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_bit(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_float(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_half(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_compare(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_move(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_convert(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_memory(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_atomic(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_control(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_warp(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_matrix(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_async(Decoder& d, const ptx::Instruction& in, Inst& out);
bool decode_wgmma(Decoder& d, const ptx::Instruction& in, Inst& out);

// Ends the active lanes (ret/exit in a kernel, and falling off the end of the body).
void exit_handler(Exec& x, const Inst& inst, uint32_t mask);
// call to a .func, and ret from one (call_ops.cpp).
void call_handler(Exec& x, const Inst& inst, uint32_t mask);
void return_handler(Exec& x, const Inst& inst, uint32_t mask);
// call to vprintf (device printf) without a body in the module (printf_ops.cpp).
void vprintf_handler(Exec& x, const Inst& inst, uint32_t mask);
// After lanes exit inside a callee: completes frames whose callee has no lanes left.
void finish_calls(Exec& x);

// The handler of forms the simulator does not implement (faults with the instruction's name).
void unsupported_handler(Exec& x, const Inst& inst, uint32_t mask);

Space space_of(ptx::StateSpace space);
uint64_t align_up(uint64_t value, uint64_t align);
// A variable's .align, or its natural alignment (element size x vector width).
uint32_t natural_align(const ptx::Variable& variable);

}  // namespace kiln::sim
