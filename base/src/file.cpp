#include "kiln/base/file.h"

#include <fstream>
#include <sstream>

namespace kiln {

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path.string() + ": no such file or no permission");
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

Status write_file(const std::filesystem::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return make_error("cannot write " + path.string() +
                      ": check the folder exists and is writable");
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) return make_error("writing " + path.string() + " failed (disk full?)");
  return Ok{};
}

}  // namespace kiln
