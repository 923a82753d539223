// The resources and prompts of the toolbox, one factory per file.
#pragma once

#include <filesystem>
#include <memory>

#include "kiln/kb/kb_service.h"
#include "kiln/mcp/prompt_registry.h"
#include "kiln/mcp/resource_registry.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

class FrontierSource;  // kiln/tools/frontier_source.h

mcp::Resource make_task_resource(std::shared_ptr<TaskSource> source);
mcp::Resource make_frontier_resource(std::shared_ptr<FrontierSource> frontier);  // kiln://frontier
mcp::Prompt make_optimize_prompt(std::shared_ptr<TaskSource> source, std::filesystem::path run_dir);
mcp::ResourceTemplate make_zoo_resource_template(
    std::shared_ptr<kb::KbService> kb);  // kiln://zoo/{id}/{file}
mcp::ResourceTemplate make_ptx_resource_template(
    std::shared_ptr<kb::KbService> kb);  // kiln://ptx/{section}

}  // namespace kiln::tools
