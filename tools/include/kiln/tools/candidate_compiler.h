// Compiling a candidate for a tool: what compile, synccheck and simulate share. Turns a tool
// call's arguments (the candidate, task or arch, defines, flags, occupancy inputs) into a
// compiler::CompileRequest and runs it through the compile cache. nvcc's version is probed
// once, on first use; the occupancy limits come from kb/hw.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kiln/base/result.h"
#include "kiln/compiler/compile_candidate.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

struct CompileToolConfig {
  CandidateRoots roots;               // the run directory, plus the task bundles
  std::filesystem::path abi_include;  // the folder holding kiln/abi.h
  std::filesystem::path hw_dir;       // kb/hw, for the occupancy limits
  std::string gpu = "h200_sxm";       // the kb/hw spec preferred when several share the arch
  std::filesystem::path cache_root;   // compile cache root; empty: kiln::default_cache_dir()
};

class CandidateCompiler {
 public:
  CandidateCompiler(std::shared_ptr<TaskSource> tasks, CompileToolConfig config);

  const CompileToolConfig& config() const { return config_; }

  // The candidate the call names (resolve_candidate over the configured roots).
  Result<Candidate> candidate(const nlohmann::json& arguments) const;
  // The request for `candidate`: arch from arguments["arch"], else the task's; defines, flags,
  // block_size and dynamic_smem_bytes when given.
  Result<compiler::CompileRequest> request(const nlohmann::json& arguments,
                                           const Candidate& candidate);
  // request() then compiler::compile_candidate(). A candidate that does not compile is a
  // result with ok == false; an error means kiln could not try.
  Result<compiler::CompileResult> compile(const nlohmann::json& arguments,
                                          const Candidate& candidate);

  // The occupancy limits for `arch` (see the .cpp).
  std::optional<compiler::SmLimits> limits(const std::string& arch);

 private:
  Result<compiler::Toolchain> toolchain();

  std::shared_ptr<TaskSource> tasks_;
  CompileToolConfig config_;
  std::mutex mutex_;
  std::optional<compiler::Toolchain> toolchain_;
  std::map<std::string, compiler::SmLimits> limits_;
};

}  // namespace kiln::tools
