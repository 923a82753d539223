// The knowledge base as the tools use it: the index opened lazily on first use,
// built when missing or stale, and re-checked at most every `recheck` interval.
// Constructing a KbService touches nothing on disk, so a server starts at once.
//
// Staleness: a cheap fingerprint of the sources (paths, sizes, mtimes) is compared
// first; when it moved, the SHA-256 content hash of the sources is compared with
// the one stored in the index, and only a different hash rebuilds. Builds write a
// temp file and rename it over the index, so two processes building at once both
// end with a complete index (the last rename wins; both are equal).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kiln/base/result.h"
#include "kiln/kb/kb_index.h"
#include "kiln/kb/kb_paths.h"

namespace kiln::kb {

class KbService {
 public:
  explicit KbService(KbPaths paths, std::chrono::milliseconds recheck = std::chrono::seconds(2));

  const KbPaths& paths() const { return paths_; }

  // The current index, built or rebuilt first when needed (the first call may take
  // a second or two). Safe to call from several threads.
  Result<std::shared_ptr<const KbIndex>> index();

  // Rebuilds unconditionally (kiln kb build / ingest-ptx).
  Result<BuildReport> rebuild();

  // The report of the build this service ran, if it ran one.
  std::optional<BuildReport> last_build() const;

 private:
  Result<BuildReport> rebuild_locked();

  KbPaths paths_;
  std::chrono::milliseconds recheck_;
  mutable std::mutex mutex_;
  std::shared_ptr<const KbIndex> index_;
  std::string fingerprint_;
  std::chrono::steady_clock::time_point checked_{};
  std::optional<BuildReport> last_build_;
};

}  // namespace kiln::kb
