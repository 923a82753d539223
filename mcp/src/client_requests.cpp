#include "kiln/mcp/client_requests.h"

#include <spdlog/spdlog.h>

namespace kiln::mcp {
namespace {

// How often a wait looks at the call's cancellation flag (set by notifications/cancelled or
// the session's end), which has no condition variable of its own.
constexpr std::chrono::milliseconds kCancelPoll{20};

std::string duration_text(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 != 0) return std::to_string(duration.count()) + " ms";
  return std::to_string(duration.count() / 1000) + " s";
}

}  // namespace

std::string capability_for_client_method(const std::string& method) {
  if (method == "sampling/createMessage") return "sampling";
  if (method == "elicitation/create") return "elicitation";
  if (method == "roots/list") return "roots";
  return "";
}

Result<json> ClientRequests::ask(const json& input_requests, const json& client_capabilities,
                                 const Send& send, const std::atomic<bool>& cancelled) {
  if (!input_requests.is_object() || input_requests.empty())
    return make_error("kiln bug: a request to the client needs {key: {method, params}}");
  // Every request is checked before any is sent, so a refusal leaves the client untouched.
  for (const auto& [key, request] : input_requests.items()) {
    const std::string method = request.is_object() ? request.value("method", "") : "";
    const std::string capability = capability_for_client_method(method);
    if (capability.empty())
      return make_error("kiln bug: input request `" + key + "` names method `" + method +
                        "`, which kiln does not send to clients");
    if (!client_capabilities.is_object() || !client_capabilities.contains(capability) ||
        client_capabilities[capability].is_null())
      return make_error("the client did not declare the `" + capability +
                        "` capability at initialize, so kiln cannot send it " + method +
                        "; use a client that supports " + capability +
                        " (declared under capabilities in initialize)");
  }
  Waiting waiting;
  std::vector<json> messages;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, request] : input_requests.items()) {
      auto pending = std::make_shared<Pending>();
      pending->key = key;
      pending->method = request["method"].get<std::string>();
      pending->id = "kiln-" + std::to_string(next_id_++);
      json message{{"jsonrpc", "2.0"}, {"id", pending->id}, {"method", pending->method}};
      if (request.contains("params")) message["params"] = request["params"];
      pending_[id_key(pending->id)] = pending;
      waiting[id_key(pending->id)] = pending;
      messages.push_back(std::move(message));
    }
  }
  for (const auto& message : messages) send(message);
  return wait(waiting, send, cancelled);
}

Result<json> ClientRequests::wait(const Waiting& waiting, const Send& send,
                                  const std::atomic<bool>& cancelled) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto all_answered = [&waiting] {
    for (const auto& [id, pending] : waiting)
      if (!pending->answered) return false;
    return true;
  };
  std::unique_lock lock(mutex_);
  while (!all_answered()) {
    if (cancelled.load()) {
      lock.unlock();
      give_up(waiting, send, "the call was cancelled");
      return make_error("the call was cancelled while it waited for the client's answer");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string methods;
      for (const auto& [id, pending] : waiting)
        if (!pending->answered) methods += (methods.empty() ? "" : ", ") + pending->method;
      lock.unlock();
      give_up(waiting, send, "no answer within " + duration_text(timeout_));
      return make_error("the client did not answer " + methods + " within " +
                        duration_text(timeout_) + "; answer kiln's requests, then call again");
    }
    answered_.wait_for(lock, kCancelPoll);
  }
  json results = json::object();
  for (const auto& [id, pending] : waiting) {
    pending_.erase(id);
    if (pending->response.error) {
      const RpcError& error = *pending->response.error;
      // The other answers are dropped with this one: the call cannot go on without it.
      for (const auto& [other, rest] : waiting) pending_.erase(other);
      return make_error("the client answered " + pending->method + " with error " +
                        std::to_string(error.code) + ": " + error.message);
    }
    results[pending->key] = pending->response.result;
  }
  return results;
}

void ClientRequests::give_up(const Waiting& waiting, const Send& send, const std::string& reason) {
  std::vector<json> unanswered;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, pending] : waiting) {
      if (!pending->answered) unanswered.push_back(pending->id);
      pending_.erase(key);
    }
  }
  for (const auto& id : unanswered)
    send(make_notification("notifications/cancelled", {{"requestId", id}, {"reason", reason}}));
}

bool ClientRequests::deliver(const Message& response) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(id_key(response.id));
  if (it == pending_.end() || it->second->answered) {
    spdlog::debug("a response for request {} that kiln does not wait for", id_key(response.id));
    return false;
  }
  it->second->answered = true;
  it->second->response = response;
  answered_.notify_all();
  return true;
}

}  // namespace kiln::mcp
