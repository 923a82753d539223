// One POST's worth of replies: the requests it carried, the notifications and
// responses the session produced for them, and whether they go back as one
// JSON body or as an SSE stream (chosen by what arrives first).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::mcp {

class Exchange {
 public:
  // `sse_allowed` is false when the client's Accept header excludes
  // text/event-stream; notifications are then dropped and JSON is returned.
  Exchange(const nlohmann::json& body, bool sse_allowed);

  // Keys (id_key) of the requests in the body, which this exchange waits for.
  const std::set<std::string>& pending_keys() const { return requested_; }
  bool has_requests() const { return !requested_.empty(); }
  bool is_batch() const { return batch_; }

  void push_notification(nlohmann::json notification);
  // A request ended (key from id_key; empty for a reply to an unreadable
  // message); `response` is nullopt when it was cancelled.
  void finish(const std::string& key, std::optional<nlohmann::json> response);

  enum class FirstEvent { kNothing, kAllResponses, kStream };
  // Blocks until every request is answered (kAllResponses, or kNothing when no
  // reply exists) or a notification arrives first (kStream).
  FirstEvent wait_first();

  // The JSON body: one response, or an array of them for a batch.
  nlohmann::json json_body();

  // Stream mode: the next event, blocking; false once everything was sent.
  bool next_event(nlohmann::json& event);

 private:
  bool batch_ = false;
  bool sse_allowed_ = true;
  std::set<std::string> requested_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::string> pending_;
  std::vector<nlohmann::json> responses_;
  std::deque<nlohmann::json> events_;
  bool saw_notification_ = false;
};

}  // namespace kiln::mcp
