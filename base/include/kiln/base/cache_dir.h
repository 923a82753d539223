// Where kiln keeps what it can rebuild (the kb index, compile results, runner builds).
#pragma once

#include <filesystem>

namespace kiln {

// KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln, else
// <temp>/kiln-cache-<uid>. Each user of the cache keeps its own subfolder.
std::filesystem::path default_cache_dir();

}  // namespace kiln
