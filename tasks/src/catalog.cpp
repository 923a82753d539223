// load_catalog: every bundle under a tasks folder, in name order.
#include <algorithm>

#include "kiln/tasks/task.h"

namespace kiln::tasks {

TaskCatalog load_catalog(const std::filesystem::path& root) {
  TaskCatalog catalog;
  std::error_code error;
  std::vector<std::filesystem::path> bundles;
  std::filesystem::directory_iterator it(root, error);
  if (error) {
    catalog.broken.emplace_back(
        root, make_error("cannot list tasks in " + root.string() + ": " + error.message() +
                         "; point kiln at the tasks folder"));
    return catalog;
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) break;
    std::error_code entry_error;
    if (it->is_directory(entry_error) &&
        std::filesystem::is_regular_file(it->path() / "task.json", entry_error)) {
      bundles.push_back(it->path());
    }
  }
  // Directory order is unspecified; sort so listings and hashes of the catalog are stable.
  std::sort(bundles.begin(), bundles.end(),
            [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  for (const auto& bundle : bundles) {
    auto task = load_task(bundle);
    if (task) {
      catalog.tasks.push_back(std::move(*task));
    } else {
      catalog.broken.emplace_back(bundle, task.error());
    }
  }
  return catalog;
}

}  // namespace kiln::tasks
