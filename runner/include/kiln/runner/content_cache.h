// The runner's content-addressed cache:
//   ROOT/tasks/<task sha256>/<name>/...   task bundles, verified by loading them
//   ROOT/candidates/<sha256>.cu           candidate sources
//   ROOT/builds/<key>/                    the worker's build outputs (it owns their contents)
//   ROOT/jobs/<job id>/                   one folder per job: job.json, kernel.cu, worker.log
//   ROOT/tmp/                             staging; entries move into place with rename()
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "kiln/base/result.h"
#include "kiln/tasks/task.h"

namespace kiln::runner {

// A bundle written to the staging area, not yet in the cache; removed unless committed.
class StagedTask {
 public:
  StagedTask(std::filesystem::path staging_root, std::filesystem::path bundle_dir);
  ~StagedTask();
  StagedTask(StagedTask&& other) noexcept;
  StagedTask& operator=(StagedTask&&) = delete;
  StagedTask(const StagedTask&) = delete;
  StagedTask& operator=(const StagedTask&) = delete;

  const std::filesystem::path& bundle_dir() const { return bundle_dir_; }  // .../<name>/
  const std::filesystem::path& root() const { return root_; }
  void release() { root_.clear(); }  // it moved into the cache

 private:
  std::filesystem::path root_;  // the staging folder that holds <name>/
  std::filesystem::path bundle_dir_;
};

class ContentCache {
 public:
  explicit ContentCache(std::filesystem::path root);

  // Creates the folders; an error says which one could not be made.
  Status prepare() const;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path jobs_dir() const { return root_ / "jobs"; }
  std::filesystem::path build_dir(const std::string& key) const { return root_ / "builds" / key; }

  // Writes the files of a bundle named `name` (names already checked to stay inside it).
  Result<StagedTask> stage_task(const std::string& name,
                                const std::map<std::string, std::string>& files) const;

  // Moves a staged bundle, whose loaded sha256 is `sha256`, to tasks/<sha256>/ and loads
  // it from there. When that entry exists already (the same bundle sent before, or by a
  // concurrent request), the staged copy is dropped and the cached one loaded.
  Result<tasks::Task> commit_task(StagedTask staged, const std::string& sha256) const;

  // Stores a candidate source under its sha256; returns the file.
  Result<std::filesystem::path> store_candidate(const std::string& source,
                                                const std::string& sha256) const;

 private:
  std::filesystem::path root_;
};

}  // namespace kiln::runner
