#include "kiln/compiler/toolchain.h"

#include <sstream>
#include <system_error>
#include <vector>

#include "kiln/base/env.h"
#include "kiln/compiler/subprocess.h"

#ifndef KILN_COMPILER_CUDA_ROOT
#define KILN_COMPILER_CUDA_ROOT "/usr/local/cuda"
#endif
#ifndef KILN_COMPILER_SOURCE_ABI_INCLUDE
#define KILN_COMPILER_SOURCE_ABI_INCLUDE ""
#endif

namespace kiln::compiler {

namespace fs = std::filesystem;

namespace {

// The lines of `nvcc --version` that name the release and build, joined.
std::string version_text(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  std::string out;
  while (std::getline(lines, line)) {
    if (line.find("release") == std::string::npos && line.rfind("Build ", 0) != 0) continue;
    out += (out.empty() ? "" : "; ") + line;
  }
  return out.empty() ? output : out;
}

// The first folder that holds kiln/abi.h: KILN_ABI_INCLUDE, beside the executable (an installed
// kiln keeps it in ../include), then the source tree. Empty when none does.
fs::path find_abi_include(const fs::path& executable) {
  std::vector<fs::path> candidates = {env_or("KILN_ABI_INCLUDE", "")};
  if (!executable.empty()) {
    candidates.push_back(executable.parent_path() / ".." / "include");
    candidates.push_back(executable.parent_path() / "include");
  }
  candidates.push_back(KILN_COMPILER_SOURCE_ABI_INCLUDE);
  std::error_code ec;
  for (const auto& dir : candidates) {
    if (!dir.empty() && fs::exists(dir / "kiln" / "abi.h", ec))
      return fs::weakly_canonical(dir, ec);
  }
  return {};
}

}  // namespace

Toolchain toolchain_from_environment(const fs::path& executable) {
  Toolchain toolchain;
  toolchain.cuda_root = env_or("KILN_CUDA_ROOT", KILN_COMPILER_CUDA_ROOT);
  toolchain.nvcc = env_or("KILN_NVCC", (toolchain.cuda_root / "bin" / "nvcc").string());
  toolchain.cxx = env_or("KILN_CXX", "g++");
  toolchain.abi_include = find_abi_include(executable);
  return toolchain;
}

Result<Toolchain> probe_toolchain() {
  Toolchain toolchain = toolchain_from_environment();
  ProcessOptions options;
  options.timeout_seconds = 60;
  const ProcessResult run = run_process({toolchain.nvcc_path().string(), "--version"}, options);
  if (!run.ok()) {
    return make_error("nvcc at " + toolchain.nvcc_path().string() + " does not run (" +
                      run.describe() +
                      "); install the CUDA toolkit or set KILN_CUDA_ROOT to its folder "
                      "(or KILN_NVCC to nvcc itself)");
  }
  toolchain.nvcc_version = version_text(run.output);
  return toolchain;
}

}  // namespace kiln::compiler
