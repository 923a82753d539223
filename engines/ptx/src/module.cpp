#include "kiln/ptx/module.h"

namespace kiln::ptx {

const Function* Module::find_function(std::string_view name) const {
  const Function* declaration = nullptr;
  for (const Function& f : functions) {
    if (f.name != name) continue;
    if (f.has_body) return &f;
    if (declaration == nullptr) declaration = &f;
  }
  return declaration;
}

const Variable* Module::find_variable(std::string_view name) const {
  for (const Variable& v : variables) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

const FileEntry* Module::find_file(uint32_t index) const {
  for (const FileEntry& f : files) {
    if (f.index == index) return &f;
  }
  return nullptr;
}

const std::string* Module::debug_string(std::string_view label) const {
  for (const Section& section : sections) {
    for (const DebugString& s : section.strings) {
      if (s.label == label) return &s.value;
    }
  }
  return nullptr;
}

void clear_source_locations(Module& module) {
  for (Variable& v : module.variables) v.location = {};
  for (FileEntry& f : module.files) f.location = {};
  for (Section& s : module.sections) s.location = {};
  for (Directive& d : module.directives) d.location = {};
  for (Function& f : module.functions) {
    f.location = {};
    for (Variable& v : f.returns) v.location = {};
    for (Variable& v : f.params) v.location = {};
    for (Instruction& i : f.instructions) i.location = {};
    for (Label& l : f.labels) l.location = {};
    for (RegisterDecl& d : f.register_decls) d.location = {};
    for (Variable& v : f.variables) v.location = {};
    for (DebugLoc& l : f.locs) l.location = {};
    for (Directive& d : f.directives) d.location = {};
  }
}

}  // namespace kiln::ptx
