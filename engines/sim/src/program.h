// The executable form of a PTX function: every instruction decoded once into a handler and
// resolved operand slots, so nothing is looked up by name or parsed while a kernel runs.
//
// Operands are slot numbers into the warp's register file. Immediates, symbol addresses and
// per-thread special registers (%tid, %laneid, ...) are materialized as read-only slots when a
// warp starts, so a handler reads every source the same way: regs[slot * 32 + lane].
// Predicates live apart, one 32-bit lane mask per predicate register.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ptx/special_register.h"

namespace kiln::sim {

struct Exec;
struct Inst;
using Handler = void (*)(Exec& x, const Inst& inst, uint32_t mask);

inline constexpr uint32_t kNoGuard = UINT32_MAX;
inline constexpr uint32_t kNegated = 0x8000'0000u;  // on a predicate source or guard
inline constexpr uint32_t kNoReconverge = UINT32_MAX;

// Instruction classes for LaunchStats::by_class (their names are in stats.cpp).
enum class InstClass : uint8_t {
  Alu,
  Fp32,
  Fp16,
  Tensor,
  Load,
  Store,
  Atomic,
  Barrier,
  Shuffle,
  Control,
  AsyncCopy,
  Other,
  Count
};

// State spaces as memory handlers see them (also LaunchStats::bytes_by_space).
enum class Space : uint8_t { Global, Shared, Local, Const, Param, Generic, Count };

struct Inst {
  Handler fn = nullptr;
  uint32_t ops = 0;   // first operand slot in Program::operands
  uint16_t nops = 0;  // how many
  InstClass klass = InstClass::Other;
  Space space = Space::Generic;
  uint8_t width = 0;          // bytes per element (memory), or a handler-specific small number
  uint8_t vec = 1;            // vector elements (ld/st .v2/.v4)
  uint8_t mode = 0;           // handler-specific: rounding mode, comparison, shuffle mode ...
  uint8_t flags = 0;          // handler-specific bits (ftz, sat, ...)
  uint32_t guard = kNoGuard;  // predicate index, | kNegated for @!%p
  uint32_t target = 0;        // branch target pc; other handlers: an extra small integer
  uint32_t reconverge = kNoReconverge;  // branches: first pc of the immediate post-dominator
  uint32_t source = 0;                  // index into Function::instructions (faults, PTX line)
  int64_t imm = 0;                      // address offset, or another constant
};

// How a constant slot is filled when a warp starts.
struct ConstantSlot {
  enum class Kind : uint8_t { Value, Special };
  Kind kind = Kind::Value;
  uint32_t slot = 0;
  uint64_t value = 0;              // Value
  ptx::SpecialRegister special{};  // Special
  char component = 0;              // 'x', 'y', 'z' or 0
};

// Where a .shared/.local variable lives, and what a symbol operand resolves to.
struct SymbolPlacement {
  std::string name;
  Space space = Space::Global;
  uint64_t address = 0;  // in its own state space
};

// A function body inside a Program (the kernel is function 0; .func callees follow).
struct FunctionRange {
  std::string name;
  uint32_t entry = 0;                     // first pc
  uint32_t slot_begin = 0, slot_end = 0;  // its registers (saved around a recursive call)
  uint32_t pred_begin = 0, pred_end = 0;
  std::vector<uint32_t> param_offsets, param_sizes;  // its .param arguments, in local memory
  std::vector<uint32_t> return_offsets, return_sizes;
};

// Bytes moved between a caller's call-block .param variables and a callee's parameters, both
// in per-thread local memory.
struct ParamCopy {
  uint32_t from = 0, to = 0, bytes = 0;
};

// One call instruction: decoded with the caller, resolved once every callee is decoded.
struct CallSite {
  std::string callee;
  std::vector<uint32_t> argument_offsets, result_offsets;  // the caller's .param variables
  uint32_t function = 0;                                   // index into Program::functions
  uint32_t entry = 0;
  std::vector<ParamCopy> arguments, results;
};

struct Program {
  std::string name;
  std::vector<Inst> code;          // one per PTX instruction, then a final implicit exit
  std::vector<uint32_t> operands;  // the slot pool
  uint32_t value_slots = 0;        // registers + constants + scratch
  uint32_t predicate_slots = 0;
  std::vector<ConstantSlot> constants;
  std::vector<uint32_t> ptx_lines;  // per code index
  std::vector<std::string> texts;   // full opcode per code index ("ld.global.f32")
  std::vector<std::string> notes;   // per code index: why a form is unsupported, else empty
  uint32_t shared_static_bytes = 0;
  uint32_t shared_dynamic_offset = 0;  // where extern .shared arrays start
  uint32_t local_bytes = 0;            // per thread
  std::vector<FunctionRange> functions;
  std::vector<CallSite> call_sites;
};

}  // namespace kiln::sim
