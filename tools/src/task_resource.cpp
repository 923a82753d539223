// kiln://task: the task contract as a resource (the same JSON as get_task).
#include "kiln/tasks/task.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

mcp::Resource make_task_resource(std::shared_ptr<TaskSource> source) {
  mcp::Resource resource;
  resource.uri = "kiln://task";
  resource.name = "task";
  resource.title = "Task contract";
  resource.description = "The contract of this run's task (the same JSON get_task returns).";
  resource.mime_type = "application/json";
  resource.read = [source]() -> Result<mcp::ResourceContents> {
    auto task = source->get("");
    if (!task) return task.error();
    return mcp::ResourceContents{"application/json", tasks::to_json(**task).dump(2)};
  };
  return resource;
}

}  // namespace kiln::tools
