#include "kiln/ptx/printer.h"

#include <bit>
#include <cinttypes>
#include <cstdio>
#include <string>

namespace kiln::ptx {
namespace {

std::string hex_digits(uint64_t value, int width) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out(static_cast<size_t>(width), '0');
  for (int i = width - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[value & 15];
    value >>= 4;
  }
  return out;
}

std::string print_number(const Number& n) {
  std::string out;
  switch (n.format) {
    case NumberFormat::Decimal:
      out = std::to_string(n.as_int());
      break;
    case NumberFormat::DecimalUnsigned:
      out = std::to_string(n.bits);
      break;
    case NumberFormat::Hex: {
      std::string digits = hex_digits(n.bits, 16);
      const size_t first = digits.find_first_not_of('0');
      out = "0x" + (first == std::string::npos ? std::string("0") : digits.substr(first));
      break;
    }
    case NumberFormat::Octal: {
      std::string digits;
      uint64_t v = n.bits;
      do {
        digits.insert(digits.begin(), static_cast<char>('0' + (v & 7)));
        v >>= 3;
      } while (v != 0);
      out = "0" + digits;
      break;
    }
    case NumberFormat::Binary: {
      std::string digits;
      uint64_t v = n.bits;
      do {
        digits.insert(digits.begin(), static_cast<char>('0' + (v & 1)));
        v >>= 1;
      } while (v != 0);
      out = "0b" + digits;
      break;
    }
    case NumberFormat::HexF32:
      return "0f" + hex_digits(n.bits & 0xFFFFFFFFu, 8);
    case NumberFormat::HexF64:
      return "0d" + hex_digits(n.bits, 16);
    case NumberFormat::DecimalFloat: {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.17g", std::bit_cast<double>(n.bits));
      out = buffer;
      if (out.find_first_of(".eEn") == std::string::npos) out += ".0";  // keep it a float
      if (out.find_first_of("ni") != std::string::npos) {
        return "0d" + hex_digits(n.bits, 16);  // inf and nan have no decimal spelling
      }
      return out;
    }
  }
  if (n.unsigned_suffix) out += 'U';
  return out;
}

// ptxas reads a negative address offset only as "+-N" ([%rd1+-128]); symbols take "-N".
void append_offset(std::string& out, int64_t offset, bool address = false) {
  if (offset == 0) return;
  if (offset < 0) {
    out += address ? "+-" : "-";
    out += std::to_string(-static_cast<uint64_t>(offset));
  } else {
    out += '+';
    out += std::to_string(offset);
  }
}

std::string print_initializer(const Initializer& init) {
  switch (init.kind) {
    case Initializer::Kind::Number:
      return print_number(init.number);
    case Initializer::Kind::Symbol: {
      std::string out = init.generic ? "generic(" + init.symbol + ")" : init.symbol;
      append_offset(out, init.offset);
      return out;
    }
    case Initializer::Kind::List: {
      std::string out = "{";
      for (size_t i = 0; i < init.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += print_initializer(init.elements[i]);
      }
      return out + "}";
    }
  }
  return "";
}

std::string print_loc(const DebugLoc& loc) {
  std::string out = ".loc\t" + std::to_string(loc.file) + " " + std::to_string(loc.line) + " " +
                    std::to_string(loc.column);
  if (!loc.function_name.empty()) {
    out += ", function_name " + loc.function_name;
    if (loc.function_name_offset != 0) out += "+" + std::to_string(loc.function_name_offset);
  }
  if (loc.inlined) {
    out += ", inlined_at " + std::to_string(loc.inlined_file) + " " +
           std::to_string(loc.inlined_line) + " " + std::to_string(loc.inlined_column);
  }
  return out;
}

std::string print_register_decl(const RegisterDecl& decl) {
  std::string out = ".reg ";
  if (decl.vector_width > 0) out += ".v" + std::to_string(decl.vector_width) + " ";
  out += "." + std::string(type_name(decl.type)) + " \t";
  for (size_t i = 0; i < decl.names.size(); ++i) {
    if (i > 0) out += ", ";
    out += decl.names[i].name;
    if (decl.names[i].count) out += "<" + std::to_string(*decl.names[i].count) + ">";
  }
  return out + ";";
}

std::string print_attribute(const FunctionAttribute& a) {
  std::string out = "." + a.name;
  if (a.name == "pragma") return out + " " + a.text + ";";
  for (size_t i = 0; i < a.values.size(); ++i) {
    out += i == 0 ? " " : ", ";
    out += std::to_string(a.values[i]);
  }
  return out;
}

std::string print_param_list(const std::vector<Variable>& params) {
  std::string out = "(";
  for (size_t i = 0; i < params.size(); ++i) {
    out += i == 0 ? "\n\t" : ",\n\t";
    out += print_variable(params[i]);
  }
  if (!params.empty()) out += "\n";
  return out + ")";
}

void print_body(const Function& f, std::string& out) {
  size_t depth = 1;
  auto indent = [&]() { out.append(depth, '\t'); };
  for (const Statement& s : f.body) {
    switch (s.kind) {
      case StatementKind::Instruction:
        indent();
        out += print_instruction(f, f.instructions[s.index]);
        break;
      case StatementKind::Label:
        out += f.labels[s.index].name + ":";
        break;
      case StatementKind::Registers:
        indent();
        out += print_register_decl(f.register_decls[s.index]);
        break;
      case StatementKind::Variable:
        indent();
        out += print_variable(f.variables[s.index]) + ";";
        break;
      case StatementKind::ScopeBegin:
        indent();
        out += "{";
        ++depth;
        break;
      case StatementKind::ScopeEnd:
        if (depth > 1) --depth;
        indent();
        out += "}";
        break;
      case StatementKind::Loc:
        indent();
        out += print_loc(f.locs[s.index]);
        break;
      case StatementKind::Pragma:
        indent();
        out += ".pragma " + f.pragmas[s.index] + ";";
        break;
      case StatementKind::Directive: {
        const Directive& d = f.directives[s.index];
        indent();
        if (d.label != kNone) out += f.labels[d.label].name + ": ";
        out += d.text;
        break;
      }
    }
    out += '\n';
  }
}

}  // namespace

