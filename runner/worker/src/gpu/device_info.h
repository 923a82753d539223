// The GPU a job runs on, as the CUDA runtime describes it.
#pragma once

#include "kiln/base/result.h"
#include "kiln/worker/worker_result.h"

namespace kiln::worker {

// Selects device `index` and fills name, PCI bus id, SM count, L2 size, driver and
// runtime versions. Fails (with a message for the result) when there is no such GPU.
Result<GpuInfo> open_device(int index);

}  // namespace kiln::worker
