// Requests kiln sends to the client while a tools/call works, in the 2025 revisions
// (sampling/createMessage, elicitation/create, roots/list), and the client's responses,
// matched by id to the call that waits for them. Over stdio the request is a line on stdout;
// over Streamable HTTP it goes out on the call's SSE response stream, and the response comes
// back in a POST of its own. (Revision 2026-07-28 asks through input-required results
// instead, input_required.h; a task of the tasks extension through tasks/update, tasks.h.)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/json_rpc.h"

namespace kiln::mcp {

// The client capability (initialize's capabilities) that a server-to-client method needs;
// empty for a method kiln does not send.
std::string capability_for_client_method(const std::string& method);

class ClientRequests {
 public:
  using Send = std::function<void(const nlohmann::json& request)>;

  // A request the client has not answered after `timeout` is given up on.
  explicit ClientRequests(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  // Sends every one of `input_requests` (key -> {"method", "params"}, the shape of
  // input_required.h) through `send`, each with an id of its own, and waits for every
  // response: their results by key. An error, saying which and what to do, when the client
  // did not declare the capability a method needs (`client_capabilities`, from initialize),
  // answered with an error, did not answer within the timeout, or `cancelled` became true
  // (the call was cancelled, or the session ends). Requests given up on are cancelled at the
  // client with notifications/cancelled.
  Result<nlohmann::json> ask(const nlohmann::json& input_requests,
                             const nlohmann::json& client_capabilities, const Send& send,
                             const std::atomic<bool>& cancelled);

  // A response from the client; false when it answers no request that still waits (kiln gave
  // up on it, or never sent it).
  bool deliver(const Message& response);

 private:
  struct Pending {
    nlohmann::json id;   // the id kiln gave the request ("kiln-N")
    std::string key;     // the input request's key
    std::string method;  // what was asked, for the messages
    bool answered = false;
    Message response;
  };
  using Waiting = std::map<std::string, std::shared_ptr<Pending>>;  // by id_key

  Result<nlohmann::json> wait(const Waiting& waiting, const Send& send,
                              const std::atomic<bool>& cancelled);
  void give_up(const Waiting& waiting, const Send& send, const std::string& reason);

  std::chrono::milliseconds timeout_;
  std::mutex mutex_;  // guards pending_, next_id_
  std::condition_variable answered_;
  std::map<std::string, std::shared_ptr<Pending>> pending_;  // by id_key
  uint64_t next_id_ = 1;
};

}  // namespace kiln::mcp
