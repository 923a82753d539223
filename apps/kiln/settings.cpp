#include "settings.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "kiln/base/env.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {
constexpr const char* kDefaultTask = "fp16_gemm";
}

std::string version() { return KILN_VERSION_STRING; }

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("kiln");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

fs::path resolve_tasks_dir(const GlobalOptions& options) {
  if (!options.tasks_dir.empty()) return options.tasks_dir;
  if (auto dir = env_value("KILN_TASKS_DIR")) return *dir;
  if (fs::exists(fs::path(KILN_SOURCE_TASKS_DIR) / "fp16_gemm" / "task.json"))
    return KILN_SOURCE_TASKS_DIR;
  std::error_code error;
  fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return exe.parent_path().parent_path() / "share" / "kiln" / "tasks";
}

Result<std::unique_ptr<mcp::Server>> make_server(const GlobalOptions& options,
                                                 const fs::path& run_dir, bool test_tools,
                                                 bool conformance_fixtures) {
  mcp::ServerInfo info;
  info.version = version();
  info.instructions =
      "kiln is the harness for this GPU-kernel run: it owns correctness and timing. Start with "
      "get_task; "
      "the optimize prompt has the full workflow.";
  auto server = std::make_unique<mcp::Server>(std::move(info));
  tools::ToolboxConfig config;
  config.tasks_dir = resolve_tasks_dir(options);
  config.run_dir = run_dir;
  // With no --task, the flagship task is the default, so `kiln call get_task`
  // and the demo work on embedded defaults; a run directory names its own.
  config.default_task = options.task.empty() ? std::string(kDefaultTask) : options.task;
  config.test_tools = test_tools;
  config.conformance_fixtures = conformance_fixtures;
  if (auto status = tools::register_toolbox(*server, config); !status) return status.error();
  return server;
}

}  // namespace kiln::cli
