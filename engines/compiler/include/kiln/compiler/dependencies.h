// The headers a compile read (nvcc -MD), so a cached compile is reused only while they are
// unchanged. The source and kiln/abi.h are in the cache key already; toolkit and system
// headers change with the toolkit, whose version is in the key too.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::compiler {

struct Dependency {
  std::string path;    // absolute
  std::string sha256;  // of its bytes when the compile ran
};

// The prerequisites of a make rule file (`out.o : a.cu \ /x/b.h ...`), relative ones resolved
// against `base_dir`, minus the files under `skip_dirs` and those named in `skip_files`.
std::vector<std::string> parse_dependency_file(
    const std::string& text, const std::filesystem::path& base_dir,
    const std::vector<std::filesystem::path>& skip_dirs,
    const std::vector<std::filesystem::path>& skip_files);

// Each path with the SHA-256 of its bytes now; unreadable files are left out.
std::vector<Dependency> hash_dependencies(const std::vector<std::string>& paths);

// True when every dependency still has the recorded bytes.
bool dependencies_unchanged(const std::vector<Dependency>& dependencies);

nlohmann::json dependencies_to_json(const std::vector<Dependency>& dependencies);
std::vector<Dependency> dependencies_from_json(const nlohmann::json& j);

}  // namespace kiln::compiler
