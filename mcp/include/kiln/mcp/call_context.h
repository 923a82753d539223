// What a handler can do while it works: report progress, log to the client,
// and notice that the client cancelled the request.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "kiln/base/result.h"
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

  // Whether the call may leave its work running in the background when it outlasts its wait
  // budget (long_call.h): true for a tools/call of a session, false for `kiln call` and tests,
  // which wait for the whole work.
  bool may_background() const { return may_background_; }
  void allow_background() { may_background_ = true; }

  // What the client sent for a multi round-trip request (input_required.h); empty on
  // a first call, and can_ask is false where the revision has no such results.
  const ClientInput& input() const { return input_; }
  void set_input(ClientInput input) { input_ = std::move(input); }

  // A handler may ask the client mid-work, `input_requests` being key -> {"method", "params"}
  // (sampling/createMessage, elicitation/create, roots/list); ask() returns the responses by
  // key. Inside a task (tasks.h) the task shows input_required until tasks/update answered
  // every key; in a tools/call of a 2025 session kiln sends the client JSON-RPC requests and
  // waits for its responses (client_requests.h). An error, saying why, where the call cannot
  // ask (a stateless 2026-07-28 request asks through input-required results instead), when the
  // client lacks the capability, answered with an error or not in time, or the call was
  // cancelled meanwhile.
  using Asker = std::function<Result<nlohmann::json>(const nlohmann::json& input_requests)>;
  void set_asker(Asker asker) { asker_ = std::move(asker); }
  Result<nlohmann::json> ask(const nlohmann::json& input_requests);

  // Tells the sessions subscribed to `uri` that the resource changed (resources/subscribe);
  // nothing where no one listens, as in `kiln call` and tests.
  using ResourceChanged = std::function<void(const std::string& uri)>;
  void set_resource_changed(ResourceChanged announce) { resource_changed_ = std::move(announce); }
  void resource_changed(const std::string& uri) const {
    if (resource_changed_) resource_changed_(uri);
  }

  // notifications/progress, only when the client sent a progressToken; a
  // progress value that does not increase is dropped (the spec requires increase).
  void progress(double done, std::optional<double> total = std::nullopt,
                const std::string& message = "");

  // notifications/message, when `level` is at or above the client's logging/setLevel.
  void log(LogLevel level, const std::string& logger, const nlohmann::json& data);

  // Keeps a long call visibly alive: while the returned object lives, a progress notification
  // ("working, N s") goes out whenever `interval` passed without one, so a client that resets
  // its timeout on progress never gives up on a call that is still working. Nothing is sent
  // without a progressToken. The session holds one around every tools/call.
  class Heartbeat {
   public:
    Heartbeat(CallContext& context, std::chrono::milliseconds interval);
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

   private:
    CallContext& context_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
  };

 private:
  using Clock = std::chrono::steady_clock;
  // A progress notification if `interval` passed since the last one (or the call's start).
  void beat(std::chrono::milliseconds interval);
  void send_progress(double done, std::optional<double> total, const std::string& message);

  Sender send_;
  nlohmann::json progress_token_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::shared_ptr<std::atomic<LogLevel>> min_level_;
  std::mutex progress_mutex_;  // the handler's progress and the heartbeat's, one at a time
  double last_progress_ = -1;
  Clock::time_point started_ = Clock::now();
  Clock::time_point last_sent_ = started_;
  ClientInput input_;
  Asker asker_;
  ResourceChanged resource_changed_;
  bool may_background_ = false;
};

}  // namespace kiln::mcp
