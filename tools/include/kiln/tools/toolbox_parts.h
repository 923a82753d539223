// The resources and prompts of the toolbox, one factory per file.
#pragma once

#include <filesystem>
#include <memory>

#include "kiln/mcp/prompt_registry.h"
#include "kiln/mcp/resource_registry.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

mcp::Resource make_task_resource(std::shared_ptr<TaskSource> source);
mcp::Prompt make_optimize_prompt(std::shared_ptr<TaskSource> source, std::filesystem::path run_dir);

}  // namespace kiln::tools
