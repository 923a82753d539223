#include "bundle_hash.h"

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"

namespace kiln::tasks {

Result<std::string> hash_bundle(const std::filesystem::path& dir,
                                const std::vector<std::string>& relative_files) {
  Sha256 hash;
  for (const auto& name : relative_files) {
    if (name.find('\n') != std::string::npos) {
      return make_error("cannot hash '" + name +
                        "': file names in a bundle may not hold a newline");
    }
    auto contents = read_file(dir / name);
    if (!contents) return contents.error();
    hash.update(name);
    hash.update("\n");
    hash.update(std::to_string(contents->size()));
    hash.update("\n");
    hash.update(*contents);
  }
  return hash.hex_digest();
}

}  // namespace kiln::tasks
