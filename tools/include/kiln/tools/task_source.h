// The tasks a server can present, loaded on first use and cached: a task never
// changes during a run, and start-up must not wait for disk reads.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/tasks/task.h"

namespace kiln::tools {

class TaskSource {
 public:
  TaskSource(std::filesystem::path tasks_dir, std::string default_task);

  // The named task, or the default when `name` is empty. Errors list the names there are.
  Result<std::shared_ptr<const tasks::Task>> get(const std::string& name);
  std::vector<std::string> names();
  const std::filesystem::path& dir() const { return tasks_dir_; }

 private:
  std::filesystem::path tasks_dir_;
  std::string default_task_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const tasks::Task>> loaded_;
};

}  // namespace kiln::tools
