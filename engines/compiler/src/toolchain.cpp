#include "kiln/compiler/toolchain.h"

#include <cstdlib>
#include <sstream>

#include "kiln/compiler/subprocess.h"

#ifndef KILN_COMPILER_CUDA_ROOT
#define KILN_COMPILER_CUDA_ROOT "/usr/local/cuda"
#endif

namespace kiln::compiler {

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

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

}  // namespace

Toolchain toolchain_from_environment() {
  Toolchain toolchain;
  const std::string root = env("KILN_CUDA_ROOT");
  toolchain.cuda_root = std::filesystem::path(root.empty() ? KILN_COMPILER_CUDA_ROOT : root);
  const std::string nvcc = env("KILN_NVCC");
  toolchain.nvcc =
      nvcc.empty() ? toolchain.cuda_root / "bin" / "nvcc" : std::filesystem::path(nvcc);
  return toolchain;
}

Result<Toolchain> probe_toolchain() {
  Toolchain toolchain = toolchain_from_environment();
  ProcessOptions options;
  options.timeout_seconds = 60;
  const ProcessResult run = run_process({toolchain.nvcc.string(), "--version"}, options);
  if (!run.ok()) {
    return make_error("nvcc at " + toolchain.nvcc.string() + " does not run (" + run.describe() +
                      "); install the CUDA toolkit or set KILN_CUDA_ROOT to its folder "
                      "(or KILN_NVCC to nvcc itself)");
  }
  toolchain.nvcc_version = version_text(run.output);
  return toolchain;
}

}  // namespace kiln::compiler
