#include "launch_report_json.h"

namespace kiln::sim::runtime {

cudaError_t error_for_fault(std::string_view kind) {
  if (kind == "out_of_bounds") return cudaErrorIllegalAddress;
  if (kind == "misaligned") return cudaErrorMisalignedAddress;
  if (kind == "budget" || kind == "time_limit" || kind == "deadlock")
    return cudaErrorLaunchTimeout;  // a GPU would hang until the watchdog
  if (kind == "invalid_launch") return cudaErrorInvalidConfiguration;
  if (kind == "unsupported_instruction") return cudaErrorNotSupported;
  return cudaErrorLaunchFailure;  // trap, barrier_divergence, anything new
}

bool fault_is_sticky(std::string_view kind) {
  return kind != "invalid_launch" && kind != "unsupported_instruction";
}

nlohmann::json to_json(const Dim3& d) { return nlohmann::json::array({d.x, d.y, d.z}); }

nlohmann::json to_json(const LaunchFault& fault) {
  nlohmann::json out = {{"kind", fault.kind},
                        {"message", fault.message},
                        {"block", to_json(fault.block)},
                        {"thread", to_json(fault.thread)}};
  if (fault.address != 0) out["address"] = fault.address;
  if (fault.ptx_line != 0) out["ptx_line"] = fault.ptx_line;
  if (!fault.source.empty()) out["source"] = fault.source;
  if (!fault.instruction.empty()) out["instruction"] = fault.instruction;
  return out;
}

nlohmann::json to_json(const LaunchStats& stats) {
  nlohmann::json by_class = nlohmann::json::object();
  for (const auto& [name, count] : stats.by_class) by_class[name] = count;
  nlohmann::json bytes = nlohmann::json::object();
  for (const auto& [space, count] : stats.bytes_by_space) bytes[space] = count;
  return {{"warp_instructions", stats.warp_instructions},
          {"lane_instructions", stats.lane_instructions},
          {"instructions_by_class", by_class},
          {"bytes_by_space", bytes},
          {"shared_bank_conflicts", stats.shared_bank_conflicts},
          {"divergent_branches", stats.divergent_branches},
          {"simulation_seconds", stats.seconds}};
}

}  // namespace kiln::sim::runtime
