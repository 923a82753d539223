// One PTX instruction: guard, base opcode, ordered modifiers, operands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ptx/opcode.h"
#include "kiln/ptx/operand.h"
#include "kiln/ptx/source_location.h"
#include "kiln/ptx/types.h"

namespace kiln::ptx {

using InstructionId = uint32_t;  // index into Function::instructions

struct Guard {
  RegisterId reg = kNone;  // a .pred register
  bool negated = false;    // @!%p
  bool operator==(const Guard&) const = default;
};

struct Instruction {
  Opcode opcode = Opcode::Unknown;
  std::string name;                    // base opcode as written: "cp" in cp.async.bulk...
  std::vector<std::string> modifiers;  // every dotted suffix in order, types included, no dots:
                                       // {"async","bulk","tensor","2d","shared::cluster",...}
  std::vector<Type> types;             // the type suffixes among `modifiers`, in order
  std::optional<Guard> guard;
  std::vector<Operand> operands;
  uint32_t scope = 0;       // index into Function::scopes
  uint32_t loc = kNone;     // the .loc in effect: index into Function::locs
  SourceLocation location;  // of the guard or opcode

  bool operator==(const Instruction&) const = default;

  bool has_modifier(std::string_view modifier) const;
  // The last type suffix (ld.global.f32 -> F32; cvt.rn.f16.f32 -> F32, the source), or None.
  Type type() const;
  // .v2/.v4/.v8 -> 2/4/8; 1 otherwise.
  uint32_t vector_width() const;
  // The state spaces named among the modifiers, in order (cp.async.bulk.shared::cluster.global
  // -> {SharedCluster, Global}); {Generic} for a memory instruction that names none.
  std::vector<StateSpace> state_spaces() const;
  // The first named state space, or Generic.
  StateSpace state_space() const;
  // "ld.global.f32", no guard or operands.
  std::string full_opcode() const;
};

// Control flow.
bool is_branch(const Instruction& inst);      // bra, brx
bool ends_thread(const Instruction& inst);    // ret, exit, trap (guarded or not)
bool is_terminator(const Instruction& inst);  // ends a basic block: branch, ret, exit, trap
bool is_call(const Instruction& inst);
// Memory.
bool is_load(const Instruction& inst);     // ld, ldu, ldmatrix, tex/tld4/suld
bool is_store(const Instruction& inst);    // st, stmatrix, sust
bool is_atomic(const Instruction& inst);   // atom, red, sured
bool is_barrier(const Instruction& inst);  // bar, barrier (CTA or cluster), not bar.warp.sync

}  // namespace kiln::ptx
