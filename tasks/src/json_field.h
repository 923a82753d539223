// task.json is read with kiln_base's JsonField (kiln/base/json_field.h), whose messages point
// at tasks/FORMAT.md. Internal to kiln_tasks.
#pragma once

#include <nlohmann/json.hpp>

#include "kiln/base/json_field.h"

namespace kiln::tasks {

using kiln::JsonField;
// Thrown while reading a task file and caught in load_task, which turns it into
// "FILE: FIELD: PROBLEM". Never leaves the library.
using FieldError = kiln::JsonFieldError;

// The root of a task.json document, its hints naming tasks/FORMAT.md.
JsonField task_document(const nlohmann::json& document);

}  // namespace kiln::tasks
