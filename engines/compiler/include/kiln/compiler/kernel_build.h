// The build step: candidate and baseline kernel.cu -> shared object with nvcc, the CPU
// reference -> shared object with g++, each cached in its own folder by content hash.
// A candidate build also runs the banned_symbols gate on the linked object. The worker
// builds all three; kiln-sim-run builds the CPU reference with it.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/compiler/banned_symbols.h"
#include "kiln/compiler/ptxas_report.h"
#include "kiln/compiler/toolchain.h"

namespace kiln::compiler {

// kReference: the task's CPU reference (host compiler); kGpuReference: the task's exact
// reference on the GPU, a kernel on the ABI like the baseline but with no libraries.
enum class BuildKind { kCandidate, kBaseline, kReference, kGpuReference };

struct BuildRequest {
  BuildKind kind = BuildKind::kCandidate;
  std::filesystem::path source;
  std::filesystem::path build_dir;           // output folder (the cache entry)
  std::string arch = "sm_90a";               // kernels only
  std::vector<std::string> libraries;        // baseline only, e.g. {"cublas"}
  std::vector<std::string> banned_prefixes;  // candidate only
};

struct BuildOutcome {
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::filesystem::path library;  // the .so, when ok
  std::string log;                // compiler diagnostics, trimmed (ptxas info lines left out)
  PtxasReport ptxas;
  std::vector<BannedHit> banned;  // non-empty: refused by the banned_symbols gate
  std::string error;              // what failed and what to do, when !ok
  std::vector<std::string> command;

  nlohmann::json to_json() const;
  static BuildOutcome from_json(const nlohmann::json& j);
};

class KernelBuild {
 public:
  // A build running past timeout_seconds is stopped and reported (and not cached).
  explicit KernelBuild(Toolchain toolchain, double timeout_seconds = 300)
      : toolchain_(std::move(toolchain)), timeout_seconds_(timeout_seconds) {}

  // The compiler command for a request (output: build_dir/kernel.so or reference.so).
  std::vector<std::string> command(const BuildRequest& request) const;
  // A digest of the command (paths of the request left out) and the source: the cache key.
  std::string fingerprint(const BuildRequest& request) const;
  // Builds, or returns the cached outcome when build_dir holds one for the same fingerprint.
  BuildOutcome build(const BuildRequest& request) const;

  // -gencode flags for an arch name: sm_90a -> arch=compute_90a,code=sm_90a; a plain
  // sm_XY also embeds compute_XY PTX so newer GPUs can run it.
  static Result<std::vector<std::string>> gencode_flags(const std::string& arch);
  // Compiler output without ptxas's informational lines, at most max_bytes.
  static std::string trim_log(const std::string& output, size_t max_bytes = 8192);

  const Toolchain& toolchain() const { return toolchain_; }

 private:
  void append_simulated_runtime_flags(const BuildRequest& request,
                                      std::vector<std::string>* argv) const;

  Toolchain toolchain_;
  double timeout_seconds_;
};

}  // namespace kiln::compiler
