// The subcommands of `kiln`; each adds itself to the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

#include "settings.h"

namespace kiln::cli {

// Each returns a function that runs the subcommand once parsed (its exit code).
using Runner = std::function<int()>;

Runner add_mcp_command(CLI::App& app, const GlobalOptions& global);
Runner add_call_command(CLI::App& app, const GlobalOptions& global);
Runner add_tasks_command(CLI::App& app, const GlobalOptions& global);
Runner add_task_command(CLI::App& app, const GlobalOptions& global);
Runner add_kb_command(CLI::App& app, const GlobalOptions& global);
Runner add_runner_command(CLI::App& app, const GlobalOptions& global);
Runner add_setup_command(CLI::App& app, const GlobalOptions& global);
Runner add_frontier_command(CLI::App& app, const GlobalOptions& global);
Runner add_report_command(CLI::App& app, const GlobalOptions& global);
Runner add_replay_command(CLI::App& app, const GlobalOptions& global);
Runner add_trace_command(CLI::App& app, const GlobalOptions& global);

}  // namespace kiln::cli
