#include "kiln/base/program_path.h"

#include <system_error>

namespace kiln {

std::filesystem::path program_beside_self(std::string_view name) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || self.empty()) return std::filesystem::path(name);
  return self.parent_path() / name;
}

}  // namespace kiln
