// The programs and the header a KernelBuild uses: nvcc for kernels, g++ for CPU references,
// and the folder holding kiln/abi.h, which both include.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::compiler {

struct BuildToolchain {
  std::filesystem::path cuda_root = "/usr/local/cuda";
  std::filesystem::path nvcc;  // default cuda_root/bin/nvcc
  std::string cxx = "g++";
  std::filesystem::path abi_include;  // the folder holding kiln/abi.h
  double timeout_seconds = 300;

  std::filesystem::path nvcc_path() const {
    return nvcc.empty() ? cuda_root / "bin" / "nvcc" : nvcc;
  }
  // KILN_CUDA_ROOT / KILN_NVCC / KILN_CXX / KILN_ABI_INCLUDE override the defaults; the
  // ABI include is looked for beside the executable (../include) before the source tree.
  static BuildToolchain from_environment(const std::filesystem::path& executable);
};

}  // namespace kiln::compiler
