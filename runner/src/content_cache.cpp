#include "kiln/runner/content_cache.h"

#include <random>

#include "kiln/base/file.h"

namespace kiln::runner {

namespace fs = std::filesystem;

namespace {

std::string random_suffix() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> nibble(0, 15);
  std::string out;
  for (int i = 0; i < 16; ++i) out.push_back("0123456789abcdef"[nibble(device)]);
  return out;
}

}  // namespace

StagedTask::StagedTask(fs::path staging_root, fs::path bundle_dir)
    : root_(std::move(staging_root)), bundle_dir_(std::move(bundle_dir)) {}

StagedTask::StagedTask(StagedTask&& other) noexcept
    : root_(std::move(other.root_)), bundle_dir_(std::move(other.bundle_dir_)) {
  other.root_.clear();
}

StagedTask::~StagedTask() {
  if (root_.empty()) return;
  std::error_code ignored;
  fs::remove_all(root_, ignored);
}

ContentCache::ContentCache(fs::path root) : root_(std::move(root)) {}

Status ContentCache::prepare() const {
  for (const char* sub : {"tasks", "candidates", "builds", "jobs", "tmp"}) {
    std::error_code error;
    fs::create_directories(root_ / sub, error);
    if (error) {
      return make_error("cannot create the runner cache folder " + (root_ / sub).string() + ": " +
                        error.message() + "; pass a writable --cache-dir");
    }
  }
  return Ok{};
}

Result<StagedTask> ContentCache::stage_task(const std::string& name,
                                            const std::map<std::string, std::string>& files) const {
  fs::path staging = root_ / "tmp" / ("task-" + random_suffix());
  StagedTask staged(staging, staging / name);
  for (const auto& [relative, contents] : files) {
    fs::path path = staged.bundle_dir() / relative;
    std::error_code error;
    fs::create_directories(path.parent_path(), error);
    if (error) return make_error("cannot stage " + path.string() + ": " + error.message());
    if (auto written = write_file(path, contents); !written) return written.error();
  }
  return staged;
}

Result<tasks::Task> ContentCache::commit_task(StagedTask staged, const std::string& sha256) const {
  fs::path entry = root_ / "tasks" / sha256;
  fs::path bundle = entry / staged.bundle_dir().filename();
  std::error_code error;
  if (!fs::exists(entry, error)) {
    fs::rename(staged.root(), entry, error);
    if (!error) {
      staged.release();
    } else if (!fs::exists(entry)) {  // not a lost race with an identical bundle
      return make_error("cannot move the task bundle into " + entry.string() + ": " +
                        error.message());
    }
  }
  auto task = tasks::load_task(bundle);
  if (!task)
    return make_error("the cached task bundle " + bundle.string() + " no longer loads (" +
                      task.error().message + "); delete the folder and send the job again");
  if (task->sha256 != sha256)
    return make_error("the cached task bundle " + bundle.string() + " hashes to " + task->sha256 +
                      ", not " + sha256 + "; delete the folder and send the job again");
  return task;
}

Result<fs::path> ContentCache::store_candidate(const std::string& source,
                                               const std::string& sha256) const {
  fs::path path = root_ / "candidates" / (sha256 + ".cu");
  std::error_code error;
  if (fs::exists(path, error)) return path;
  fs::path temporary = root_ / "tmp" / ("candidate-" + random_suffix());
  if (auto written = write_file(temporary, source); !written) return written.error();
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    return make_error("cannot store the candidate in " + path.string());
  }
  return path;
}

}  // namespace kiln::runner
