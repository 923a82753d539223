#include "kiln/mcp/resource_changes.h"

namespace kiln::mcp {

uint64_t ResourceChanges::add_listener(Listener listener) {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  listeners_[id] = std::move(listener);
  return id;
}

void ResourceChanges::remove_listener(uint64_t id) {
  std::lock_guard lock(mutex_);
  listeners_.erase(id);
}

void ResourceChanges::changed(const std::string& uri) {
  std::lock_guard lock(mutex_);
  for (const auto& [id, listener] : listeners_) listener(uri);
}

}  // namespace kiln::mcp
