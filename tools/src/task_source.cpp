#include "kiln/tools/task_source.h"

#include <algorithm>

#include "kiln/tasks/zoo_task.h"

namespace kiln::tools {

namespace fs = std::filesystem;

TaskSource::TaskSource(fs::path tasks_dir, std::string default_task, fs::path zoo_dir)
    : tasks_dir_(std::move(tasks_dir)),
      default_task_(std::move(default_task)),
      zoo_dir_(std::move(zoo_dir)) {}

Result<std::shared_ptr<const tasks::Task>> TaskSource::zoo_task(const std::string& name) {
  if (zoo_dir_.empty())
    return make_error("this server has no zoo folder, so `" + name +
                      "` cannot be served; name a task bundle");
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second;
  auto task = tasks::load_zoo_task(zoo_dir_, name.substr(tasks::kZooTaskPrefix.size()));
  if (!task) return task.error();
  auto shared = std::make_shared<const tasks::Task>(std::move(task).value());
  loaded_[name] = shared;
  return shared;
}

std::vector<std::string> TaskSource::names() {
  std::vector<std::string> out;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(tasks_dir_, error)) {
    if (entry.is_directory() && fs::exists(entry.path() / "task.json"))
      out.push_back(entry.path().filename());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::shared_ptr<const tasks::Task>> TaskSource::get(const std::string& requested) {
  std::string name = requested.empty() ? default_task_ : requested;
  if (tasks::is_zoo_task_name(name)) return zoo_task(name);
  std::vector<std::string> known = names();
  auto listing = [&] {
    std::string joined;
    for (const auto& n : known) joined += (joined.empty() ? "" : ", ") + n;
    return joined.empty() ? std::string("none") : joined;
  };
  if (known.empty()) {
    return make_error("no task bundles in " + tasks_dir_.string() +
                      "; point kiln at them with --tasks-dir or KILN_TASKS_DIR");
  }
  if (name.empty()) {
    if (known.size() > 1)
      return make_error("several tasks exist (" + listing() + "); name one with `name`");
    name = known.front();
  }
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    return make_error("no task named `" + name + "`; the tasks are: " + listing() +
                      " (or zoo:ID for a zoo entry's contract, ID from search_zoo)");
  }
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second;
  auto task = tasks::load_task(tasks_dir_ / name);
  if (!task) return task.error();
  auto shared = std::make_shared<const tasks::Task>(std::move(task).value());
  loaded_[name] = shared;
  return shared;
}

}  // namespace kiln::tools
