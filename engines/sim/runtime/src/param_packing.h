// Kernel arguments as the runtime receives them (an array of pointers, one per parameter, as
// cudaLaunchKernel and the <<<>>> stubs pass them) packed into the parameter buffer the
// simulator reads, at the offsets and sizes the PTX .entry declares.
#pragma once

#include <cstddef>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/sim/device.h"

namespace kiln::sim::runtime {

// `args[i]` points to the value of parameter i. Fails when `args` is null but the kernel takes
// parameters, or when a slot does not fit the declared buffer.
Result<std::vector<std::byte>> pack_params(const KernelInfo& kernel, void* const* args);

}  // namespace kiln::sim::runtime
