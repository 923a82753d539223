// kiln tasks list: the task bundles kiln can serve, with their hashes.
#include <iostream>

#include "commands.h"
#include "kiln/tasks/task.h"

namespace kiln::cli {

Runner add_tasks_command(CLI::App& app, const GlobalOptions& global) {
  auto* command = app.add_subcommand("tasks", "Task bundles");
  command->require_subcommand(1);
  command->add_subcommand(
      "list", "List the task bundles, with workload counts and hashes; report broken ones");
  return [&global]() -> int {
    auto dir = resolve_tasks_dir(global);
    auto catalog = tasks::load_catalog(dir);
    if (catalog.tasks.empty() && catalog.broken.empty()) {
      std::cerr << "kiln: no task bundles in " << dir.string()
                << "; use --tasks-dir or KILN_TASKS_DIR\n";
      return 1;
    }
    for (const auto& task : catalog.tasks) {
      std::cout << task.name << "\t" << task.title << "\t" << task.workloads.size()
                << " workloads\t" << task.arch << "\tsha256:" << task.sha256.substr(0, 12) << "\n";
    }
    for (const auto& [path, error] : catalog.broken) {
      std::cerr << "broken: " << path.string() << ": " << error.message << "\n";
    }
    return catalog.broken.empty() ? 0 : 1;
  };
}

}  // namespace kiln::cli
