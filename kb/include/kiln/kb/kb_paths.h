// Where the knowledge base reads its sources and keeps its index.
//
// Sources: `kb_dir` (kb/: zoo/, ptx/notes/, hw/), the CUDA toolkit's generated CCCL
// PTX headers (`cccl_dir`), and PTX ISA documents ingested by the user (kept in
// `cache_dir/ptx-docs/`). The index is one SQLite file in `cache_dir`, named after
// the source folders, so two checkouts never share an index.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::kb {

struct KbPaths {
  std::filesystem::path kb_dir;     // kb/: zoo/, ptx/notes/, hw/
  std::filesystem::path cccl_dir;   // .../cccl/cuda/__ptx/instructions/generated; may be absent
  std::filesystem::path cache_dir;  // index file and ingested PTX documents

  std::filesystem::path zoo_dir() const { return kb_dir / "zoo"; }
  std::filesystem::path notes_dir() const { return kb_dir / "ptx" / "notes"; }
  std::filesystem::path hw_dir() const { return kb_dir / "hw"; }
  std::filesystem::path documents_dir() const { return cache_dir / "ptx-docs"; }
  // cache_dir/kb-<16 hex of sha256(kb_dir, cccl_dir)>.sqlite
  std::filesystem::path index_path() const;
};

// KILN_KB_DIR, else the source tree's kb/ (when present), else <exe>/../share/kiln/kb.
std::filesystem::path default_kb_dir();
// KILN_CCCL_PTX_DIR, else <CUDA root>/include/cccl/cuda/__ptx/instructions/generated.
std::filesystem::path default_cccl_dir();

// The defaults above (the cache: kiln::default_cache_dir()), with any non-empty argument
// taking precedence.
KbPaths resolve_paths(const std::filesystem::path& kb_dir = {},
                      const std::filesystem::path& cache_dir = {},
                      const std::filesystem::path& cccl_dir = {});

}  // namespace kiln::kb
