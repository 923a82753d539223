#include "kiln/compiler/compile_cache.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"

namespace kiln::compiler {

namespace fs = std::filesystem;

namespace {

void add_field(Sha256& hash, const char* name, const std::string& value) {
  hash.update(std::string(name) + " " + std::to_string(value.size()) + "\n");
  hash.update(value);
  hash.update("\n");
}

}  // namespace

std::string compile_key(const CompileKeyInputs& inputs) {
  Sha256 hash;
  hash.update("kiln compile v1\n");
  add_field(hash, "source", inputs.source);
  add_field(hash, "file_name", inputs.file_name);
  add_field(hash, "arch", inputs.arch);
  for (const std::string& flag : inputs.flags) add_field(hash, "flag", flag);
  add_field(hash, "nvcc", inputs.nvcc_version);
  add_field(hash, "abi.h", inputs.abi_header);
  return hash.hex_digest();
}

CompileCache::CompileCache(fs::path cache_root) : dir_(std::move(cache_root) / "compile") {}

std::optional<fs::path> CompileCache::find(const std::string& key) const {
  std::error_code error;
  const fs::path entry = entry_dir(key);
  if (fs::is_regular_file(entry / "result.json", error)) return entry;
  return std::nullopt;
}

Result<fs::path> CompileCache::make_scratch_dir() const {
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error)
    return make_error("cannot create the compile cache " + dir_.string() + ": " + error.message() +
                      "; set KILN_CACHE_DIR to a writable folder");
  std::string pattern = (dir_ / ".tmp-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    return make_error("cannot create a folder in " + dir_.string() + ": " + std::strerror(errno) +
                      "; set KILN_CACHE_DIR to a writable folder");
  return fs::path(pattern);
}

Result<fs::path> CompileCache::store(const std::string& key,
                                     const std::map<std::string, std::string>& files) const {
  if (auto existing = find(key)) return *existing;
  auto scratch = make_scratch_dir();
  if (!scratch) return scratch.error();
  for (const auto& [name, contents] : files) {
    if (auto written = write_file(*scratch / name, contents); !written) {
      std::error_code ignored;
      fs::remove_all(*scratch, ignored);
      return written.error();
    }
  }
  const fs::path entry = entry_dir(key);
  std::error_code error;
  fs::rename(*scratch, entry, error);
  if (error) {
    // Another compile of the same key won the race (the entry exists, not empty): keep it.
    std::error_code ignored;
    fs::remove_all(*scratch, ignored);
    if (auto existing = find(key)) return *existing;
    return make_error("cannot store the compile result in " + entry.string() + ": " +
                      error.message() + "; check the cache folder's permissions");
  }
  return entry;
}

}  // namespace kiln::compiler
