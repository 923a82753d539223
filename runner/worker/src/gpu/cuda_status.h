// CUDA runtime errors as kiln Status values that name the call and the error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kiln/base/result.h"

namespace kiln::worker {

// "cudaMalloc(1.2 GB for C): out of memory (cudaErrorMemoryAllocation)".
std::string describe_cuda(cudaError_t error, const std::string& what);
Status cuda_ok(cudaError_t error, const std::string& what);
// True for errors after which the context is unusable (illegal address, launch failure, ...).
bool is_sticky(cudaError_t error);

}  // namespace kiln::worker
