#include "kiln/mcp/call_context.h"

#include "kiln/mcp/json_rpc.h"

namespace kiln::mcp {

CallContext::CallContext(Sender send, nlohmann::json progress_token,
                         std::shared_ptr<std::atomic<bool>> cancelled,
                         std::shared_ptr<std::atomic<LogLevel>> min_level)
    : send_(std::move(send)),
      progress_token_(std::move(progress_token)),
      cancelled_(std::move(cancelled)),
      min_level_(std::move(min_level)) {}

CallContext CallContext::detached() {
  return CallContext([](nlohmann::json) {}, nullptr, std::make_shared<std::atomic<bool>>(false),
                     std::make_shared<std::atomic<LogLevel>>(LogLevel::kEmergency));
}

void CallContext::progress(double done, std::optional<double> total, const std::string& message) {
  if (progress_token_.is_null() || done <= last_progress_) return;
  last_progress_ = done;
  nlohmann::json params{{"progressToken", progress_token_}, {"progress", done}};
  if (total) params["total"] = *total;
  if (!message.empty()) params["message"] = message;
  send_(make_notification("notifications/progress", std::move(params)));
}

void CallContext::log(LogLevel level, const std::string& logger, const nlohmann::json& data) {
  if (!min_level_ || level < min_level_->load()) return;
  send_(make_notification("notifications/message",
                          {{"level", log_level_name(level)}, {"logger", logger}, {"data", data}}));
}

}  // namespace kiln::mcp
