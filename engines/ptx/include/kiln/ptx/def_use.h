// Which registers an instruction writes and reads.
//
// A destination is the first operand when the opcode produces a value (not a store, branch,
// barrier other than bar.red, call or fence) and that operand is a register, a {vector} or a
// pair p|q; a call writes the registers of its return list. Everything
// else that names a register is a use, including address bases, vector elements, the guard,
// and the accumulators of wgmma.mma_async (read and written).
#pragma once

#include <vector>

#include "kiln/ptx/instruction.h"

namespace kiln::ptx {

// True when the opcode writes its first operand (not a store, branch, barrier, call, fence...).
bool writes_first_operand(const Instruction& inst);
// writes_first_operand, and the first operand is a register, {vector}, pair or sink.
bool has_destination(const Instruction& inst);
// wgmma.mma_async accumulates into its destination registers.
bool reads_destination(const Instruction& inst);
// call (r1, r2), f, (a): the return list (registers in the old non-ABI .reg convention; .param
// names otherwise, which are no registers) is written.
bool call_returns_registers(const Instruction& inst);

// Appends the registers `inst` writes (destination order; sinks skipped).
void append_defs(const Instruction& inst, std::vector<RegisterId>& out);
// Appends the registers `inst` reads (the guard first; duplicates possible).
void append_uses(const Instruction& inst, std::vector<RegisterId>& out);

}  // namespace kiln::ptx
