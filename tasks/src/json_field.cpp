#include "json_field.h"

namespace kiln::tasks {

JsonField task_document(const nlohmann::json& document) {
  return JsonField(document, "", "tasks/FORMAT.md");
}

}  // namespace kiln::tasks
