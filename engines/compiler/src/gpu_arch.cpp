#include "kiln/compiler/gpu_arch.h"

#include <regex>

namespace kiln::compiler {

std::string GpuArch::name() const {
  return "sm_" + std::to_string(major) + std::to_string(minor) + suffix;
}

std::string GpuArch::virtual_name() const {
  return "compute_" + std::to_string(major) + std::to_string(minor) + suffix;
}

Result<GpuArch> parse_gpu_arch(const std::string& arch) {
  static const std::regex kArch(R"(sm_([1-9]\d?)(\d)([af]?))");
  std::smatch m;
  if (!std::regex_match(arch, m, kArch)) {
    return make_error("arch \"" + arch +
                      "\" is not of the form sm_90a or sm_80; pass an nvcc architecture name");
  }
  return GpuArch{std::stoi(m[1]), std::stoi(m[2]), m[3]};
}

std::vector<std::string> gencode_flags(const GpuArch& arch, bool embed_ptx) {
  std::vector<std::string> flags = {"-gencode=arch=" + arch.virtual_name() +
                                    ",code=" + arch.name()};
  if (embed_ptx && arch.suffix.empty())
    flags.push_back("-gencode=arch=" + arch.virtual_name() + ",code=" + arch.virtual_name());
  return flags;
}

}  // namespace kiln::compiler
