// Compile results by content hash: <cache>/compile/<key>/ holds the PTX, nvcc's log and
// result.json. An entry appears whole or not at all (written in a temporary folder, then
// renamed), so concurrent compiles of the same source never see half an entry.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::compiler {

// Everything that decides what nvcc produces. Paths are left out (the ABI header's bytes
// count, not where it lives), so the key is the same on every machine with the same nvcc.
struct CompileKeyInputs {
  std::string source;
  std::string file_name;  // shown in diagnostics and the PTX's .file
  std::string arch;
  std::vector<std::string> flags;  // every nvcc argument that is not a path
  std::string nvcc_version;
  std::string abi_header;  // the bytes of kiln/abi.h
};

// 64 hex digits: SHA-256 over the inputs, each length-prefixed so no two inputs collide.
std::string compile_key(const CompileKeyInputs& inputs);

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path cache_root);  // entries in cache_root/compile/

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_dir(const std::string& key) const { return dir_ / key; }

  // The entry folder when a complete entry (with result.json) exists.
  std::optional<std::filesystem::path> find(const std::string& key) const;

  // Writes `files` (name -> contents; result.json among them) as the entry for `key`. When
  // another process stored the same key first, its entry is kept. Returns the entry folder.
  Result<std::filesystem::path> store(const std::string& key,
                                      const std::map<std::string, std::string>& files) const;

  // A new private folder under dir() for a build's scratch files (removed by the caller).
  Result<std::filesystem::path> make_scratch_dir() const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kiln::compiler
