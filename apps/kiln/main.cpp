// kiln: a compiler harness for agents that write GPU kernels.
#include <spdlog/spdlog.h>

#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  using namespace kiln::cli;
  CLI::App app{
      "kiln: a compiler harness for agents that write and optimize GPU kernels, served over MCP"};
  app.set_version_flag("--version", version());
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--tasks-dir", global.tasks_dir,
                 "folder of task bundles (default: KILN_TASKS_DIR, then the bundled tasks)");
  app.add_option("--task", global.task,
                 "the task used when a call names none (default: fp16_gemm)");
  app.add_option("--log-level", global.log_level, "stderr log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));

  Runner mcp = add_mcp_command(app, global);
  Runner call = add_call_command(app, global);
  Runner tasks = add_tasks_command(app, global);
  Runner task = add_task_command(app, global);
  Runner kb = add_kb_command(app, global);
  Runner runner = add_runner_command(app, global);
  Runner setup = add_setup_command(app, global);
  Runner frontier = add_frontier_command(app, global);
  Runner report = add_report_command(app, global);
  Runner replay = add_replay_command(app, global);
  Runner trace = add_trace_command(app, global);

  CLI11_PARSE(app, argc, argv);
  setup_logging(global.log_level);
  try {
    if (app.got_subcommand("mcp")) return mcp();
    if (app.got_subcommand("call")) return call();
    if (app.got_subcommand("tasks")) return tasks();
    if (app.got_subcommand("task")) return task();
    if (app.got_subcommand("kb")) return kb();
    if (app.got_subcommand("runner")) return runner();
    if (app.got_subcommand("setup")) return setup();
    if (app.got_subcommand("frontier")) return frontier();
    if (app.got_subcommand("report")) return report();
    if (app.got_subcommand("replay")) return replay();
    if (app.got_subcommand("trace")) return trace();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  return 2;
}
