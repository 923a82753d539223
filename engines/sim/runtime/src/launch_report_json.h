// What a simulated launch reports, in the runtime's terms: the CUDA error a fault stands for
// (what a real GPU would have returned), and the stats and faults as JSON for the driver.
#pragma once

#include <cuda_runtime_api.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "kiln/sim/device.h"

namespace kiln::sim::runtime {

// out_of_bounds -> cudaErrorIllegalAddress, misaligned -> cudaErrorMisalignedAddress,
// trap -> cudaErrorLaunchFailure, budget/time_limit/deadlock -> cudaErrorLaunchTimeout, ...
cudaError_t error_for_fault(std::string_view kind);

// Whether the fault breaks the context (every later call returns the error, as on a GPU).
bool fault_is_sticky(std::string_view kind);

nlohmann::json to_json(const Dim3& d);
nlohmann::json to_json(const LaunchFault& fault);
nlohmann::json to_json(const LaunchStats& stats);

}  // namespace kiln::sim::runtime
