#include "kiln/mcp/http_exchange.h"

#include "kiln/mcp/json_rpc.h"

namespace kiln::mcp {

Exchange::Exchange(const json& body, bool sse_allowed)
    : batch_(body.is_array()), sse_allowed_(sse_allowed) {
  auto note = [this](const json& message) {
    if (!message.is_object()) return;
    auto method = message.find("method");
    auto id = message.find("id");
    if (method == message.end() || !method->is_string() || id == message.end()) return;
    if (id->is_string() || id->is_number_integer()) requested_.insert(id_key(*id));
  };
  if (batch_) {
    for (const auto& item : body) note(item);
  } else {
    note(body);
  }
  pending_ = requested_;
}

void Exchange::push_notification(json notification) {
  if (!sse_allowed_) return;
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(notification));
  saw_notification_ = true;
  changed_.notify_all();
}

void Exchange::finish(const std::string& key, std::optional<json> response) {
  std::lock_guard lock(mutex_);
  if (!key.empty()) pending_.erase(key);
  if (response) {
    responses_.push_back(*response);
    events_.push_back(std::move(*response));
  }
  changed_.notify_all();
}

Exchange::FirstEvent Exchange::wait_first() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return pending_.empty() || saw_notification_; });
  if (saw_notification_) return FirstEvent::kStream;
  return responses_.empty() ? FirstEvent::kNothing : FirstEvent::kAllResponses;
}

json Exchange::json_body() {
  std::lock_guard lock(mutex_);
  if (batch_) return json(responses_);
  return responses_.empty() ? json(nullptr) : responses_.front();
}

bool Exchange::next_event(json& event) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !events_.empty() || pending_.empty(); });
  if (events_.empty()) return false;
  event = std::move(events_.front());
  events_.pop_front();
  return true;
}

}  // namespace kiln::mcp
