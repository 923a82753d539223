#include "kiln/kb/kb_service.h"

#include "kiln/kb/source_set.h"

namespace kiln::kb {

KbService::KbService(KbPaths paths, std::chrono::milliseconds recheck)
    : paths_(std::move(paths)), recheck_(recheck) {}

Result<std::shared_ptr<const KbIndex>> KbService::index() {
  std::lock_guard lock(mutex_);
  auto now = std::chrono::steady_clock::now();
  if (index_ && now - checked_ < recheck_) return index_;

  SourceSet sources = collect_sources(paths_);
  std::string fingerprint = source_fingerprint(sources);
  if (index_ && fingerprint == fingerprint_) {
    checked_ = now;
    return index_;
  }
  // The sources moved (or this is the first use): compare contents with what the
  // index on disk was built from; another process may already have rebuilt it.
  std::string content_hash = source_content_hash(sources);
  if (auto opened = KbIndex::open(paths_.index_path());
      opened && (*opened)->meta("content_hash") == content_hash) {
    index_ = std::move(*opened);
  } else {
    auto built = rebuild_locked();
    if (!built) return built.error();
  }
  fingerprint_ = fingerprint;
  checked_ = std::chrono::steady_clock::now();
  return index_;
}

Result<BuildReport> KbService::rebuild() {
  std::lock_guard lock(mutex_);
  auto built = rebuild_locked();
  if (built) {
    fingerprint_ = source_fingerprint(collect_sources(paths_));
    checked_ = std::chrono::steady_clock::now();
  }
  return built;
}

Result<BuildReport> KbService::rebuild_locked() {
  auto report = build_index(paths_, paths_.index_path());
  if (!report) return report.error();
  auto opened = KbIndex::open(paths_.index_path());
  if (!opened) return opened.error();
  index_ = std::move(*opened);
  last_build_ = *report;
  return report;
}

std::optional<BuildReport> KbService::last_build() const {
  std::lock_guard lock(mutex_);
  return last_build_;
}

}  // namespace kiln::kb
