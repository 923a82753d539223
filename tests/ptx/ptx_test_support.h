// Helpers shared by the PTX tests: parse-or-fail, a kernel wrapper for snippets, lookups by
// name, and the corpus manifest.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ptx/function.h"
#include "kiln/ptx/module.h"
#include "kiln/ptx/parser.h"

namespace kiln::ptx::testing {

inline constexpr std::string_view kHeader = ".version 9.0\n.target sm_90a\n.address_size 64\n\n";

// A kernel `k` with registers %p<16>, %r<64>, %f<16>, %rd<16> and params k_out (u64), k_n (u32).
inline std::string kernel(std::string_view body) {
  std::string out(kHeader);
  out +=
      ".visible .entry k(\n\t.param .u64 k_out,\n\t.param .u32 k_n\n)\n{\n"
      "\t.reg .pred %p<16>;\n\t.reg .b32 %r<64>;\n\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<16>;\n";
  out += body;
  out += "\n}\n";
  return out;
}

// The same registers in a .func `g` with one .b32 parameter g_a.
inline std::string device_function(std::string_view body) {
  std::string out(kHeader);
  out +=
      ".func g(\n\t.param .b32 g_a\n)\n{\n"
      "\t.reg .pred %p<16>;\n\t.reg .b32 %r<64>;\n\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<16>;\n";
  out += body;
  out += "\n}\n";
  return out;
}

// Parses text that must be valid; the test fails with the parser's message otherwise.
inline Module parse_ok(std::string_view text, std::vector<Diagnostic>* warnings = nullptr) {
  Result<ParsedModule> parsed = parse_ptx(text, {"test.ptx"});
  if (!parsed) {
    ADD_FAILURE() << parsed.error().message << "\n--- text ---\n" << text;
    return Module{};
  }
  if (warnings != nullptr) *warnings = parsed->warnings;
  return std::move(parsed->module);
}

// Parses text that must be rejected; returns the error diagnostic.
inline Diagnostic parse_error(std::string_view text) {
  ParseOutcome outcome = parse_ptx_with_diagnostics(text, {"test.ptx"});
  if (outcome.module || outcome.diagnostics.empty()) {
    ADD_FAILURE() << "expected a parse error\n--- text ---\n" << text;
    return Diagnostic{};
  }
  return outcome.diagnostics.back();
}

inline const Function& only_body(const Module& m) {
  for (const Function& f : m.functions) {
    if (f.has_body) return f;
  }
  static const Function kEmpty;
  ADD_FAILURE() << "no function with a body";
  return kEmpty;
}

inline RegisterId reg(const Function& f, std::string_view name) {
  for (RegisterId r = 0; r < f.registers.size(); ++r) {
    if (f.registers[r].name == name) return r;
  }
  ADD_FAILURE() << "no register " << name << " is used in " << f.name;
  return kNone;
}

// The index of the `nth` instruction whose full opcode starts with `prefix` ("bar.sync").
inline InstructionId find(const Function& f, std::string_view prefix, int nth = 0) {
  for (InstructionId i = 0; i < f.instructions.size(); ++i) {
    if (f.instructions[i].full_opcode().starts_with(prefix) && nth-- == 0) return i;
  }
  ADD_FAILURE() << "no instruction " << prefix << " in " << f.name;
  return 0;
}

inline LabelId label(const Function& f, std::string_view name) {
  for (LabelId l = 0; l < f.labels.size(); ++l) {
    if (f.labels[l].name == name) return l;
  }
  ADD_FAILURE() << "no label " << name;
  return kNone;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CorpusEntry {
  std::string name;  // committed_loops.sm80, starter_fp16_gemm.sm90a, zoo_<id>.sm80
  std::string arch;  // sm_80 or sm_90a
  std::string path;
};

// Names the entry in test output instead of dumping its bytes.
inline void PrintTo(const CorpusEntry& e, std::ostream* os) {
  *os << e.name << " (" << e.arch << ")";
}

inline std::vector<CorpusEntry> corpus_entries() {
  std::vector<CorpusEntry> entries;
  std::ifstream in(KILN_PTX_CORPUS_MANIFEST);
  CorpusEntry e;
  while (in >> e.name >> e.arch >> e.path) entries.push_back(e);
  return entries;
}

inline std::string committed(std::string_view file) {
  return read_text(std::string(KILN_PTX_CORPUS_DIR) + "/" + std::string(file));
}

}  // namespace kiln::ptx::testing
