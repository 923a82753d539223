#include "kiln/mcp/call_context.h"

#include <algorithm>

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

Result<json> CallContext::ask(const json& input_requests) {
  if (asker_) return asker_(input_requests);
  return make_error(
      "this call cannot ask the client: kiln asks inside a tools/call of a 2025 session or a "
      "task of the tasks extension; a 2026-07-28 request asks through an input_required result");
}

void CallContext::progress(double done, std::optional<double> total, const std::string& message) {
  std::lock_guard lock(progress_mutex_);
  send_progress(done, total, message);
}

void CallContext::send_progress(double done, std::optional<double> total,
                                const std::string& message) {
  if (progress_token_.is_null() || done <= last_progress_) return;
  last_progress_ = done;
  last_sent_ = Clock::now();
  nlohmann::json params{{"progressToken", progress_token_}, {"progress", done}};
  if (total) params["total"] = *total;
  if (!message.empty()) params["message"] = message;
  send_(make_notification("notifications/progress", std::move(params)));
}

void CallContext::beat(std::chrono::milliseconds interval) {
  std::lock_guard lock(progress_mutex_);
  const Clock::time_point now = Clock::now();
  if (progress_token_.is_null() || now - last_sent_ < interval) return;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - started_).count();
  // A step far below the handler's own (whole workloads, or thousandths), so a later
  // notification of the handler's still increases.
  send_progress(std::max(last_progress_, 0.0) + 1e-6, std::nullopt,
                "working, " + std::to_string(seconds) + " s");
}

CallContext::Heartbeat::Heartbeat(CallContext& context, std::chrono::milliseconds interval)
    : context_(context) {
  if (context.progress_token_.is_null()) return;  // nothing would be sent
  // Woken at a fraction of the interval, so a beat is late by that at most.
  const auto tick = std::max(std::chrono::milliseconds(1), interval / 4);
  thread_ = std::thread([this, interval, tick] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, tick, [this] { return stop_; })) {
      lock.unlock();
      context_.beat(interval);
      lock.lock();
    }
  });
}

CallContext::Heartbeat::~Heartbeat() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CallContext::log(LogLevel level, const std::string& logger, const nlohmann::json& data) {
  if (!min_level_ || level < min_level_->load()) return;
  send_(make_notification("notifications/message",
                          {{"level", log_level_name(level)}, {"logger", logger}, {"data", data}}));
}

}  // namespace kiln::mcp
