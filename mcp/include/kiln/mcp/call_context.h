// What a handler can do while it works: report progress, log to the client,
// and notice that the client cancelled the request.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kiln/mcp/input_required.h"
#include "kiln/mcp/log_level.h"

namespace kiln::mcp {

class CallContext {
 public:
  using Sender = std::function<void(nlohmann::json notification)>;

  // `send` delivers a notification that belongs to this request; `progress_token`
  // is null when the client asked for no progress; a null `min_level` sends no
  // log notifications at all (a stateless request that set no logLevel).
  CallContext(Sender send, nlohmann::json progress_token,
              std::shared_ptr<std::atomic<bool>> cancelled,
              std::shared_ptr<std::atomic<LogLevel>> min_level);

  // A context that sends nothing and is never cancelled (for `kiln call`, tests).
  static CallContext detached();

  bool cancelled() const { return cancelled_->load(); }

  // What the client sent for a multi round-trip request (input_required.h); empty on
  // a first call, and can_ask is false where the revision has no such results.
  const ClientInput& input() const { return input_; }
  void set_input(ClientInput input) { input_ = std::move(input); }

  // notifications/progress, only when the client sent a progressToken; a
  // progress value that does not increase is dropped (the spec requires increase).
  void progress(double done, std::optional<double> total = std::nullopt,
                const std::string& message = "");

  // notifications/message, when `level` is at or above the client's logging/setLevel.
  void log(LogLevel level, const std::string& logger, const nlohmann::json& data);

 private:
  Sender send_;
  nlohmann::json progress_token_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::shared_ptr<std::atomic<LogLevel>> min_level_;
  double last_progress_ = -1;
  ClientInput input_;
};

}  // namespace kiln::mcp
