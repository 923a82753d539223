#include "kernel_launcher.h"

#include "error_state.h"
#include "launch_report_json.h"
#include "launch_validation.h"
#include "param_packing.h"

namespace kiln::sim::runtime {
namespace {

Dim3 to_dim(dim3 d) { return Dim3{d.x, d.y, d.z}; }

}  // namespace

cudaError_t launch_kernel(RuntimeState& state, const LaunchRequest& request) {
  state.flush_printf();  // CUDA prints the earlier launches' printf output as a launch starts
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess)
    return fail(sticky,
                "kernel launch refused: an earlier launch faulted and the context is "
                "broken (see the earlier fault); call cudaDeviceReset to start over");
  FunctionRecord* function = state.find_function(request.function);
  if (function == nullptr)
    return fail(cudaErrorInvalidDeviceFunction,
                "the function passed to the launch is not a registered __global__ function "
                "(was the .cu compiled by nvcc and linked into this program?)");
  if (!state.is_valid_stream(request.stream))
    return fail(cudaErrorInvalidResourceHandle,
                "launch of " + function->device_name +
                    " on a stream that does not exist "
                    "(destroyed, or never created with cudaStreamCreate)");
  auto module = state.module_handle(*function->module);
  if (!module) return fail(cudaErrorInvalidPtx, module.error().message);
  Device& device = state.device();
  auto kernel = device.kernel(*module, function->device_name);
  if (!kernel)
    return fail(cudaErrorInvalidDeviceFunction,
                "kernel " + function->device_name +
                    " is not in its module's PTX: " + kernel.error().message);

  if (request.dynamic_shared > UINT32_MAX)
    return fail(cudaErrorInvalidValue, "launch of " + function->device_name + " asks for " +
                                           std::to_string(request.dynamic_shared) +
                                           " bytes of dynamic shared memory");
  LaunchConfig config;
  config.grid = to_dim(request.grid);
  config.block = to_dim(request.block);
  config.dynamic_shared_bytes = static_cast<uint32_t>(request.dynamic_shared);
  config.cluster = request.cluster;
  config.printf_buffer_bytes = state.printf_fifo_bytes;
  const FunctionLimits limits{function->max_dynamic_shared, function->non_portable_cluster};
  const LaunchCheck check =
      validate_launch(device.properties(), *kernel, limits, config, request.cluster_set);
  if (!check.ok()) return fail(check.code, check.message);
  if (!request.cluster_set && kernel->cluster.x * kernel->cluster.y * kernel->cluster.z > 1)
    config.cluster = kernel->cluster;

  auto params = pack_params(*kernel, request.args);
  if (!params) return fail(cudaErrorInvalidValue, params.error().message);

  auto report = device.launch(*module, function->device_name, config, *params);
  ++state.clock;
  nlohmann::json entry = {{"kernel", function->device_name},
                          {"grid", to_json(config.grid)},
                          {"block", to_json(config.block)},
                          {"cluster", to_json(config.cluster)},
                          {"dynamic_shared_bytes", config.dynamic_shared_bytes}};
  if (!report) {
    entry["error"] = report.error().message;
    state.launches.push_back(entry);
    return fail(cudaErrorLaunchFailure, "the simulator could not run " + function->device_name +
                                            ": " + report.error().message);
  }
  entry["stats"] = to_json(report->stats);
  state.add_printf(*report);
  if (!report->printf_output.empty()) entry["printf_bytes"] = report->printf_output.size();
  if (report->printf_dropped_bytes != 0)
    entry["printf_dropped_bytes"] = report->printf_dropped_bytes;
  if (report->ok()) {
    state.launches.push_back(entry);
    if (request.completion_event != nullptr) {
      auto event = state.events.find(request.completion_event);
      if (event != state.events.end()) {
        event->second->recorded = true;
        event->second->tick = state.clock;
      }
    }
    return cudaSuccess;
  }
  nlohmann::json faults = nlohmann::json::array();
  for (const LaunchFault& fault : report->faults) faults.push_back(to_json(fault));
  entry["faults"] = faults;
  state.launches.push_back(entry);
  state.last_faults = faults;
  const LaunchFault& first = report->faults.front();
  const cudaError_t code = error_for_fault(first.kind);
  if (fault_is_sticky(first.kind)) state.sticky_error = code;
  std::string where = first.source.empty() ? std::string() : " at " + first.source;
  return fail(code, "kernel " + function->device_name + " faulted (" + first.kind + ")" + where +
                        ": " + first.message);
}

}  // namespace kiln::sim::runtime
