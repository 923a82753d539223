// Which NVML clock-event (throttle) reasons make a sample unusable. Thermal and
// hardware slowdowns and the power brake cut the clock mid-sample in a way that has
// nothing to do with the kernel, so such sample pairs are discarded. The software
// power cap is the normal sustained state of a busy H200 running GEMMs: discarding
// those would keep only the first, cool samples, so they are kept and reported;
// interleaving baseline and candidate keeps the ratio fair under the cap.
// Idle, application-clock and display-clock bits are informational.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::worker {

// nvmlClocksEventReasons bits (nvml.h, "ClocksEventReasons").
enum ClockEventBits : uint64_t {
  kGpuIdle = 0x1,
  kApplicationsClocksSetting = 0x2,
  kSwPowerCap = 0x4,
  kHwSlowdown = 0x8,
  kSyncBoost = 0x10,
  kSwThermalSlowdown = 0x20,
  kHwThermalSlowdown = 0x40,
  kHwPowerBrakeSlowdown = 0x80,
  kDisplayClockSetting = 0x100,
};

class ThrottlePolicy {
 public:
  static bool discards(uint64_t reasons);
  // Names of the set bits, e.g. {"sw_power_cap", "sw_thermal"}.
  static std::vector<std::string> names(uint64_t reasons);
};

}  // namespace kiln::worker
