// decode_kernel: the kernel and every .func it reaches through call, decoded into one Program.
// The .shared variables any of them names are laid out once (static first, then the dynamic
// extern array), and call sites are bound to their callees once all are decoded.
#include <algorithm>
#include <unordered_set>

#include "decoder.h"

namespace kiln::sim {

namespace {

using ptx::Operand;
using ptx::OperandKind;

void collect_symbols(const Operand& op, std::unordered_set<std::string>& out) {
  if (op.kind == OperandKind::Symbol) out.insert(op.name);
  for (const Operand& e : op.elements) collect_symbols(e, out);
}

// The callee a call instruction names: call (rets), f, (args) or call f, (args).
const Operand* callee_operand(const ptx::Instruction& in) {
  for (const Operand& op : in.operands) {
    if (op.kind == OperandKind::Symbol) return &op;
  }
  return nullptr;
}

// The kernel first, then the functions it calls, breadth first.
std::vector<const ptx::Function*> reachable(const ptx::Module& module,
                                            const ptx::Function& kernel) {
  std::vector<const ptx::Function*> order = {&kernel};
  std::unordered_set<std::string> seen = {kernel.name};
  for (size_t i = 0; i < order.size(); ++i) {
    for (const ptx::Instruction& in : order[i]->instructions) {
      if (in.opcode != ptx::Opcode::Call) continue;
      const Operand* callee = callee_operand(in);
      if (callee == nullptr || seen.count(callee->name)) continue;
      seen.insert(callee->name);
      const ptx::Function* f = module.find_function(callee->name);
      if (f != nullptr && f->has_body) order.push_back(f);
    }
  }
  return order;
}

SymbolTable lay_out_shared(const ptx::Module& module,
                           const std::vector<const ptx::Function*>& functions, Program& program) {
  std::unordered_set<std::string> used;
  for (const ptx::Function* f : functions) {
    for (const ptx::Instruction& in : f->instructions) {
      for (const Operand& op : in.operands) collect_symbols(op, used);
    }
  }
  std::vector<const ptx::Variable*> shared;
  for (const ptx::Variable& v : module.variables) {
    if (space_of(v.space) == Space::Shared && used.count(v.name)) shared.push_back(&v);
  }
  for (const ptx::Function* f : functions) {
    for (const ptx::Variable& v : f->variables) {
      if (space_of(v.space) == Space::Shared) shared.push_back(&v);
    }
  }
  SymbolTable table;
  uint64_t offset = 0;
  uint32_t dynamic_align = 16;
  std::vector<const ptx::Variable*> dynamic;
  for (const ptx::Variable* v : shared) {
    std::optional<uint64_t> size = v->size_bytes();
    if (!size || v->linkage == ptx::Linkage::Extern) {
      dynamic.push_back(v);
      dynamic_align = std::max(dynamic_align, natural_align(*v));
      continue;
    }
    if (table.count(v->name)) continue;
    offset = align_up(offset, natural_align(*v));
    table[v->name] = {Space::Shared, offset};
    offset += *size;
  }
  program.shared_static_bytes = static_cast<uint32_t>(offset);
  program.shared_dynamic_offset = static_cast<uint32_t>(align_up(offset, dynamic_align));
  for (const ptx::Variable* v : dynamic)
    table[v->name] = {Space::Shared, program.shared_dynamic_offset};
  return table;
}

// Binds each call site to its callee's entry and parameter slots. vprintf without a body is
// device printf (printf_ops.cpp); a call to any other function without a body here (an extern
// .func) becomes unsupported, naming it.
void resolve_calls(Program& program) {
  for (size_t pc = 0; pc < program.code.size(); ++pc) {
    Inst& inst = program.code[pc];
    if (inst.fn != &call_handler) continue;
    CallSite& site = program.call_sites[inst.target];
    auto it = std::find_if(program.functions.begin(), program.functions.end(),
                           [&](const FunctionRange& f) { return f.name == site.callee; });
    std::string problem;
    if (it == program.functions.end() && site.callee == "vprintf") {
      if (site.argument_offsets.size() == 2 && site.result_offsets.size() <= 1) {
        inst.fn = &vprintf_handler;
        continue;
      }
      problem = "vprintf takes (format, arguments) and returns one .b32, but this call passes " +
                std::to_string(site.argument_offsets.size()) + " arguments and " +
                std::to_string(site.result_offsets.size()) + " results";
    } else if (it == program.functions.end()) {
      problem = "calls to '" + site.callee + "' (no body in this module) are not supported";
    } else if (it->param_sizes.size() != site.argument_offsets.size() ||
               it->return_sizes.size() != site.result_offsets.size()) {
      problem = "the call passes " + std::to_string(site.argument_offsets.size()) +
                " arguments and " + std::to_string(site.result_offsets.size()) + " results, but '" +
                site.callee + "' declares " + std::to_string(it->param_sizes.size()) + " and " +
                std::to_string(it->return_sizes.size());
    }
    if (!problem.empty()) {
      inst.fn = &unsupported_handler;
      program.notes[pc] = problem;
      continue;
    }
    site.function = static_cast<uint32_t>(it - program.functions.begin());
    site.entry = it->entry;
    for (size_t i = 0; i < site.argument_offsets.size(); ++i) {
      site.arguments.push_back(
          {site.argument_offsets[i], it->param_offsets[i], it->param_sizes[i]});
    }
    for (size_t i = 0; i < site.result_offsets.size(); ++i) {
      site.results.push_back({it->return_offsets[i], site.result_offsets[i], it->return_sizes[i]});
    }
  }
}

}  // namespace

Program decode_kernel(const ptx::Module& module, const ptx::Function& kernel,
                      const SymbolTable& globals) {
  Program program;
  program.name = kernel.name;
  std::vector<const ptx::Function*> functions = reachable(module, kernel);
  SymbolTable shared = lay_out_shared(module, functions, program);
  for (const ptx::Function* f : functions) Decoder(module, *f, globals, shared, program).decode();
  resolve_calls(program);
  return program;
}

}  // namespace kiln::sim
