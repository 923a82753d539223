#include "kiln/compiler/build_toolchain.h"

#include <cstdlib>
#include <system_error>
#include <vector>

#include "kiln/compiler/toolchain.h"

#ifndef KILN_COMPILER_SOURCE_ABI_INCLUDE
#define KILN_COMPILER_SOURCE_ABI_INCLUDE ""
#endif

namespace kiln::compiler {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

}  // namespace

BuildToolchain BuildToolchain::from_environment(const std::filesystem::path& executable) {
  BuildToolchain t;
  const Toolchain cuda = toolchain_from_environment();
  t.cuda_root = cuda.cuda_root;
  t.nvcc = cuda.nvcc;
  t.cxx = env_or("KILN_CXX", "g++");
  const std::string from_env = env_or("KILN_ABI_INCLUDE", "");
  std::error_code ec;
  const std::vector<std::filesystem::path> candidates = {
      from_env, executable.parent_path() / ".." / "include", executable.parent_path() / "include",
      KILN_COMPILER_SOURCE_ABI_INCLUDE};
  for (const auto& dir : candidates) {
    if (!dir.empty() && std::filesystem::exists(dir / "kiln" / "abi.h", ec)) {
      t.abi_include = std::filesystem::weakly_canonical(dir, ec);
      break;
    }
  }
  return t;
}

}  // namespace kiln::compiler
