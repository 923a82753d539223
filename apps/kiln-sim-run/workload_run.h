// One workload of a task run through a candidate on the simulator: tensors allocated in
// simulated device memory, inputs drawn from the task's distributions, outputs poisoned,
// kiln_launch called, outputs read back and compared with the CPU reference under the task's
// tolerance. The result is JSON for the simulate tool.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "kiln/abi.h"
#include "kiln/tasks/task.h"

namespace kiln::sim::run {

struct WorkloadRunner {
  const tasks::Task* task = nullptr;
  kiln_launch_fn launch = nullptr;
  kiln_reference_fn reference = nullptr;
  uint64_t seed = 0;

  // {"workload", "dims", "pass", "status", "message", "errors", "launches", "faults",
  //  "diagnostics", "printf_output"?, "printf_dropped_bytes"?}; status is pass, wrong_answer,
  // launch_error (kiln_launch returned nonzero or a CUDA call failed), fault (a kernel
  // faulted) or harness_error. printf_output (when a kernel printed) holds up to 64 KiB of
  // the kernels' device printf text; printf_dropped_bytes counts the rest.
  nlohmann::json run(const tasks::Workload& workload) const;
};

}  // namespace kiln::sim::run
