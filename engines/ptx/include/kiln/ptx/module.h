// A parsed PTX module: header directives, globals and functions, in source order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ptx/function.h"
#include "kiln/ptx/source_location.h"
#include "kiln/ptx/variable.h"

namespace kiln::ptx {

// .file 1 "/path/kernel.cu" [, timestamp, size]
struct FileEntry {
  uint32_t index = 0;
  std::string path;
  std::vector<uint64_t> extra;  // timestamp and size, when given
  SourceLocation location;

  bool operator==(const FileEntry&) const = default;
};

// A string of a .debug_str section: `$L__info_string3:` followed by .b8 bytes.
struct DebugString {
  std::string label;
  std::string value;
  bool operator==(const DebugString&) const = default;
};

// .section .debug_str { ... }: kept verbatim (printing reproduces it; ptxas needs the labels
// that .loc function_name refers to). Debug strings are decoded for the source map.
struct Section {
  std::string name;                  // ".debug_str"
  std::string text;                  // everything between the braces, as written
  std::vector<DebugString> strings;  // decoded from .debug_str
  SourceLocation location;

  bool operator==(const Section&) const = default;
};

enum class ItemKind : uint8_t { Variable, Function, File, Section, Pragma, Directive };

struct ModuleItem {
  ItemKind kind = ItemKind::Variable;
  uint32_t index = 0;  // into the vector of that kind
  bool operator==(const ModuleItem&) const = default;
};

struct Module {
  uint32_t version_major = 0, version_minor = 0;  // .version 9.0
  std::vector<std::string> targets;               // .target sm_90a[, debug]
  uint32_t address_size = 64;
  bool has_address_size = false;

  std::vector<ModuleItem> items;  // everything after the header, in source order
  std::vector<Variable> variables;
  std::vector<Function> functions;  // a prototype and its definition are two entries
  std::vector<FileEntry> files;
  std::vector<Section> sections;
  std::vector<std::string> pragmas;
  std::vector<Directive> directives;  // unknown module-level directives, kept as text

  bool operator==(const Module&) const = default;

  // The definition named `name`, else its declaration, else nullptr.
  const Function* find_function(std::string_view name) const;
  const Variable* find_variable(std::string_view name) const;
  const FileEntry* find_file(uint32_t index) const;
  // The decoded .debug_str string labelled `label`, or nullptr.
  const std::string* debug_string(std::string_view label) const;
};

// Sets every SourceLocation to {0, 0}: two modules that differ only in where their text sat
// then compare equal (the round-trip test compares parse(print(m)) with m this way).
void clear_source_locations(Module& module);

}  // namespace kiln::ptx
