// A GPU architecture name as nvcc takes it (sm_90a, sm_80) and the -gencode flags for it.
#pragma once

#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::compiler {

struct GpuArch {
  int major = 0;       // 9 for sm_90a
  int minor = 0;       // 0 for sm_90a
  std::string suffix;  // "a", "f" or ""

  std::string name() const;          // "sm_90a"
  std::string virtual_name() const;  // "compute_90a"
};

// "sm_90a" -> {9, 0, "a"}; an error naming the expected form otherwise.
Result<GpuArch> parse_gpu_arch(const std::string& arch);

// -gencode=arch=compute_90a,code=sm_90a; with embed_ptx a plain sm_XY also embeds compute_XY
// PTX, so newer GPUs can run the binary (arch-specific "a" targets cannot be embedded).
std::vector<std::string> gencode_flags(const GpuArch& arch, bool embed_ptx);

}  // namespace kiln::compiler
