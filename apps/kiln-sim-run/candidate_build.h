// Building a candidate kernel.cu for the simulator: nvcc compiles the host code against no
// CUDA runtime and links it with libkiln_cudart_sim.so; the device code goes into the fat
// binary as uncompressed compute_90a PTX with line info (README.md, "Building a candidate").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::sim::run {

struct CandidateBuild {
  std::filesystem::path nvcc;             // e.g. /usr/local/cuda/bin/nvcc
  std::filesystem::path abi_include;      // folder holding kiln/abi.h
  std::filesystem::path runtime_library;  // libkiln_cudart_sim.so

  // The nvcc command line that builds `source` into `output`.
  std::vector<std::string> command(const std::filesystem::path& source,
                                   const std::filesystem::path& output) const;
  // Runs it; the error carries nvcc's diagnostics.
  Result<std::filesystem::path> build(const std::filesystem::path& source,
                                      const std::filesystem::path& output) const;
};

// Where this process loaded libkiln_cudart_sim.so from.
std::filesystem::path loaded_runtime_library();

}  // namespace kiln::sim::run
