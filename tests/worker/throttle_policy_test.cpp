// throttle_policy.h: which clock-event reasons discard a sample.
#include "kiln/worker/throttle_policy.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

TEST(ThrottlePolicy, ThermalAndHardwareSlowdownsDiscard) {
  EXPECT_TRUE(ThrottlePolicy::discards(kSwThermalSlowdown));
  EXPECT_TRUE(ThrottlePolicy::discards(kHwThermalSlowdown));
  EXPECT_TRUE(ThrottlePolicy::discards(kHwSlowdown | kGpuIdle));
  EXPECT_TRUE(ThrottlePolicy::discards(kHwPowerBrakeSlowdown));
}

TEST(ThrottlePolicy, PowerCapAndIdleAreKept) {
  EXPECT_FALSE(ThrottlePolicy::discards(0));
  EXPECT_FALSE(ThrottlePolicy::discards(kSwPowerCap));
  EXPECT_FALSE(ThrottlePolicy::discards(kGpuIdle | kApplicationsClocksSetting));
}

TEST(ThrottlePolicy, NamesTheBits) {
  EXPECT_EQ(ThrottlePolicy::names(kSwPowerCap | kSwThermalSlowdown),
            (std::vector<std::string>{"sw_power_cap", "sw_thermal"}));
  EXPECT_TRUE(ThrottlePolicy::names(0).empty());
}

}  // namespace
}  // namespace kiln::worker
