// Pieces of the task.json reader that the zoo-task reader (zoo_task.cpp) shares, so a zoo
// entry's test.signature is read and checked exactly as a bundle's signature is. Internal to
// kiln_tasks; each throws FieldError (json_field.h) naming the field.
#pragma once

#include <string>
#include <vector>

#include "json_field.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {

// signature.{inputs,outputs,scalars} into task.tensors and task.scalars.
void read_task_signature(const JsonField& field, const std::vector<std::string>& dims, Task& task);
// Every shape, scalar, flops and bytes expression evaluates at every workload, to positive
// extents; `list_path` names the list in messages ("workloads").
void check_task_workloads(const Task& task, const std::vector<Workload>& workloads,
                          const std::string& list_path);
// nlohmann's exception text without its "[json.exception...] " prefix.
std::string json_problem(const std::string& what);

}  // namespace kiln::tasks
