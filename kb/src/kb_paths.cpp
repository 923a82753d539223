#include "kiln/kb/kb_paths.h"

#include "kiln/base/cache_dir.h"
#include "kiln/base/env.h"
#include "kiln/base/sha256.h"

namespace kiln::kb {

namespace fs = std::filesystem;

namespace {

// An absolute, normalized spelling, so the same folder always names the same index.
std::string canonical_text(const fs::path& path) {
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(path, error);
  fs::path normal = (error ? fs::absolute(path) : canonical).lexically_normal();
  if (normal.has_relative_path() && normal.filename().empty())
    normal = normal.parent_path();  // "kb/" -> "kb"
  return normal.string();
}

}  // namespace

fs::path KbPaths::index_path() const {
  std::string key = canonical_text(kb_dir) + "\n" + canonical_text(cccl_dir);
  return cache_dir / ("kb-" + sha256_hex(key).substr(0, 16) + ".sqlite");
}

fs::path default_kb_dir() {
  if (auto dir = env_value("KILN_KB_DIR")) return *dir;
  if (fs::exists(fs::path(KILN_SOURCE_KB_DIR) / "zoo")) return KILN_SOURCE_KB_DIR;
  std::error_code error;
  fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return exe.parent_path().parent_path() / "share" / "kiln" / "kb";
}

fs::path default_cccl_dir() {
  if (auto dir = env_value("KILN_CCCL_PTX_DIR")) return *dir;
  return fs::path(KILN_CUDA_ROOT_DIR) / "include" / "cccl" / "cuda" / "__ptx" / "instructions" /
         "generated";
}

KbPaths resolve_paths(const fs::path& kb_dir, const fs::path& cache_dir, const fs::path& cccl_dir) {
  KbPaths paths;
  paths.kb_dir = kb_dir.empty() ? default_kb_dir() : kb_dir;
  paths.cache_dir = cache_dir.empty() ? kiln::default_cache_dir() : cache_dir;
  paths.cccl_dir = cccl_dir.empty() ? default_cccl_dir() : cccl_dir;
  return paths;
}

}  // namespace kiln::kb
