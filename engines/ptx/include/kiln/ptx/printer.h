// Writes the IR back as PTX text that ptxas accepts.
#pragma once

#include <string>

#include "kiln/ptx/function.h"
#include "kiln/ptx/instruction.h"
#include "kiln/ptx/module.h"
#include "kiln/ptx/operand.h"
#include "kiln/ptx/variable.h"

namespace kiln::ptx {

std::string print_module(const Module& module);
std::string print_function(const Function& function);
// "@%p1 bra $L__BB0_2;" (no indentation or newline).
std::string print_instruction(const Function& function, const Instruction& inst);
std::string print_operand(const Function& function, const Operand& operand);
// ".shared .align 4 .b8 tile[512]" (no semicolon).
std::string print_variable(const Variable& variable);

}  // namespace kiln::ptx
