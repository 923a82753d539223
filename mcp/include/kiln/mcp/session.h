// One MCP session: lifecycle, version negotiation, dispatch of requests and
// notifications, and the requests in flight. Tool calls run on worker threads,
// so a long call never blocks ping or a cancellation.
//
// Two eras meet here. A request that carries the 2026-07-28 _meta (or is
// server/discover) is answered on its own, under the ProtocolContext read from
// it; every other request belongs to the initialize era and is answered under
// the context initialize fixed. Feature methods are shared (feature_methods.h).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "kiln/mcp/client_requests.h"
#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/log_level.h"
#include "kiln/mcp/outbox.h"
#include "kiln/mcp/protocol_context.h"
#include "kiln/mcp/server.h"
#include "kiln/mcp/worker_threads.h"

namespace kiln::mcp {

class Session {
 public:
  Session(const Server& server, Outbox& outbox);
  ~Session();  // cancels what is in flight and waits for the workers
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One message or, where the negotiated revision allows, a batch (an array).
  void handle(const json& value);

  bool initialized() const { return initialized_.load(); }
  std::string protocol_version() const;

  // Cancels every request in flight (transport closed) and waits for workers.
  void shutdown();
  // Waits for the requests in flight to finish and send their responses.
  void drain() { workers_.join_all(); }

 private:
  struct InFlight {
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    std::atomic<bool> answered{false};
  };

  void handle_one(const json& value);
  void handle_request(const Message& message);
  void handle_notification(const Message& message);
  ProtocolContext session_context() const;
  // Both throw RpcFailure for JSON-RPC errors.
  json dispatch_initialize_era(const Message& message);
  json dispatch_stateless(const Message& message, const ProtocolContext& context);
  json initialize(const json& params);
  json discover() const;
  void start_tool_call(const Message& message, const ProtocolContext& context);
  // A tools/call that becomes a task (tasks.h) is answered here with its CreateTaskResult;
  // false when it runs in place. Throws RpcFailure (-32021) for a task-only tool called by a
  // client without the tasks extension.
  bool start_task(const Message& message, const Tool& tool, const ProtocolContext& context);
  void answer(const json& id, std::optional<json> response);
  // resources/subscribe and resources/unsubscribe (initialize era); both answer {}.
  json subscribe(const json& params, bool on);
  void resource_changed(const std::string& uri);

  const Server& server_;
  Outbox& outbox_;
  std::atomic<bool> initialize_seen_{false};
  std::atomic<bool> initialized_{false};
  mutable std::mutex
      mutex_;  // guards protocol_version_, client_capabilities_, in_flight_, subscribed_
  std::string protocol_version_;
  json client_capabilities_ = json::object();
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;
  std::set<std::string> subscribed_;  // resource URIs (resources/subscribe)
  ClientRequests client_requests_;    // what tools/call asked the client (2025 revisions)
  uint64_t change_listener_ = 0;      // on server_.resources().changes()
  WorkerThreads workers_;             // tools/call
  std::shared_ptr<std::atomic<LogLevel>> log_level_ =
      std::make_shared<std::atomic<LogLevel>>(LogLevel::kInfo);
};

}  // namespace kiln::mcp
