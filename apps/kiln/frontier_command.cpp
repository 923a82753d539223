// kiln frontier show [RUN]: a run's frontier and recent results, as list_frontier shows them.
#include <iostream>

#include "commands.h"

namespace kiln::cli {

namespace fs = std::filesystem;

Runner add_frontier_command(CLI::App& app, const GlobalOptions& global) {
  auto* command = app.add_subcommand("frontier", "A run's frontier");
  command->require_subcommand(1);
  auto* show = command->add_subcommand(
      "show", "Print the run's frontier members and recent results (list_frontier's text)");
  auto run = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(10);
  auto as_json = std::make_shared<bool>(false);
  show->add_option("run", *run,
                   "the run directory (default: this folder, or its parent in a worktree)");
  show->add_option("--limit", *limit, "recent results to show")->check(CLI::Range(1, 50));
  show->add_flag("--json", *as_json, "print list_frontier's structured result as JSON");
  return [&global, run, limit, as_json]() -> int {
    fs::path dir = run->empty() ? fs::current_path() : fs::path(*run);
    if (run->empty() && !fs::exists(dir / "manifest.json") &&
        fs::exists(dir.parent_path() / "manifest.json"))
      dir = dir.parent_path();
    if (!fs::exists(dir / "manifest.json")) {
      std::cerr << "kiln frontier show: " << dir.string()
                << " is not a run directory (no manifest.json); pass the folder `kiln setup` "
                   "made\n";
      return 2;
    }
    auto server = make_server(global, fs::absolute(dir), false);
    if (!server) {
      std::cerr << "kiln frontier show: " << server.error().message << "\n";
      return 1;
    }
    auto context = mcp::CallContext::detached();
    auto result = (*server)->tools().run("list_frontier", {{"limit", *limit}}, context);
    if (*as_json && !result.is_error)
      std::cout << result.structured.dump(2) << "\n";
    else
      (result.is_error ? std::cerr : std::cout) << result.text;
    return result.is_error ? 1 : 0;
  };
}

}  // namespace kiln::cli
