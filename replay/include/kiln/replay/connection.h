// One connection to the server a session is replayed against: messages out, messages in. The
// stdio one (stdio_connection.h) runs a server as a child; the HTTP one (http_connection.h)
// posts to a running one. The replay (replayer.h) drives either, and a test drives a fake.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kiln/base/result.h"

namespace kiln::replay {

using Clock = std::chrono::steady_clock;

class Connection {
 public:
  virtual ~Connection() = default;
  // One message (an object, or an array for a batch).
  virtual Status send(const nlohmann::json& message) = 0;
  // Text as it is (a recording's raw text, which was not JSON).
  virtual Status send_raw(const std::string& text) = 0;
  // The next message from the server, waiting until `deadline`; nullopt at the deadline or
  // once nothing more can come (closed() then says why). A message that was not JSON arrives
  // as a JSON string holding the text.
  virtual std::optional<nlohmann::json> receive(Clock::time_point deadline) = 0;
  // Why nothing more will come ("kiln exited with status 1; its stderr ends: ..."); empty
  // while the connection is open.
  virtual std::string closed() = 0;
  // Ends the session (stdin closed, or DELETE of the HTTP session) and lets the server go.
  virtual void finish() = 0;
};

// The messages that arrived and not yet received, for a connection whose readers are threads.
class Inbox {
 public:
  void push(nlohmann::json message);
  // Marks the end: receive() returns what is queued, then nullopt at once.
  void close(std::string why);
  std::optional<nlohmann::json> pop(Clock::time_point deadline);
  std::string closed() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<nlohmann::json> messages_;
  std::optional<std::string> closed_;
};

}  // namespace kiln::replay