std::string print_variable(const Variable& v) {
  std::string out;
  if (v.linkage != Linkage::None) out += "." + std::string(linkage_name(v.linkage)) + " ";
  out += "." + std::string(state_space_name(v.space));
  for (const std::string& a : v.attributes) out += " " + a;
  if (v.align != 0) out += " .align " + std::to_string(v.align);
  if (v.vector_width != 0) out += " .v" + std::to_string(v.vector_width);
  if (v.type != Type::None) out += " ." + std::string(type_name(v.type));
  if (v.is_pointer) {
    out += " .ptr";
    if (v.pointer_space != StateSpace::None) {
      out += " ." + std::string(state_space_name(v.pointer_space));
    }
    if (v.pointer_align != 0) out += " .align " + std::to_string(v.pointer_align);
  }
  out += " " + v.name;
  for (const std::optional<uint64_t>& dim : v.dims) {
    out += dim ? "[" + std::to_string(*dim) + "]" : std::string("[]");
  }
  if (v.init) out += " = " + print_initializer(*v.init);
  return out;
}

std::string print_operand(const Function& f, const Operand& op) {
  std::string out = op.negated ? "!" : "";
  switch (op.kind) {
    case OperandKind::Register:
      out += op.reg < f.registers.size() ? f.registers[op.reg].name : "%<bad-register>";
      if (op.component != 0) out += std::string(".") + op.component;
      break;
    case OperandKind::SpecialRegister:
      out += op.name;
      if (op.component != 0) out += std::string(".") + op.component;
      break;
    case OperandKind::Immediate:
      out += print_number(op.number);
      break;
    case OperandKind::Symbol:
      out += op.name;
      append_offset(out, op.offset);
      break;
    case OperandKind::Label:
      out += op.label < f.labels.size() ? f.labels[op.label].name : op.name;
      break;
    case OperandKind::Address:
      out += "[";
      for (size_t i = 0; i < op.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += print_operand(f, op.elements[i]);
        if (i == 0) append_offset(out, op.offset, true);
      }
      out += "]";
      break;
    case OperandKind::Vector:
    case OperandKind::List:
      out += op.kind == OperandKind::Vector ? "{" : "(";
      for (size_t i = 0; i < op.elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += print_operand(f, op.elements[i]);
      }
      out += op.kind == OperandKind::Vector ? "}" : ")";
      break;
    case OperandKind::Pair:
      for (size_t i = 0; i < op.elements.size(); ++i) {
        if (i > 0) out += "|";
        out += print_operand(f, op.elements[i]);
      }
      break;
    case OperandKind::Sink:
      out += "_";
      break;
  }
  return out;
}

