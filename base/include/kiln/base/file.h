// Whole-file reads and writes with errors that name the path.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kiln/base/result.h"

namespace kiln {

Result<std::string> read_file(const std::filesystem::path& path);
Status write_file(const std::filesystem::path& path, std::string_view contents);

}  // namespace kiln
