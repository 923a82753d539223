// Where a candidate may come from, for every tool that takes one (benchmark, profile,
// compile, simulate, synccheck): a file inside the run directory (or another allowed root,
// such as the task bundles), or the source inline. Paths are resolved after symlinks and must
// stay inside a root, so `..`, absolute paths elsewhere and symlinks out are refused.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::tools {

struct Candidate {
  std::string source;
  std::string path;            // relative to the root it was found in; empty for inline source
  std::filesystem::path file;  // the resolved file; empty for inline source
};

struct CandidateRoots {
  std::filesystem::path run_dir;  // relative paths resolve here: the run directory (or cwd)
  // Other folders whose files may be named by absolute path, shown as <folder name>/<path>
  // (the task bundles: tasks/fp16_gemm/starter.cu).
  std::vector<std::filesystem::path> others;
};

inline constexpr uintmax_t kMaxCandidateBytes = 1u << 20;

// `arguments[path_argument]` (a path) or `arguments["source"]` (inline), exactly one.
Result<Candidate> resolve_candidate(const nlohmann::json& arguments,
                                    const std::string& path_argument, const CandidateRoots& roots);

}  // namespace kiln::tools
