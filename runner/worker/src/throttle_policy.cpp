#include "kiln/worker/throttle_policy.h"

namespace kiln::worker {

bool ThrottlePolicy::discards(uint64_t reasons) {
  return (reasons &
          (kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown)) != 0;
}

std::vector<std::string> ThrottlePolicy::names(uint64_t reasons) {
  static const struct {
    uint64_t bit;
    const char* name;
  } kNames[] = {{kGpuIdle, "gpu_idle"},
                {kApplicationsClocksSetting, "applications_clocks"},
                {kSwPowerCap, "sw_power_cap"},
                {kHwSlowdown, "hw_slowdown"},
                {kSyncBoost, "sync_boost"},
                {kSwThermalSlowdown, "sw_thermal"},
                {kHwThermalSlowdown, "hw_thermal"},
                {kHwPowerBrakeSlowdown, "hw_power_brake"},
                {kDisplayClockSetting, "display_clocks"}};
  std::vector<std::string> out;
  for (const auto& entry : kNames) {
    if ((reasons & entry.bit) != 0) out.emplace_back(entry.name);
  }
  return out;
}

}  // namespace kiln::worker
