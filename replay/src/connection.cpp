#include "kiln/replay/connection.h"

namespace kiln::replay {

void Inbox::push(nlohmann::json message) {
  {
    std::lock_guard lock(mutex_);
    messages_.push_back(std::move(message));
  }
  ready_.notify_all();
}

void Inbox::close(std::string why) {
  {
    std::lock_guard lock(mutex_);
    if (!closed_) closed_ = std::move(why);
  }
  ready_.notify_all();
}

std::optional<nlohmann::json> Inbox::pop(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  ready_.wait_until(lock, deadline, [&] { return !messages_.empty() || closed_.has_value(); });
  if (messages_.empty()) return std::nullopt;
  nlohmann::json message = std::move(messages_.front());
  messages_.pop_front();
  return message;
}

std::string Inbox::closed() const {
  std::lock_guard lock(mutex_);
  return closed_.value_or("");
}

}  // namespace kiln::replay
