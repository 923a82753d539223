// What the runner can say about its GPUs without touching them: the device ordinals it
// was given, and, when nvidia-smi is installed, their names and the driver version.
#pragma once

#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::runner {

struct GpuInfo {
  int index = 0;
  std::string name;  // empty when unknown
};

struct GpuDiscovery {
  std::vector<GpuInfo> gpus;
  std::string driver;  // empty when unknown
  std::string cuda;    // the driver's CUDA version, empty when unknown
};

// "0,1" -> {0, 1}. Errors say what is wrong with the list.
Result<std::vector<int>> parse_gpu_list(const std::string& text);

// Names from `nvidia-smi` (if it is on PATH; it is not run otherwise); indices always.
GpuDiscovery discover_gpus(const std::vector<int>& indices);

// Device nodes /dev/nvidia0, /dev/nvidia1, ...: the GPUs of this machine, as ordinals.
std::vector<int> local_gpu_indices();

}  // namespace kiln::runner