std::string print_instruction(const Function& f, const Instruction& inst) {
  std::string out;
  if (inst.guard) {
    out += inst.guard->negated ? "@!" : "@";
    out += inst.guard->reg < f.registers.size() ? f.registers[inst.guard->reg].name
                                                : "%<bad-register>";
    out += ' ';
  }
  out += inst.full_opcode();
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    out += i == 0 ? " \t" : ", ";
    out += print_operand(f, inst.operands[i]);
  }
  return out + ";";
}

std::string print_function(const Function& f) {
  std::string out;
  if (f.linkage != Linkage::None) out += "." + std::string(linkage_name(f.linkage)) + " ";
  out += f.kind == FunctionKind::Entry ? ".entry " : ".func ";
  if (f.kind == FunctionKind::Func && !f.returns.empty()) {
    out += "(";
    for (size_t i = 0; i < f.returns.size(); ++i) {
      out += (i > 0 ? ", " : "") + print_variable(f.returns[i]);
    }
    out += ") ";
  }
  out += f.name + print_param_list(f.params) + "\n";
  for (const FunctionAttribute& a : f.attributes) out += print_attribute(a) + "\n";
  if (!f.has_body) return out + ";\n";
  out += "{\n";
  print_body(f, out);
  return out + "}\n";
}

std::string print_module(const Module& m) {
  std::string out;
  out +=
      ".version " + std::to_string(m.version_major) + "." + std::to_string(m.version_minor) + "\n";
  if (!m.targets.empty()) {
    out += ".target ";
    for (size_t i = 0; i < m.targets.size(); ++i) out += (i > 0 ? ", " : "") + m.targets[i];
    out += "\n";
  }
  if (m.has_address_size) out += ".address_size " + std::to_string(m.address_size) + "\n";
  out += "\n";
  for (const ModuleItem& item : m.items) {
    switch (item.kind) {
      case ItemKind::Variable:
        out += print_variable(m.variables[item.index]) + ";\n";
        break;
      case ItemKind::Function:
        out += print_function(m.functions[item.index]);
        break;
      case ItemKind::File: {
        const FileEntry& f = m.files[item.index];
        std::string path;
        for (char c : f.path) {
          if (c == '"' || c == '\\') path += '\\';
          path += c;
        }
        out += "\t.file\t" + std::to_string(f.index) + " \"" + path + "\"";
        for (uint64_t e : f.extra) out += ", " + std::to_string(e);
        out += "\n";
        break;
      }
      case ItemKind::Section: {
        const Section& s = m.sections[item.index];
        out += "\t.section\t" + s.name + "\n\t{" + s.text + "}\n";
        break;
      }
      case ItemKind::Pragma:
        out += ".pragma " + m.pragmas[item.index] + ";\n";
        break;
      case ItemKind::Directive:
        out += m.directives[item.index].text + "\n";
        break;
    }
  }
  return out;
}

}  // namespace kiln::ptx
