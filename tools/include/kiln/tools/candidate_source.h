// The candidate, as every tool that takes one names it (compile, simulate, synccheck, racecheck,
// benchmark, profile): declared once here, so the name, the schema and the refusals are the same
// in all of them. A candidate is `candidate` (a kernel.cu path inside the run directory or the
// task bundles) or `source` (the code inline). Paths are resolved after symlinks and must stay
// inside a root, so `..`, absolute paths elsewhere and symlinks out are refused.
//
// `path` is the old name of `candidate` in compile, simulate, synccheck and racecheck; it is
// accepted for one more release, with a deprecation note in the text of the result.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/tool.h"

namespace kiln::tools {

struct Candidate {
  std::string source;
  std::string path;            // relative to the root it was found in; empty for inline source
  std::filesystem::path file;  // the resolved file; empty for inline source
  std::string note;            // for the result's text: the deprecation note, else empty

  // How results name it: its path, or "kernel.cu" for inline source.
  std::string display_name() const { return path.empty() ? "kernel.cu" : path; }
};

struct CandidateRoots {
  std::filesystem::path run_dir;  // relative paths resolve here: the run directory (or cwd)
  // Other folders whose files may be named by absolute path, shown as <folder name>/<path>
  // (the task bundles: tasks/fp16_gemm/starter.cu).
  std::vector<std::filesystem::path> others;
  // The zoo (kb/zoo), also one of `others`: a call on task "zoo:ID" that names no candidate
  // runs the entry's own kernel.cu. Empty: no such default.
  std::filesystem::path zoo_dir;
};

inline constexpr uintmax_t kMaxCandidateBytes = 1u << 20;

// Whether a tool also accepts the deprecated `path` (the tools that took it before `candidate`).
enum class LegacyPath { kRefused, kAccepted };

// Adds `candidate` and `source` (and, with kAccepted, the deprecated `path`) to the properties
// of `input_schema`, an object schema. Neither is required: resolve_candidate wants exactly one.
void add_candidate_properties(nlohmann::json& input_schema, LegacyPath legacy);

// The candidate a call names: `candidate` (or its old name `path`) or `source`, exactly one
// (none, on task zoo:ID: the entry's kernel.cu under roots.zoo_dir);
// `candidate` and `path` together must agree. A call that used `path` gets the same candidate
// with `note` set, and its errors end with the note.
Result<Candidate> resolve_candidate(const nlohmann::json& arguments, const CandidateRoots& roots);

// `result` with the candidate's note, if any, as a last line of its text (structuredContent is
// left as it is, so it still matches the tool's outputSchema).
mcp::ToolResult with_candidate_note(mcp::ToolResult result, const Candidate& candidate);

}  // namespace kiln::tools
