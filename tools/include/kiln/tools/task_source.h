// The tasks a server can present, loaded on first use and cached: a task never
// changes during a run, and start-up must not wait for disk reads. Besides the bundles under
// tasks_dir, "zoo:ID" names the task made from zoo entry ID's meta.json test block
// (kiln/tasks/zoo_task.h), for the CPU tools.
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

// The `task` argument's pattern in every tool's schema: a bundle's name or zoo:ID.
inline constexpr const char* kTaskNamePattern = "^(zoo:[A-Za-z0-9_.-]+|[a-z0-9_]+)$";

class TaskSource {
 public:
  // `zoo_dir` (kb/zoo) serves zoo:ID; empty: zoo tasks are refused.
  TaskSource(std::filesystem::path tasks_dir, std::string default_task,
             std::filesystem::path zoo_dir = {});

  // The named task, or the default when `name` is empty. Errors list the names there are.
  Result<std::shared_ptr<const tasks::Task>> get(const std::string& name);
  std::vector<std::string> names();
  const std::filesystem::path& dir() const { return tasks_dir_; }

 private:
  Result<std::shared_ptr<const tasks::Task>> zoo_task(const std::string& name);

  std::filesystem::path tasks_dir_;
  std::string default_task_;
  std::filesystem::path zoo_dir_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const tasks::Task>> loaded_;
};

}  // namespace kiln::tools
