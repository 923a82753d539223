// A stand-in for the simulator core in tests of the runtime: it implements
// kiln::sim::Device (kiln/sim/device.h) with plain host memory, reads kernel parameter layouts
// from the PTX .entry lines, and instead of executing a launch records it (and runs a C++
// body when a test registered one for that kernel). Linked only into runtime tests that do not
// link kiln_sim.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/sim/device.h"

namespace kiln::sim::fake {

struct RecordedLaunch {
  std::string kernel;
  LaunchConfig config;
  std::vector<std::byte> params;
};

// Every launch the fake device received, in order.
std::vector<RecordedLaunch>& recorded_launches();

// A body runs in place of the kernel: it may read and write device memory through `device`
// and return faults to report.
using KernelBody = std::function<LaunchReport(Device& device, const RecordedLaunch& launch)>;
void set_kernel_body(const std::string& kernel_substring, KernelBody body);
void clear_kernel_bodies();

}  // namespace kiln::sim::fake
